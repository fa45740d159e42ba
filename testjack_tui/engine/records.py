"""The JSON edge of flat records: dataclasses whose fields are all plain JSON values."""
from __future__ import annotations

from dataclasses import asdict
from enum import StrEnum
from pathlib import PurePath
from typing import Any, Self, TypeAlias, TypeVar

from testjack_tui.errors import InputError

# ONLY a JSON object crossing a file or process boundary: a file read or written (summary.json,
# report.json, a labels file), an agent's raw reply, an event payload on the wire, a store
# row's JSON column as read or written, and the `to_json`/`from_json` of the records that
# cross it. A value that stays inside the engine is a dataclass instead, never this alias
# (tests/test_engine_typing_budget.py counts what is left; docs/architecture.md).
JsonObject: TypeAlias = dict[str, Any]


class FlatRecord:
    """Mixed into a dataclass whose fields are plain JSON values: written and read as they are."""

    def to_json(self) -> JsonObject:
        record: JsonObject = asdict(self)  # type: ignore[call-overload]  # mixed into dataclasses only
        return record

    @classmethod
    def from_json(cls, data: JsonObject) -> Self:
        return cls(**data)


E = TypeVar("E", bound=StrEnum)


def member(kind: type[E], value: object, path: PurePath | str, where: str) -> E:
    """A stored word as a member of the closed set `kind`; a word no TestJack writes is one line
    naming the file and the column."""
    if isinstance(value, str) and value in {m.value for m in kind}:
        return kind(value)
    raise InputError(path, where, f"must be one of {', '.join(m.value for m in kind)}, got {value!r}")


def member_or_none(kind: type[E], value: object, path: PurePath | str, where: str) -> E | None:
    """`member`, with an empty value (a column added after the row was written) as None."""
    return member(kind, value, path, where) if value else None
