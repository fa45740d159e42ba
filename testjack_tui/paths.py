"""Where config, data and cache live (platformdirs), overridable for tests by TESTJACK_HOME."""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "testjack-tui"


def _home() -> Path | None:
    value = os.environ.get("TESTJACK_HOME")
    return Path(value) if value else None


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    home = _home()
    path = home / "data" if home else Path(platformdirs.user_data_dir(APP))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    home = _home()
    path = home / "cache" if home else Path(platformdirs.user_cache_dir(APP))
    path.mkdir(parents=True, exist_ok=True)
    return path


def sessions_dir() -> Path:
    path = data_dir() / "sessions"
    path.mkdir(parents=True, exist_ok=True)
    return path
