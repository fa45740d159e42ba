"""No product module over 600 lines (issue 37): a module that long does several jobs; split it
along them (see docs/architecture.md). Lines are counted as `wc -l` counts them (newlines), over
every module of the package, the linked sandbox/, benchmarks/ and prompts/ included and the demo
benchmark's repositories (not our code) left out."""
from __future__ import annotations

from pathlib import Path

from test_import_cycles import PACKAGE, ROOT, _modules

MAX_LINES = 600


def lines_of(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def too_long(package_dir: Path = PACKAGE, root: str = ROOT) -> dict[str, int]:
    """Module -> its lines, for every module over MAX_LINES."""
    counted = {name: lines_of(path) for name, (path, _) in _modules(package_dir, root).items()}
    return {name: n for name, n in counted.items() if n > MAX_LINES}


def test_no_product_module_passes_600_lines():
    assert len(_modules(PACKAGE, ROOT)) > 100  # the walk follows the linked folders (sandbox/ alone has dozens)
    found = too_long()
    assert not found, "over 600 lines (split them along their jobs): " + ", ".join(
        f"{name} ({n})" for name, n in sorted(found.items(), key=lambda item: -item[1]))


def test_a_module_of_601_lines_is_found_and_600_pass(tmp_path):
    """Counted like `wc -l`: newlines, so a last line without one does not count."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "long.py").write_text("x = 1\n" * 601)
    (pkg / "sub" / "fits.py").write_text("x = 1\n" * 600 + "y = 2")  # 600 by wc -l
    assert too_long(pkg, "pkg") == {"pkg.sub.long": 601}
