"""Benchmark loaders: files on disk -> `Benchmark` (tasks and trials). Never touches containers.

`load_benchmark(path)` accepts
- a manifest TOML file (`benchmark.toml`: `name`, `format = "harbor" | "swebench"`, and the
  format's source keys — see benchmarks/MANIFEST.md),
- a folder holding `benchmark.toml`,
- a bare Harbor tasks folder (a folder of task folders with `task.toml`), a single Harbor task
  folder, or a folder with `tasks/` (and optionally `jobs/`) but no manifest.

Fatal problems (unreadable manifest, a named source that does not exist) raise
`testjack_tui.errors.InputError`; a task or trial that cannot be loaded is listed in
`Benchmark.skipped` with the file, the field and the reason.
"""
from __future__ import annotations

from pathlib import Path

from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark

from .harbor import is_tasks_folder, load_harbor, load_tasks_folder
from .manifest import MANIFEST_NAME, read_manifest
from .swebench import load_swebench

BUNDLED_DIR = Path(__file__).resolve().parent

__all__ = ["load_benchmark", "bundled_benchmarks", "MANIFEST_NAME"]


def load_benchmark(path: str | Path) -> Benchmark:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(path, None, "no such file or folder")
    if path.is_dir():
        if (path / MANIFEST_NAME).is_file():
            path = path / MANIFEST_NAME
        elif is_tasks_folder(path):
            return load_tasks_folder(path)
        else:
            raise InputError(path, None, f"no {MANIFEST_NAME} here and no Harbor task folders (task.toml)")
    manifest = read_manifest(path)
    if manifest.format == "harbor":
        return load_harbor(manifest)
    return load_swebench(manifest)


def bundled_benchmarks() -> list[Path]:
    """Manifests of the benchmarks shipped with the package (the demo), sorted by folder name."""
    return sorted(p for p in BUNDLED_DIR.glob(f"*/{MANIFEST_NAME}") if p.is_file())
