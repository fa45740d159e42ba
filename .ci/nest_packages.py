"""One import name for the folders sandbox/, benchmarks/ and prompts/: `testjack_tui.<folder>`.

The folders stay at the repository's top level, but they install (and import) only inside the
`testjack_tui` package (the links `testjack_tui/sandbox` -> `../sandbox` etc.), so a user's
site-packages gets no generic top-level `sandbox`, `benchmarks` or `prompts`. A module imported
under two names would be loaded twice, with two copies of its state; so every import, `-m`
command line, monkeypatch target, import-linter contract and dotted reference in the docs uses
the one name.

    python .ci/nest_packages.py           rewrite the tracked files that still use a bare name
    python .ci/nest_packages.py --check   list them and exit 1 (CI and tests/test_packaging.py)

Re-run it after merging code written against the bare names: it only touches what is left.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "testjack_tui"
NESTED = ("sandbox", "benchmarks", "prompts")
SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".sh", ""}
# Data, not our code: benchmark repositories, recorded jobs and scripted agent answers.
SKIP = ("benchmarks/demo/environment/", "benchmarks/demo/jobs/", "benchmarks/demo/tasks/",
        "benchmarks/demo/agent-scripts/", "tests/fixtures/", "tests/__snapshots__/",
        ".ci/nest_packages.py")
# Dotted names that are config keys (`[sandbox] backend`), not modules.
CONFIG_KEYS = ("sandbox.backend", "sandbox.ray_address")

_NAMES = "|".join(NESTED)
_IMPORT_RULES = [
    # from sandbox.core import X  ->  from testjack_tui.sandbox.core import X
    (re.compile(rf"^(\s*)from\s+({_NAMES})((?:\.\w+)*)(\s+import\b)", re.M),
     rf"\1from {PACKAGE}.\2\3\4"),
    # import sandbox.trailer as trailer  ->  import testjack_tui.sandbox.trailer as trailer
    (re.compile(rf"^(\s*)import\s+({_NAMES})((?:\.\w+)+\s+as\s+\w+)", re.M), rf"\1import {PACKAGE}.\2\3"),
    # import prompts [as p]  ->  from testjack_tui import prompts [as p]
    (re.compile(rf"^(\s*)import\s+({_NAMES})(\s+as\s+\w+)?[ \t]*$", re.M), rf"\1from {PACKAGE} import \2\3"),
    # python -m sandbox.base_image  ->  python -m testjack_tui.sandbox.base_image
    (re.compile(rf"(-m\s+[\"']?)({_NAMES})\b(?=\.)"), rf"\1{PACKAGE}.\2"),
]
# `import sandbox.core` without `as` binds `sandbox`: rewriting it would break its uses.
_UNFIXABLE = re.compile(rf"^\s*import\s+({_NAMES})\.\w+(?:\.\w+)*\s*(?:#.*)?$", re.M)


def _submodules(folder: str) -> set[str]:
    """The modules and subpackages of one nested folder, and the names its __init__ exports."""
    base = ROOT / folder
    names = {p.stem for p in base.glob("*.py") if p.stem != "__init__"}
    names |= {p.parent.name for p in base.glob("*/__init__.py")}
    init = base / "__init__.py"
    if init.exists():
        names |= set(re.findall(r'"([A-Z]\w+)"\s*:', init.read_text()))
    return names


def _dotted_rule() -> re.Pattern[str]:
    """`sandbox.t0.run_t0` in a docstring or a monkeypatch string, not `self.sandbox.exec(...)`."""
    alternatives = [rf"{folder}\.(?:{'|'.join(sorted(_submodules(folder)))})"
                    for folder in NESTED if _submodules(folder)]
    return re.compile(rf"(?<![\w./\-])(?:{'|'.join(alternatives)})\b")


def _tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if not name or name.startswith(SKIP) or path.is_symlink() or not path.is_file():
            continue
        if path.suffix in SUFFIXES or name in (".importlinter",):
            files.append(path)
    return files


def _rewrite_importlinter(text: str) -> str:
    """Module names in the contracts, one per line, and no root packages beyond ours."""
    text = re.sub(rf"^(\s+)({_NAMES})((?:\.\w+)*)\s*$", rf"\1{PACKAGE}.\2\3", text, flags=re.M)
    return re.sub(r"^(root_packages\s*=\s*\n(?:\s+\S+\n)*)", _only_our_root, text, flags=re.M)


def _only_our_root(match: re.Match[str]) -> str:
    lines = match.group(1).splitlines(keepends=True)
    kept = [line for line in lines[1:] if not line.strip().startswith(f"{PACKAGE}.")]
    return lines[0] + "".join(kept)


def rewrite(path: Path, text: str) -> str:
    if path.name == ".importlinter":
        return _rewrite_importlinter(text)
    for pattern, replacement in _IMPORT_RULES:
        text = pattern.sub(replacement, text)
    dotted = _dotted_rule()

    def qualify(match: re.Match[str]) -> str:
        start, end = match.start(), match.end()
        quoted = text[start - 1:start] in "\"'`" and text[end:end + 1] in "\"'`"
        if quoted and match.group(0) in CONFIG_KEYS:
            return match.group(0)
        return f"{PACKAGE}.{match.group(0)}"

    return dotted.sub(qualify, text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed, unfixable = [], []
    for path in _tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(ROOT)
        unfixable += [f"{rel}: {m.group(0).strip()}" for m in _UNFIXABLE.finditer(text)]
        new = rewrite(path, text)
        if new != text:
            changed.append(str(rel))
            if not check:
                path.write_text(new, encoding="utf-8")
    for line in unfixable:
        print(f"{line}: import it as `from {PACKAGE}.<folder> import <module>`", file=sys.stderr)
    if check and changed:
        print("bare package names (run python .ci/nest_packages.py): " + ", ".join(changed), file=sys.stderr)
    elif changed:
        print(f"rewrote {len(changed)} files: " + ", ".join(changed))
    return 1 if unfixable or (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
