"""The JSON edge of flat records: dataclasses whose fields are all plain JSON values."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Self, TypeAlias

# A JSON object at an edge: a file read or written, an agent's raw reply, an event payload on
# the wire, a store row's JSON column. Records inside the engine are dataclasses instead.
JsonObject: TypeAlias = dict[str, Any]


class FlatRecord:
    """Mixed into a dataclass whose fields are plain JSON values: written and read as they are."""

    def to_json(self) -> JsonObject:
        record: JsonObject = asdict(self)  # type: ignore[call-overload]  # mixed into dataclasses only
        return record

    @classmethod
    def from_json(cls, data: JsonObject) -> Self:
        return cls(**data)
