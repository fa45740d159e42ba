"""Shared fixtures. Every test gets its own TESTJACK_HOME so config, data and sessions never
touch the user's real directories."""
from __future__ import annotations

from pathlib import Path

import pytest

from testjack_tui import compose

compose.install()  # as the CLI and the TUI do at start-up

# Fixture benchmarks carry their own repositories with their own tests (some deliberately
# flaky or failing): they are data for our tests, never part of this suite.
collect_ignore_glob = ["fixtures/*"]

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "benchmarks" / "demo"


@pytest.fixture(autouse=True)
def testjack_home(tmp_path, monkeypatch):
    home = tmp_path / "tj-home"
    monkeypatch.setenv("TESTJACK_HOME", str(home))
    return home
