"""`audit --verdicts FILE`: the operator's judgements written in advance, for headless runs.

TOML or JSON; keys name a candidate (its id, its repo path such as `tests/test_tj_meta.py`, its
file name, or the `--candidate` file it came from); values are a label or a table:

    ["tests/test_tj_meta.py"]
    label = "valid"
    note = "P: metadata survives CSV and JSON"

    "tests/test_tj_ordering.py" = "invalid"

Labels: valid (counts as a witness), invalid, questionable (neither counts).
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

from testjack_tui.errors import InputError

LABELS = ("valid", "invalid", "questionable")


def load_verdicts(path: Path) -> dict[str, tuple[str, str]]:
    """key -> (label, note); one clear error naming the file and the entry otherwise."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_file():  # a folder, /dev/zero, a pipe: nothing to read
        raise InputError(path, None, "the verdicts file is not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the verdicts file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except RecursionError:
        raise InputError(path, None, "nested too deeply to read") from None
    except ValueError as exc:  # bad JSON/TOML, or an integer of more digits than Python converts
        raise InputError(path, None, f"not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("verdicts"), dict) and len(data) == 1:
        data = data["verdicts"]
    if not isinstance(data, dict) or not data:
        raise InputError(path, None, "must map candidates to verdicts (see `audit --help`)")
    out: dict[str, tuple[str, str]] = {}
    for key, value in data.items():
        if isinstance(value, str):
            label, note = value, ""
        elif isinstance(value, dict):
            label, note = value.get("label"), value.get("note", "")
        else:
            raise InputError(path, key, "must be a label or a table with label and note")
        if label not in LABELS:
            raise InputError(path, f"{key}.label", f"must be one of {', '.join(LABELS)}, got {label!r}")
        if not isinstance(note, str):
            raise InputError(path, f"{key}.note", "must be a string")
        out[str(key)] = (label, note)
    return out
