"""Where the TUI writes error details: notifications show one line, the log holds the rest."""
from __future__ import annotations

import logging
import traceback
from pathlib import Path

from testjack_tui import paths

_LOGGER_NAME = "testjack_tui.tui"


def log_path() -> Path:
    folder = paths.data_dir() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "tui.log"


def logger() -> logging.Logger:
    log = logging.getLogger(_LOGGER_NAME)
    target = str(log_path())
    # Re-attach when TESTJACK_HOME changed (tests run several apps with different homes).
    if not any(getattr(h, "baseFilename", None) == target for h in log.handlers):
        for handler in list(log.handlers):
            log.removeHandler(handler)
            handler.close()
        handler = logging.FileHandler(target, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def one_line(error: BaseException) -> str:
    """A readable one-line message for a notification (the type name when the text is empty)."""
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    name = type(error).__name__
    if not first:
        return name
    # InputError and friends already read as sentences; others get their type for context.
    if name in ("InputError", "SandboxError", "BudgetExceeded"):
        return first
    return f"{name}: {first}"


def log_exception(error: BaseException, context: str = "") -> str:
    """Write the full traceback to the log; return the one-line summary."""
    details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    logger().error("%s%s", f"{context}: " if context else "", details)
    return one_line(error)
