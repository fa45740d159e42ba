"""What the LLM agents write, as records: parsed once where an agent's reply (or its stored copy)
comes in, passed typed through the engine, turned back into JSON only where it is written.

The agents' submissions are checked against their schemas first (agents/schemas.py), so a row
that fails here is a model or a recording gone wrong: it is left out with one line saying which
row and which field (`Parsed.problems`), never a traceback. `to_json` writes the keys the agent
wrote, an optional key only when it was there.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Callable, Generic, Iterable, Mapping, Self, TypeVar

from .records import JsonObject


class RowError(ValueError):
    """A row an agent wrote that misses a field or has one of the wrong type."""


class Coverage(StrEnum):
    """How much of a requirement T0 checks, in the task analysis's traceability matrix."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"


class CaseLabel(StrEnum):
    """A reviewer's label of one test case."""

    VALID = "VALID"
    QUESTIONABLE = "QUESTIONABLE"
    INVALID = "INVALID"


def _field(row: Mapping[str, object], name: str) -> object:
    if name not in row:
        raise RowError(f"{name}: missing")
    return row[name]


def _text(row: Mapping[str, object], name: str) -> str:
    value = _field(row, name)
    if not isinstance(value, str):
        raise RowError(f"{name}: must be a string, got {value!r}")
    return value


def _opt_text(row: Mapping[str, object], name: str) -> str | None:
    return _text(row, name) if name in row else None


def _flag(row: Mapping[str, object], name: str) -> bool:
    value = _field(row, name)
    if not isinstance(value, bool):
        raise RowError(f"{name}: must be true or false, got {value!r}")
    return value


def _opt_flag(row: Mapping[str, object], name: str) -> bool | None:
    value = row.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise RowError(f"{name}: must be true, false or null, got {value!r}")


def _texts(row: Mapping[str, object], name: str) -> tuple[str, ...]:
    value = _field(row, name)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RowError(f"{name}: must be a list of strings, got {value!r}")
    return tuple(value)


E = TypeVar("E", bound=StrEnum)


def _word(kind: type[E], row: Mapping[str, object], name: str) -> E:
    value = _field(row, name)
    if isinstance(value, str) and value in {m.value for m in kind}:
        return kind(value)
    raise RowError(f"{name}: must be one of {', '.join(m.value for m in kind)}, got {value!r}")


def _put(out: JsonObject, name: str, value: object) -> None:
    """An optional key, written only when the agent wrote it."""
    if value is not None:
        out[name] = value


def _known(row: Mapping[str, object], names: tuple[str, ...]) -> None:
    unknown = sorted(set(row) - set(names))
    if unknown:
        raise RowError(f"{unknown[0]}: unknown field (known: {', '.join(names)})")


@dataclass(frozen=True)
class TraceRow:
    """A row of the task analysis's requirement <-> T0 traceability matrix. The schema asks for
    every field; a stored row without one (None: not said) is kept as it is, not dropped."""

    requirement: str
    explicit: bool | None = None
    t0_tests: tuple[str, ...] | None = None
    coverage: Coverage | None = None
    quote: str | None = None
    note: str | None = None

    FIELDS = ("requirement", "explicit", "quote", "t0_tests", "coverage", "note")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "requirement"), _opt_flag(row, "explicit"),
                   _texts(row, "t0_tests") if row.get("t0_tests") is not None else None,
                   _word(Coverage, row, "coverage") if row.get("coverage") is not None else None,
                   _opt_text(row, "quote"), _opt_text(row, "note"))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"requirement": self.requirement}
        _put(out, "explicit", self.explicit)
        _put(out, "quote", self.quote)
        _put(out, "t0_tests", None if self.t0_tests is None else list(self.t0_tests))
        _put(out, "coverage", None if self.coverage is None else self.coverage.value)
        _put(out, "note", self.note)
        return out

    def checklist_item(self) -> ChecklistRow:
        """The row as recorded coverage (the traceability matrix is the analysis's checklist)."""
        return ChecklistRow(clause=self.requirement, explicit=self.explicit, quote=self.quote or "",
                            covered_by_t0=None if self.coverage is None else self.coverage != Coverage.NONE,
                            t0_tests=self.t0_tests or ())


