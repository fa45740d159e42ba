"""What a file of a repository is: test, harness (affects how tests are collected or reported),
start-up hook, CI, build, config, or ordinary source. One classification for everyone: the
sandbox restores exactly the harness files named here before a witness run, and the evidence
reports the same set.

Harness files are recognised by kind, not only by name: `conftest.py` at any depth, pytest
plugins (modules defining `pytest_*` hooks, `pytest_plugins = ...`, `pytest11` entry points),
`sitecustomize`/`usercustomize`/`.pth` start-up hooks, and pytest settings in `pytest.ini`,
`tox.ini`, `setup.cfg` or `pyproject.toml`; per ecosystem, `TestMain`/`init()` in Go test files,
jest/vitest/mocha config and setup files (and their keys and the test script in package.json),
Rust `build.rs` and `.cargo/` config, and `.env` files.
"""
from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath

from testjack_tui.diffs import FileDiff

TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec", "specs"}
_TEST_NAMES = ("test_*.py", "*_test.py", "*_tests.py", "tests.py", "*_test.go", "*.test.*",
               "*.spec.*", "*Test.java", "*Tests.java", "*_spec.rb")
_HARNESS_NAMES = {"conftest.py", "pytest.ini", ".pytest.ini", "noxfile.py", ".coveragerc",
                  "test.sh", "run_tests.sh", "runtests.py", "jest.config.js", "vitest.config.ts",
                  "karma.conf.js", ".mocharc.js", ".mocharc.json", "phpunit.xml"}
_STARTUP_NAMES = {"sitecustomize.py", "usercustomize.py"}
_CI_PATTERNS = (".github/workflows/*", ".gitlab-ci.yml", ".travis.yml", ".circleci/*",
                "azure-pipelines.yml", "Jenkinsfile", ".ci/*", "buildkite/*", ".buildkite/*")
_BUILD_NAMES = {"setup.py", "setup.cfg", "pyproject.toml", "Makefile", "package.json", "Cargo.toml",
                "go.mod", "go.sum", "Dockerfile", "Containerfile", "CMakeLists.txt", "build.gradle",
                "pom.xml", "MANIFEST.in", "package-lock.json", "yarn.lock", "poetry.lock", "tox.ini"}
_CONFIG_SUFFIXES = {".ini", ".cfg", ".toml", ".yaml", ".yml", ".env"}
# Files that may hold pytest settings next to other things: harness only when the change is.
PYTEST_SETTING_FILES = {"pyproject.toml", "setup.cfg", "tox.ini", "setup.py"}

PYTEST_HOOK = re.compile(r"^\s*def\s+(pytest_\w+)\s*\(")
PLUGIN_REGISTRATION = re.compile(r"\bpytest_plugins\s*=|\bpytest11\b|entry_points.*pytest")
PYTEST_SECTION = re.compile(r"^\s*\[(tool:pytest|pytest|tool\.pytest[\w.]*)\]")
PYTEST_OPTION = re.compile(r"^\s*(addopts|python_files|python_classes|python_functions|testpaths|"
                           r"norecursedirs|filterwarnings|xfail_strict|required_plugins|"
                           r"usefixtures|console_output_style|junit_\w+)\s*=")

# Why a harness file matters (the sandbox's restore list and the evidence share these words).
CONFTEST = "pytest conftest (hooks and fixtures)"
PLUGIN = "pytest plugin or entry point"
PYTEST_CONFIG = "pytest configuration"
STARTUP = "interpreter start-up hook"
GO_HOOK = "Go TestMain/init in a test file (runs before every test of the package)"
JS_CONFIG = "JavaScript test configuration (setup files, reporters, test selection)"
JS_PACKAGE = "test runner configuration in package.json"
RUST_BUILD = "Rust build script or cargo configuration (runs before the tests compile)"
ENV_FILE = "environment file read by the test setup"
DJANGO_RUNNER = "Django's test runner or the settings it loads (TEST_RUNNER can replace the runner)"
# Django's runtests.py and the settings module the harness names (--settings=test_sqlite).
_DJANGO_RUNNER_PATHS = {"tests/runtests.py", "tests/test_sqlite.py"}
# jest/vitest/mocha configuration and setup files (setupFiles, globalSetup, reporters, ...).
_JS_CONFIG = re.compile(r"^(vitest|vite|jest|vitest\.workspace|vitest\.setup|jest\.setup|setupTests)"
                        r"(\.config)?\.[cm]?[jt]sx?$|^\.mocharc(\.[a-z]+)?$|^\.babelrc$|^babel\.config\.[cm]?js$")
