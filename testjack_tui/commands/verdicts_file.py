"""`audit --verdicts FILE`: the operator's judgements written in advance, for headless runs.

TOML or JSON; keys name a candidate (its id, its repo path such as `tests/test_tj_meta.py`, its
file name, or the `--candidate` file it came from); values are a label or a table with the
fields the reviewer's own verdict has:

    ["tests/test_tj_meta.py"]
    label = "valid"                       # valid | questionable | invalid
    requirement = "where() keeps the metadata"
    explicit = true                       # P states it; needs `quote`
    quote = "the new record sets returned by `select` and `where`"
    note = "P lists where() among the operations that keep metadata"

    "tests/test_tj_ordering.py" = "invalid"

    ["tests/test_tj_roundtrip.py"]        # it fails on the reference, and the reference is wrong
    reference_contradicts = { quote = "parse(dumps(doc)) round-trips", claim = "moves the table" }

Labels: valid (counts as a witness), invalid, questionable (neither counts; an open question
about P). `reference_contradicts` (the words of P and what the reference does instead) answers
for a candidate that fails on the reference: the report lists it as a fault of the task; its
label may be left out (then invalid: a test the reference fails is no witness). `explicit` decides the ambiguity rule: explicit requirements refute whatever ρ is;
the quote is checked against P when the candidate is judged (the reviewer's quote rule).
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

from testjack_tui.engine.roles import OperatorVerdict, ReferenceContradiction, ReviewLabel
from testjack_tui.errors import InputError

LABELS = ("valid", "invalid", "questionable")
FIELDS = ("label", "requirement", "explicit", "quote", "note", "reference_contradicts")


def load_verdicts(path: Path) -> dict[str, OperatorVerdict]:
    """key -> the operator's verdict; one clear error naming the file and the entry otherwise."""
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
    return {str(key): _entry(path, str(key), value) for key, value in data.items()}


def _entry(path: Path, key: str, value: object) -> OperatorVerdict:
    if isinstance(value, str):
        value = {"label": value}
    if not isinstance(value, dict):
        raise InputError(path, key, "must be a label or a table with label, requirement, explicit, quote, note")
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise InputError(path, f"{key}.{unknown[0]}", f"unknown field (known: {', '.join(FIELDS)})")
    claim = _claim(path, key, value.get("reference_contradicts"))
    label = value.get("label", "invalid" if claim is not None else None)
    if label not in LABELS:
        raise InputError(path, f"{key}.label", f"must be one of {', '.join(LABELS)}, got {label!r}")
    for name in ("requirement", "quote", "note"):
        if not isinstance(value.get(name, ""), str):
            raise InputError(path, f"{key}.{name}", "must be a string")
    explicit = value.get("explicit")
    if explicit is not None and not isinstance(explicit, bool):
        raise InputError(path, f"{key}.explicit", f"must be true or false, got {explicit!r}")
    quote = value.get("quote", "").strip()
    if explicit and not quote:
        raise InputError(path, f"{key}.quote", "explicit = true needs the words of P it rests on")
    return OperatorVerdict(label=ReviewLabel(label), note=value.get("note", ""), requirement=value.get("requirement", "").strip(),
                           explicit=explicit, quote=quote, reference_contradicts=claim)


def _claim(path: Path, key: str, value: object) -> ReferenceContradiction | None:
    """An entry's `reference_contradicts` table ({quote, claim}), checked."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(path, f"{key}.reference_contradicts", "must be a table with quote and claim")
    unknown = sorted(set(value) - {"quote", "claim"})
    if unknown:
        raise InputError(path, f"{key}.reference_contradicts.{unknown[0]}", "unknown field (known: quote, claim)")
    for name in ("quote", "claim"):
        if not isinstance(value.get(name), str) or not value[name].strip():
            raise InputError(path, f"{key}.reference_contradicts.{name}", "must be a non-empty string")
    return ReferenceContradiction(value["quote"].strip(), value["claim"].strip())


def check_quotes(table: dict[str, OperatorVerdict], path: Path, prompts: dict[str, str]) -> None:
    """Every quote must be words of P of one of the audited tasks (the reviewer's quote rule):
    an explicit judgement resting on words P does not have would silently count as implicit."""
    from testjack_tui.engine.ambiguity import quote_in_prompt

    for key, v in table.items():
        quotes = [("quote", v.quote)] + ([("reference_contradicts.quote", v.reference_contradicts.quote)]
                                         if v.reference_contradicts is not None else [])
        for field, quote in quotes:
            if quote and not any(quote_in_prompt(quote, p) for p in prompts.values()):
                raise InputError(path, f"{key}.{field}", "not words of the task prompt "
                                 f"({', '.join(sorted(prompts)[:3])}): copy them from P (at least 12 characters)")