@dataclass(frozen=True)
class ChecklistRow:
    """A requirement of P and what was recorded about it: an audit's checklist item, or a row of
    the task analysis's traceability matrix (`t0_tests` then)."""

    clause: str
    explicit: bool | None = None  # quotable from P (None: not said)
    quote: str = ""  # the words of P, when explicit
    covered_by_t0: bool | None = None
    implemented: bool | None = None  # the trial implements it (audit only)
    t0_tests: tuple[str, ...] = ()

    FIELDS = ("clause", "explicit", "quote", "covered_by_t0", "implemented", "t0_tests")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        quote = _opt_text(row, "quote")
        tests = _texts(row, "t0_tests") if row.get("t0_tests") is not None else ()
        return cls(_text(row, "clause"), _opt_flag(row, "explicit"), quote or "",
                   _opt_flag(row, "covered_by_t0"), _opt_flag(row, "implemented"), tests)

    def to_json(self) -> JsonObject:
        """An audit's checklist item as stored (clause, explicit, quote, covered_by_t0, implemented)."""
        return {"clause": self.clause, "explicit": self.explicit, "quote": self.quote,
                "covered_by_t0": self.covered_by_t0, "implemented": self.implemented}

    def coverage_json(self) -> JsonObject:
        """A traceability row as recorded coverage (what the explanations read)."""
        return {"clause": self.clause, "explicit": self.explicit, "quote": self.quote,
                "covered_by_t0": self.covered_by_t0, "t0_tests": list(self.t0_tests)}


@dataclass(frozen=True)
class SuspiciousFeature:
    """A pattern in a trial's patch the task analysis says should make an auditor look closer."""

    id: str
    requirement: str
    pattern: str
    why_suspicious: str
    false_positives: str = ""

    FIELDS = ("id", "requirement", "pattern", "why_suspicious", "false_positives")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "id"), _text(row, "requirement"), _text(row, "pattern"),
                   _text(row, "why_suspicious"), _text(row, "false_positives"))

    def to_json(self) -> JsonObject:
        return {"id": self.id, "requirement": self.requirement, "pattern": self.pattern,
                "why_suspicious": self.why_suspicious, "false_positives": self.false_positives}


@dataclass(frozen=True)
class AgentFinding:
    """A problem the audit agent says it found, backed by one of its candidates (`witness`, its
    path; `candidate_id` once matched). An explanation only: witnesses decide, not findings."""

    what: str
    why: str
    clause: str
    witness: str
    failing_assertion: str
    t0_missed: str
    t0_missed_detail: str | None = None
    candidate_id: str | None = None

    FIELDS = ("what", "why", "clause", "witness", "failing_assertion", "t0_missed", "t0_missed_detail",
              "candidate_id")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "what"), _text(row, "why"), _text(row, "clause"), _text(row, "witness"),
                   _text(row, "failing_assertion"), _text(row, "t0_missed"),
                   _opt_text(row, "t0_missed_detail"), _opt_text(row, "candidate_id"))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"what": self.what, "why": self.why, "clause": self.clause, "witness": self.witness,
                           "failing_assertion": self.failing_assertion, "t0_missed": self.t0_missed}
        _put(out, "t0_missed_detail", self.t0_missed_detail)
        _put(out, "candidate_id", self.candidate_id)
        return out


@dataclass(frozen=True)
class PromptSilent:
    """The audit agent's "P is silent on X": an open question about P, not a trial's defect."""

    on: str
    why: str
    reference: str | None = None
    witness: str | None = None
    clarification: str | None = None

    FIELDS = ("on", "why", "reference", "witness", "clarification")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "on"), _text(row, "why"), _opt_text(row, "reference"), _opt_text(row, "witness"),
                   _opt_text(row, "clarification"))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"on": self.on, "why": self.why}
        _put(out, "reference", self.reference)
        _put(out, "witness", self.witness)
        _put(out, "clarification", self.clarification)
        return out


@dataclass(frozen=True)
class ReviewCase:
    """A reviewer's verdict on one test case of a candidate."""

    test_id: str
    label: CaseLabel
    scope: str
    overfitting: str
    reason: str
    requirement: str | None = None

    FIELDS = ("test_id", "label", "scope", "overfitting", "requirement", "reason")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "test_id"), _word(CaseLabel, row, "label"), _text(row, "scope"),
                   _text(row, "overfitting"), _text(row, "reason"), _opt_text(row, "requirement"))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"test_id": self.test_id, "label": self.label.value, "scope": self.scope,
                           "overfitting": self.overfitting}
        _put(out, "requirement", self.requirement)
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class CaseCoverage:
    """A row of a reviewer's requirement <-> cases matrix."""

    requirement: str
    test_ids: tuple[str, ...]

    FIELDS = ("requirement", "test_ids")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "requirement"), _texts(row, "test_ids"))

    def to_json(self) -> JsonObject:
        return {"requirement": self.requirement, "test_ids": list(self.test_ids)}