# A runner's settings key, or the test script (it tells which runner the repository uses).
_JS_PACKAGE_KEY = re.compile(r'"(jest|vitest|mocha|ava|test)"\s*:')
_ENV_FILE = re.compile(r"^\.env(\.[\w.-]+)?$")
_JS_TEST = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")
TEST_FILE = "test file"
_GO_HOOK = re.compile(r"^\s*func\s+(TestMain\s*\(|init\s*\(\s*\))")


def is_test_path(path: str) -> bool:
    p = PurePosixPath(path)
    if any(part in TEST_DIRS for part in p.parts[:-1]):
        return True
    return any(fnmatch.fnmatch(p.name, pat) for pat in _TEST_NAMES)


def categorize(path: str) -> str | None:
    """startup | harness | ci | build | tests | config | None (ordinary source), by path alone."""
    p = PurePosixPath(path)
    if p.name in _STARTUP_NAMES or p.suffix == ".pth":
        return "startup"
    if p.name in _HARNESS_NAMES:
        return "harness"
    if any(fnmatch.fnmatch(path, pat) for pat in _CI_PATTERNS):
        return "ci"
    if p.name in _BUILD_NAMES or p.name.startswith("requirements") and p.suffix in (".txt", ".in"):
        return "build"
    if is_test_path(path):
        return "tests"
    if p.suffix in _CONFIG_SUFFIXES:
        return "config"
    return None


def _changed_lines(f: FileDiff) -> list[str]:
    return [line.text for line in f.added] + [line.text for line in f.removed]


def harness_kind(f: FileDiff) -> str | None:
    """Why this changed file can change how tests are collected or reported, or None.

    Test files count as candidates ("test file"): whether an edit weakens an existing test is
    decided where the base repo is at hand (the sandbox restores those that exist in base).
    """
    name = PurePosixPath(f.path).name
    lines = _changed_lines(f)
    if name == "conftest.py":
        return CONFTEST
    if f.path in _DJANGO_RUNNER_PATHS:
        return DJANGO_RUNNER
    if name in _STARTUP_NAMES or name.endswith(".pth"):
        return STARTUP
    if name in ("pytest.ini", ".pytest.ini"):
        return PYTEST_CONFIG
    if name in PYTEST_SETTING_FILES:
        if any(PLUGIN_REGISTRATION.search(t) for t in lines):
            return PLUGIN
        # A whole section header (or its options) changed, or the file is new with one.
        text = f.text or "\n".join(lines)
        if any(PYTEST_SECTION.match(t) or PYTEST_OPTION.match(t) for t in lines) or (
                "pytest" in text and any(PYTEST_SECTION.match(t) for t in text.splitlines())):
            return PYTEST_CONFIG
        return None
    if name.endswith(".py") and any(PYTEST_HOOK.match(t) or PLUGIN_REGISTRATION.search(t)
                                    for t in (line.text for line in f.added)):
        return CONFTEST if is_test_path(f.path) else PLUGIN
    if name.endswith("_test.go") and any(_GO_HOOK.match(line.text) for line in f.added):
        return GO_HOOK
    if _JS_CONFIG.match(name):
        return JS_CONFIG
    if name == "package.json" and any(_JS_PACKAGE_KEY.search(t) for t in lines):
        return JS_PACKAGE
    if name == "build.rs" or f.path.startswith(".cargo/") or "/.cargo/" in f.path:
        return RUST_BUILD
    if _ENV_FILE.match(name):
        return ENV_FILE
    if is_test_path(f.path) and (name.endswith((".py", "_test.go", ".rs")) or _JS_TEST.search(name)):
        return TEST_FILE
    return None


def harness_files(files: list[FileDiff]) -> dict[str, str]:
    """Every harness file of a diff -> why it matters (see `harness_kind`)."""
    out: dict[str, str] = {}
    for f in files:
        kind = harness_kind(f)
        if kind is not None:
            out[f.path] = kind
    return out


LANGUAGES = {".py": "python", ".go": "go", ".rs": "rust", ".ts": "typescript", ".tsx": "tsx", ".mts": "typescript",
             ".cts": "typescript", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
             ".jsx": "jsx", ".java": "java", ".rb": "ruby", ".sh": "bash", ".toml": "toml",
             ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".md": "markdown", ".cfg": "ini",
             ".ini": "ini", ".c": "c", ".h": "c", ".cpp": "cpp"}


def source_language(path: str, default: str = "text") -> str:
    """The language a file's source is highlighted as (code fences, the TUI's viewers), by its name."""
    return LANGUAGES.get(PurePosixPath(path).suffix, default)
