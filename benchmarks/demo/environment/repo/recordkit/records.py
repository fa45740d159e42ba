"""RecordSet: rows with named fields, convertible to and from CSV and JSON."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TextIO


class RecordSet:
    """An ordered collection of rows (dicts) sharing one list of field names.

    Field order is taken from ``fields`` when given, otherwise from the order in which keys first
    appear in the rows. Missing values are stored as ``None``.
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]] = (), fields: Iterable[str] | None = None):
        rows = [dict(row) for row in rows]
        if fields is None:
            seen: dict[str, None] = {}
            for row in rows:
                for key in row:
                    seen.setdefault(key, None)
            fields = list(seen)
        self.fields: list[str] = list(fields)
        self.rows: list[dict[str, Any]] = [{f: row.get(f) for f in self.fields} for row in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordSet):
            return NotImplemented
        return self.fields == other.fields and self.rows == other.rows

    def __repr__(self) -> str:
        return f"RecordSet(fields={self.fields!r}, rows={len(self.rows)})"

    # -- operations ------------------------------------------------------------------------

    def select(self, *fields: str) -> "RecordSet":
        """A new RecordSet with only ``fields``, in that order."""
        unknown = [f for f in fields if f not in self.fields]
        if unknown:
            raise KeyError(f"unknown fields: {', '.join(unknown)}")
        return RecordSet(({f: row[f] for f in fields} for row in self.rows), fields=fields)

    def where(self, predicate: Callable[[dict[str, Any]], bool]) -> "RecordSet":
        """A new RecordSet with the rows for which ``predicate(row)`` is true."""
        return RecordSet((row for row in self.rows if predicate(row)), fields=self.fields)

    # -- CSV -------------------------------------------------------------------------------

    def to_csv(self, fp: TextIO | None = None) -> str | None:
        """Write a header line and one line per row. Returns the text when ``fp`` is None."""
        out = io.StringIO() if fp is None else fp
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.fields)
        for row in self.rows:
            writer.writerow(["" if row[f] is None else row[f] for f in self.fields])
        return out.getvalue() if fp is None else None

    @classmethod
    def from_csv(cls, source: str | TextIO) -> "RecordSet":
        """Read CSV text (or a file object) written by :meth:`to_csv`. Values come back as str;
        empty cells come back as None."""
        fp = io.StringIO(source) if isinstance(source, str) else source
        reader = csv.reader(fp)
        try:
            fields = next(reader)
        except StopIteration:
            return cls()
        rows = [{f: (v if v != "" else None) for f, v in zip(fields, line)} for line in reader if line]
        return cls(rows, fields=fields)

    # -- JSON ------------------------------------------------------------------------------

    def to_json(self) -> str:
        return json.dumps({"fields": self.fields, "rows": self.rows})

    @classmethod
    def from_json(cls, text: str) -> "RecordSet":
        data = json.loads(text)
        try:
            return cls(data["rows"], fields=data["fields"])
        except (KeyError, TypeError) as exc:
            raise ValueError("not a RecordSet document") from exc
