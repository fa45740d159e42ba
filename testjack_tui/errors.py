"""Errors a user can act on: each names the file and the field at fault in one line."""
from __future__ import annotations

from pathlib import PurePath


class InputError(Exception):
    """Bad input: one line naming the file, the field and what is wrong."""

    def __init__(self, path: PurePath | str, field: str | None, message: str):
        self.path = str(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + message)


class SandboxError(Exception):
    """A container operation failed in a way the user should see (not a trial's own failure)."""
