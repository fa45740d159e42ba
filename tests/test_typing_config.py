"""mypy (run by .ci/run) checks the whole package, strict: the configuration cannot quietly
narrow what it checks. No module is left out (`ignore_errors`)."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What an override may relax, per module pattern, and why.
RELAXED = {"testjack_tui.sandbox.ray_backend.*": {"warn_return_any"}}  # Ray is untyped: its results are Any


def _mypy() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        config: dict[str, object] = tomllib.load(fh)["tool"]["mypy"]
    return config


def test_mypy_is_strict_over_the_whole_package() -> None:
    config = _mypy()
    assert config["strict"] is True
    assert config["files"] == ["testjack_tui"]
    assert config.get("exclude") == ["^testjack_tui/benchmarks/demo/"]  # the demo tasks' code is data


def test_no_override_narrows_the_check_beyond_what_is_named() -> None:
    overrides = _mypy().get("overrides", [])
    assert isinstance(overrides, list)
    ignored: set[str] = set()
    for override in overrides:
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        relaxed = {key for key in override if key != "module"}
        if override.get("ignore_errors"):
            ignored.update(modules)
            relaxed.discard("ignore_errors")
        for module in modules:
            assert relaxed <= RELAXED.get(module, set()), f"{module}: relaxes {sorted(relaxed)}"
    assert not ignored, f"left out of the check: {sorted(ignored)}"
