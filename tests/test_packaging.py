"""What `pip install .` gives a user: one package, `testjack_tui`, that works on its own.

The repository's folders sandbox/, benchmarks/ and prompts/ install as `testjack_tui.sandbox`,
`testjack_tui.benchmarks` and `testjack_tui.prompts`; a generic top-level `sandbox` in a user's
site-packages would clash with anything else of that name. The wheel is built from the tracked
files and installed with --no-deps into a fresh virtualenv that sees this test environment's
packages (not its editable install of the checkout), then used from outside the repository so
nothing of the checkout leaks in. That every module the installed commands import is a declared
dependency (or one of theirs) is checked from the wheel's own metadata.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# One worker builds and installs the wheel (the module fixture, most of this file's time): spread
# over both, as pure tests are, each worker would build its own.
pytestmark = pytest.mark.xdist_group("pure-packaging")

ROOT = Path(__file__).resolve().parents[1]
NESTED = ("sandbox", "benchmarks", "prompts")


def _run(argv: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv python, venv bin dir, a working directory outside the checkout)."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "source"
    for name in _tracked_files():  # the tracked tree only: no build/, .venv or caches
        src, dst = ROOT / name, source / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, dst)
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(source)], cwd=base)
    wheel, = dist.glob("testjack_tui-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    # The dependencies come from this environment's site-packages, added as a plain path: its
    # .pth files (the editable install of the checkout among them) are not run.
    ours = [p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "textual").is_dir()]
    venv_site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          cwd=base).stdout.strip())
    (venv_site / "zz_test_environment.pth").write_text("".join(f"{p}\n" for p in ours))
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
         cwd=base, timeout=600)
    outside = base / "elsewhere"
    outside.mkdir()
    return wheel, python, venv / "bin", outside


def test_the_wheel_holds_one_top_level_package_with_every_tracked_file(installed):
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"testjack_tui"}
    expected = set()
    for name in _tracked_files():
        folder = name.split("/")[0]
        if folder == "testjack_tui" and not (ROOT / name).is_symlink():
            expected.add(name)
        elif folder in NESTED:
            expected.add(f"testjack_tui/{name}")
    missing = sorted(expected - names)
    assert not missing, f"not installed: {missing[:20]}"


def test_installed_package_has_no_generic_top_level_modules(installed):
    _, python, _, outside = installed
    probe = ("import importlib.util, json\n"
             "import testjack_tui.sandbox, testjack_tui.benchmarks, testjack_tui.prompts\n"
             f"print(json.dumps({{n: importlib.util.find_spec(n) is not None for n in {list(NESTED)!r}}}))\n")
    found = json.loads(_run([str(python), "-I", "-c", probe], cwd=outside).stdout)
    assert found == {name: False for name in NESTED}


def test_installed_command_runs_and_lists_the_bundled_demo(installed):
    _, python, bin_dir, outside = installed
    help_text = _run([str(bin_dir / "testjack-tui"), "--help"], cwd=outside).stdout
    assert "Audit the 'solved' trials" in help_text and "list" in help_text
    demo = _run([str(python), "-I", "-c", "from testjack_tui.benchmarks import bundled_benchmarks\n"
                 "print(bundled_benchmarks()[0].parent)"], cwd=outside).stdout.strip()
    assert Path(demo).is_relative_to(installed[2].parent), "the demo comes from the installed package"
    listing = json.loads(_run([str(bin_dir / "testjack-tui"), "list", "--json", demo], cwd=outside).stdout)
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.commands.list_cmd import summarize
    here = summarize(load_benchmark(ROOT / "benchmarks" / "demo"))
    assert listing["tasks"] == here["tasks"] and listing["totals"] == here["totals"] and not listing["skipped"]
    assert listing["totals"]["tasks"] >= 4
    # the prompt templates are package data of the installed package
    prompt = _run([str(python), "-I", "-c", "from testjack_tui import prompts\n"
                   "print(prompts.template_text('reviewer')[:40])"], cwd=outside).stdout
    assert prompt.strip()


DECLARED = r"""
import importlib.metadata as md, json, re, runpy, sys

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

def requires(dist):  # what a distribution needs, extras left out
    return {norm(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in (md.distribution(dist).requires or [])
            if "extra ==" not in r}

closure, todo = set(), ["testjack-tui"]
while todo:
    name = todo.pop()
    if name not in closure:
        closure.add(name)
        try:
            todo += requires(name)
        except md.PackageNotFoundError:  # a dependency for another platform or Python
            pass
for argv in (["--help"], ["list", "--json", sys.argv[1]]):
    sys.argv = ["testjack-tui", *argv]
    try:
        runpy.run_module("testjack_tui.cli", run_name="__main__")
    except SystemExit:
        pass
import testjack_tui.prompts, testjack_tui.tui.app  # noqa: the package data and the UI
owners = md.packages_distributions()
loaded = {m.split(".")[0] for m in list(sys.modules)} - set(sys.stdlib_module_names) - {"testjack_tui", "__main__"}
print(json.dumps(sorted(m for m in loaded if owners.get(m) and not {norm(d) for d in owners[m]} & closure)))
"""


def test_every_module_the_installed_commands_import_is_a_declared_dependency(installed):
    _, python, _, outside = installed
    demo = _run([str(python), "-I", "-c", "from testjack_tui.benchmarks import bundled_benchmarks\n"
                 "print(bundled_benchmarks()[0].parent)"], cwd=outside).stdout.strip()
    proc = _run([str(python), "-I", "-c", DECLARED, demo], cwd=outside)
    assert json.loads(proc.stdout.splitlines()[-1]) == [], "imported but not declared in pyproject's dependencies"


def test_no_module_is_imported_under_a_bare_folder_name():
    """Imports, `-m` command lines, monkeypatch targets and contracts name `testjack_tui.<folder>`
    only: the same file under two names would be two modules with two copies of their state."""
    proc = subprocess.run([sys.executable, str(ROOT / ".ci" / "nest_packages.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
