"""The benchmark manifest: a small TOML file naming a benchmark's format and where its files are.

See benchmarks/MANIFEST.md for every key. Common keys:

    name = "my-bench"              # required
    format = "harbor"              # required: "harbor" or "swebench"
    labels = "labels.json"         # optional ground truth (scoring only; loaders never parse it)

    [[images]]                     # optional, any number: build this image locally
    name = "localhost/my-image:1"  # tasks whose image equals this name get the Containerfile
    containerfile = "environment/Containerfile"
    context = "environment"

All paths are relative to the folder holding the manifest.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from testjack_tui.errors import InputError
from testjack_tui.numbers import number
from testjack_tui.safe_paths import contained

FORMATS = ("harbor", "swebench")
MANIFEST_NAME = "benchmark.toml"


@dataclass(frozen=True)
class ImageSource:
    """A local build recipe for an image name tasks refer to."""

    name: str
    containerfile: Path
    context: Path
    # The build may reach package registries (npm, PyPI, Debian) to install the repo's own
    # dependencies; trial code never runs during it. Default: no network.
    build_network: bool = False


@dataclass
class Manifest:
    path: Path
    name: str
    format: str
    data: dict[str, Any]
    labels: Path | None = None
    images: dict[str, ImageSource] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent

    def resolve(self, value: str, key: str) -> Path:
        """A path the manifest names under `key`, resolved; it must stay inside the benchmark
        folder (the manifest's), or the manifest is refused naming the key."""
        return contained(self.root, self.root / value, key, self.path)

    @overload
    def get_str(self, key: str, default: str, *, required: bool = False) -> str: ...
    @overload
    def get_str(self, key: str, default: None = None, *, required: bool = False) -> str | None: ...

    def get_str(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.data.get(key, default)
        if value is None:
            if required:
                raise InputError(self.path, key, "missing (required)")
            return None
        if not isinstance(value, str) or not value:
            raise InputError(self.path, key, f"must be a non-empty string, got {value!r}")
        return value

    def get_paths(self, key: str, default: list[str] | None = None, *, required: bool = False) -> list[Path]:
        """A key holding one path or a list of paths; every path must exist."""
        value = self.data.get(key, default)
        if value is None:
            if required:
                raise InputError(self.path, key, "missing (required)")
            return []
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
            raise InputError(self.path, key, "must be a path or a list of paths")
        paths = [self.resolve(v, key) for v in items]
        for raw, path in zip(items, paths):
            if not path.exists():
                raise InputError(self.path, key, f"{raw!r} does not exist ({path})")
        return paths

    def get_number(self, key: str, default: float, kind: str) -> float:
        return number(self.data.get(key, default), self.path, key, kind)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; an unreadable or invalid file is an InputError naming it."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(path, None, "file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(path, None, "TOML nested too deeply to read") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise InputError(path, None, f"invalid TOML: {exc}") from None


def read_manifest(path: Path) -> Manifest:
    path = Path(path).resolve()
    data = read_toml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(path, "name", "missing or not a non-empty string")
    fmt = data.get("format")
    if fmt not in FORMATS:
        raise InputError(path, "format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")
    manifest = Manifest(path=path, name=name.strip(), format=fmt, data=data)
    labels = manifest.get_str("labels")
    if labels is not None:
        manifest.labels = manifest.resolve(labels, "labels")
    manifest.images = _read_images(manifest)
    return manifest


def _read_images(manifest: Manifest) -> dict[str, ImageSource]:
    entries = manifest.data.get("images", [])
    if not isinstance(entries, list):
        raise InputError(manifest.path, "images", "must be an array of tables ([[images]])")
    images: dict[str, ImageSource] = {}
    for i, entry in enumerate(entries):
        where = f"images[{i}]"
        if not isinstance(entry, dict):
            raise InputError(manifest.path, where, "must be a table")
        values = {}
        for key in ("name", "containerfile", "context"):
            value = entry.get(key)
            if not isinstance(value, str) or not value:
                raise InputError(manifest.path, f"{where}.{key}", "missing or not a non-empty string")
            values[key] = value
        if values["name"] in images:
            raise InputError(manifest.path, f"{where}.name", f"duplicate image name {values['name']!r}")
        containerfile = manifest.resolve(values["containerfile"], f"{where}.containerfile")
        context = manifest.resolve(values["context"], f"{where}.context")
        if not containerfile.is_file():
            raise InputError(manifest.path, f"{where}.containerfile", f"no such file: {containerfile}")
        if not context.is_dir():
            raise InputError(manifest.path, f"{where}.context", f"no such folder: {context}")
        network = entry.get("build_network", False)
        if not isinstance(network, bool):
            raise InputError(manifest.path, f"{where}.build_network", f"must be true or false, got {network!r}")
        images[values["name"]] = ImageSource(values["name"], containerfile, context, network)
    return images