@dataclass(frozen=True)
class ReferenceContradiction:
    """An author's word that the test is right and the reference breaks P here (`quote`: the
    words of P, `claim`: what the reference does instead, `output`: the run's lines that show
    it). Recorded as a task finding (engine/reference_claims.py)."""

    quote: str
    claim: str
    output: str = ""

    FIELDS = ("quote", "claim", "output")

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        _known(row, cls.FIELDS)
        return cls(_text(row, "quote"), _text(row, "claim"), _opt_text(row, "output") or "")

    def to_json(self) -> JsonObject:
        return {"quote": self.quote, "claim": self.claim, "output": self.output}


@dataclass(frozen=True)
class JudgedCandidate:
    """A candidate of this task judged and not counted, shown to later audits so they do not
    write the same test again."""

    requirement: str
    label: str
    by: str
    reason: str


@dataclass(frozen=True)
class ValidatedTest:
    """A validated test of the task, for an auditor: a witness or a task-analysis test that held
    on every trial, with its outcome on the audited trial ("" = not run)."""

    path: str
    requirement: str
    kind: str
    outcome: str
    source: str


@dataclass(frozen=True)
class AnalysisTestFate:
    """What became of one task-analysis candidate chain (stored in the analysis's audit row):
    the engine's word on an agent's test, beside what the agent wrote."""

    id: str
    path: str
    requirement: str
    versions: tuple[str, ...]
    fate: str
    held: bool

    def to_json(self) -> JsonObject:
        return {"id": self.id, "path": self.path, "requirement": self.requirement,
                "versions": list(self.versions), "fate": self.fate, "held": self.held}

    @classmethod
    def from_json(cls, row: Mapping[str, object]) -> Self:
        return cls(_text(row, "id"), _text(row, "path"), _text(row, "requirement"), _texts(row, "versions"),
                   _text(row, "fate"), _flag(row, "held"))


def stored_fates(analysis: JsonObject | None) -> list[AnalysisTestFate]:
    """The fates stored with the task analysis (analysis_fates.fate_rows, written when its tests ran)."""
    return rows_of(AnalysisTestFate.from_json, (analysis or {}).get("fates"), "fates")


@dataclass(frozen=True)
class AuditTestFate:
    """What became of one trial auditor's (or the operator's) candidate chain."""

    id: str
    trial: str
    author: str
    path: str
    requirement: str
    versions: tuple[str, ...]
    fate: str

    def to_json(self) -> JsonObject:
        return {"id": self.id, "trial": self.trial, "author": self.author, "path": self.path,
                "requirement": self.requirement, "versions": list(self.versions), "fate": self.fate}


R = TypeVar("R")


@dataclass(frozen=True)
class Parsed(Generic[R]):
    """The rows that parsed, and one line per row left out."""

    rows: tuple[R, ...]
    problems: tuple[str, ...] = ()


def parse_rows(read: Callable[[Mapping[str, object]], R], raw: object, where: str) -> Parsed[R]:
    """Each row of `raw` (a JSON list an agent wrote under `where`) read by `read`; a row that
    is not an object, or misses a field, is left out with one line naming it."""
    if raw is None:
        return Parsed(())
    if not isinstance(raw, list):
        return Parsed((), (f"{where}: must be a list, got {type(raw).__name__}",))
    rows: list[R] = []
    problems: list[str] = []
    for i, row in enumerate(raw):
        if not isinstance(row, dict):
            problems.append(f"{where}/{i}: must be an object, got {row!r:.80}")
            continue
        try:
            rows.append(read(row))
        except RowError as exc:
            problems.append(f"{where}/{i}/{exc}")
    return Parsed(tuple(rows), tuple(problems))


def rows_of(read: Callable[[Mapping[str, object]], R], raw: object, where: str) -> list[R]:
    """`parse_rows` where the rows were written by TestJack itself (a stored copy of what an
    agent said, checked when it came in): a row that no longer reads is left out."""
    return list(parse_rows(read, raw, where).rows)


def to_json_rows(rows: Iterable[TraceRow | SuspiciousFeature | AgentFinding | PromptSilent | ReviewCase
                                | CaseCoverage | ReferenceContradiction]) -> list[JsonObject]:
    return [r.to_json() for r in rows]
