"""The JSON edge of flat records: dataclasses whose fields are all plain JSON values."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Self


class FlatRecord:
    """Mixed into a dataclass whose fields are plain JSON values: written and read as they are."""

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # mixed into dataclasses only
        return record

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)
