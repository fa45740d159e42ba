"""The ambiguity rule (paper appendix A.2): does a confirmed witness refute, or expose a prompt gap?

For a witness checking requirement q:
- explicit (the checklist/reviewer quotes P for q, and the quote is really in P) -> refutes;
- implicit and rho(q) <= 1/2 -> refutes (most models implement q unasked: it is inferable);
- implicit and rho(q) > 1/2 -> ambiguous: an underspecified prompt; the witness refutes nothing.

rho(q) = fraction of *models* with passing trials on the task whose passing trials mostly
(strictly more than half) fail the witness's test *the same way*: failures are grouped by their
kind and their first decisive line (`failure_signature`: the assertion and its values, or the
exception), and rho is that of the largest group; a trial failing otherwise is measured and not
counted, since two different wrong answers are not one other reading of the prompt. A hang, a kill
at a resource limit or a crash (engine/failure_kinds.RESOURCE_KINDS) is never another reading of
the prompt: such a trial is measured and not counted as failing, and it is refuted whatever the
witness's class (`refutations`). Models, not trials, so a model with many runs does
not dominate. It is computed over every passing trial of the task the witness was run on, and it
changes as more trials are measured: `AmbiguityTracker` recomputes and reports refutations that
must be withdrawn (the engine emits RefutationWithdrawn for them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, TYPE_CHECKING

from testjack_tui.sandbox.api import as_status
from testjack_tui.sandbox.runners.base import aggregate

from .assertion_lines import asserted_lines
from .failure_kinds import cause, never_a_reading
from .runner import witness_fails
from .records import JsonObject
from .records_agent import ChecklistRow

if TYPE_CHECKING:
    from . import hooks  # hooks registers this module's classifier
    from testjack_tui.model import Task, Trial

EXPLICIT, NECESSARY, AMBIGUOUS = "explicit", "implicit_necessary", "ambiguous"


def witness_outcome(statuses: Iterable[str | None]) -> str:
    """A witness on one trial from the statuses of its test ids: failed / passed / unknown, or
    the resource kind (timed_out / killed_* / crashed) when one of them is one. Combined by the
    sandbox's one combiner and judged by the engine's one `witness_fails`."""
    seen = [s for s in statuses]
    resource = [s for s in seen if never_a_reading(s)]
    if resource:
        return str(resource[0])
    if not seen or any(s is None for s in seen):
        return "failed" if any(witness_fails(s) for s in seen) else "unknown"
    status = aggregate([as_status(s) for s in seen if s is not None])
    if witness_fails(status):
        return "failed"
    return "passed" if status == "passed" else "unknown"


_QUOTE_CHARS = re.compile(r"[\"'`“”‘’«»*]")
MIN_QUOTE = 12  # shorter overlaps ("the list") say nothing about where a clause comes from


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", _QUOTE_CHARS.sub("", text)).strip().lower()


def quote_in_prompt(quote: str, instruction: str) -> bool:
    """Is `quote` really words of P? The one rule for the engine, the reviewer's answer check
    and operator mode. Ellipses may skip text (the pieces must appear in order); case, quote
    marks, markdown code/emphasis markers and spacing are ignored."""
    pieces = [_normalise(p) for p in re.split(r"\[\.\.\.\]|\.\.\.|…", quote)]
    pieces = [p.strip(" .,;:") for p in pieces]
    pieces = [p for p in pieces if p]
    if not pieces or sum(len(p) for p in pieces) < MIN_QUOTE:
        return False  # a word or two "quoted" from P proves nothing
    prompt = _normalise(instruction)
    pos = 0
    for piece in pieces:
        at = prompt.find(piece, pos)
        if at < 0:
            return False
        pos = at + len(piece)
    return True


@dataclass(frozen=True)
class WitnessFacts:
    """What the engine knows about one confirmed witness of one task."""

    witness_id: str
    requirement: str
    explicit: bool  # the reviewer/checklist says P states the requirement
    quote: str = ""  # the words of P it quotes
    outcomes: Mapping[str, str] = field(default_factory=dict)  # trial id -> failed/passed/unknown/kind
    clarification: str = ""  # a one-sentence prompt fix suggested by an agent, if any
    # trial id -> how it fails (`failure_signature`); a failing trial without one is grouped
    # with the others without one
    signatures: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WitnessClass:
    witness_id: str
    requirement: str
    klass: str  # EXPLICIT | NECESSARY | AMBIGUOUS
    rho: float
    models_measured: int  # models with measured passing trials (the denominator)
    models_skipping: tuple[str, ...]  # models whose measured passing trials mostly fail it
    per_model: Mapping[str, tuple[int, int]]  # model -> (failed, measured)
    failing_trials: tuple[str, ...]
    complete: bool  # every passing trial of the task has an outcome for this witness
    note: str = ""  # e.g. why an explicit claim was not accepted
    clarification: str = ""  # set for AMBIGUOUS
    # trials it hangs, kills or crashes: refuted whatever the class (never a reading of P)
    resource_trials: tuple[str, ...] = ()
    shared_failure: str = ""  # the failure rho counted (`failure_signature`), when known

    @property
    def refutes(self) -> bool:
        return self.klass != AMBIGUOUS

    def to_dict(self) -> JsonObject:
        return {
            "witness_id": self.witness_id, "requirement": self.requirement, "class": self.klass,
            "refutes": self.refutes, "rho": round(self.rho, 4),
            "models_measured": self.models_measured, "models_skipping": list(self.models_skipping),
            "per_model": {m: list(v) for m, v in self.per_model.items()},
            "failing_trials": list(self.failing_trials), "complete": self.complete,
            "note": self.note, "clarification": self.clarification,
            "resource_trials": list(self.resource_trials), "shared_failure": self.shared_failure,
        }


def suggest_clarification(requirement: str) -> str:
    """A one-sentence prompt fix: state the requirement the reference implements."""
    text = re.sub(r"\s+", " ", requirement).strip().rstrip(".")
    if not text:
        return "State explicitly the behaviour this witness checks."
    return f'Add to the task: "{text[0].upper()}{text[1:]}."'


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")


# A runner's framing around a failure, not the failure: go's `=== RUN`/`--- FAIL: T (0.00s)`,
# its final FAIL/ok lines, libtest's `---- name stdout ----`, a traceback's header.
_FRAMING = re.compile(r"^(?:=== |--- (?:FAIL|PASS|SKIP)|-{3,} .* -{3,}$|FAIL\b|ok\b|PASS\b"
                      r"|Traceback \(most recent call last\)|File \")")
_DURATION = re.compile(r"\(\d+(?:\.\d+)?m?s\)")


def failure_signature(status: str, message: str) -> str:
    """How a witness failed on one trial, for grouping: its kind (engine/failure_kinds) and
    whether the witness's own checks said no (`assertion`: pytest's assert, go's t.Errorf lines,
    a JS expect, cargo's assert!) or the trial's code raised something (by its exception class),
    else the first decisive line with its values blanked. Trials whose answers fail the
    witness's checks, whichever check and whatever wrong value, read P one way; a trial that
    crashes with a KeyError is another case, and a timeout or a kill is never a reading.

    The exception decides, not the statement it came from: `assert parse("1w") == 604800` that
    raises a KeyError inside parse is the trial raising (pytest's `>` line is the test's
    statement and says nothing about what went wrong)."""
    text = message or ""
    # A chained exception: the one that ended the test is the last section's.
    text = _CHAINED.split(text)[-1]
    lines = asserted_lines(text)
    # What to classify: pytest's first `E` line (the exception, or the rewritten assert), else
    # the exception a traceback ends in, else the first line that is not runner framing.
    first = lines[0] if lines else ""
    if not first and "Traceback (most recent call last)" in text:
        first = cause(status, text, limit=1)
    if not first:
        first = next((ln.strip() for ln in text.splitlines()
                      if ln.strip() and not _FRAMING.match(ln.strip())), "")
    first = re.sub(r"\s+", " ", _DURATION.sub("", _ADDRESS.sub("0x?", first))).strip()
    said_no = _check_said_no(first, text, pytest_line=bool(lines))
    if said_no is True:
        return f"{status}: assertion"  # the witness's checks said no: one reading, whichever check
    if said_no:
        return f"{status}: {said_no}"  # the trial's code raised: grouped by what it raised
    first = _VALUES.sub(lambda m: m.group("loc") or "?", first)
    return f"{status}: {first}" if first else status


def _check_said_no(first: str, text: str, pytest_line: bool) -> bool | str | None:
    """True: the witness's check said no; a name: the trial raised that; None: unknown.
    `first` is the failure's decisive line; `pytest_line`: it is pytest's first `E` line,
    which is always the exception (`Class: text`) or a rewritten `assert`."""
    raised = (_PYTEST_CLASS if pytest_line else _CLASS).match(first)
    if raised and not first.startswith("assert "):
        name = raised.group(1).rsplit(".", 1)[-1]
        if name in _CHECK_CLASSES or (name == "Error" and first[raised.end():].lstrip().startswith("expect(")):
            return True  # AssertionError, pytest.fail / DID NOT RAISE, jest's `Error: expect(...)`
        return name
    panic = _PANIC.search(text)
    if panic:  # Rust: the panic's message says whether an assert! fired
        return True if _RUST_ASSERT.search(text[panic.start():]) else "panic"
    if _ASSERTION.search(first):
        return True
    if first.startswith("panic"):  # go: a panic in the code under test
        return "panic"
    return None


_CHAINED = re.compile(r"^\s*(?:During handling of the above exception, another exception occurred:"
                      r"|The above exception was the direct cause of the following exception:)\s*$", re.M)
_CHECK_CLASSES = frozenset({"AssertionError", "Failed", "AssertionFailedError", "JestAssertionError",
                            "ComparisonFailure"})
# An exception's first line: `KeyError: 'w'`, `pkg.UnknownUnit`, node's `AssertionError [ERR_ASSERTION]:`.
_PYTEST_CLASS = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?: \[\w+\])?(?::(?:\s|$)|$)")
# In other runners' free text only names that look like exceptions count (not `Expected: 5`).
_CLASS = re.compile(r"^((?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure)"
                    r"|Error|Failed))(?: \[\w+\])?(?::(?:\s|$)|$)")
_PANIC = re.compile(r"^thread '[^']*' panicked at", re.M)
_RUST_ASSERT = re.compile(r"assertion failed|assertion `left|assertion `\(left")
_ASSERTION = re.compile(r"^assert\b|DID NOT RAISE|^expect\(|\bexpected\b|\bwant\b|_test\.go:\d+:"
                        r"|^assertion `|\bassert(?:_eq|_ne)?!")


# Values in a decisive line (numbers, quoted text), not the file:line that places it.
_VALUES = re.compile(r"(?P<loc>\.\w+:\d+)|'[^']*'|\"[^\"]*\"|-?\b\d+(?:\.\d+)?(?:e-?\d+)?\b")


def run_signature(outcomes: Mapping[str, Mapping[str, Any]], path: str, test_ids: Iterable[str],
                  status: str) -> str:
    """`failure_signature` of a witness (its file `path`, or its listed test ids) in one stored
    run's outcomes (node id -> {"status", "message"}): its first failing test's."""
    wanted = set(test_ids)
    for node in sorted(outcomes):
        o = outcomes[node]
        if (node in wanted or node == path or node.startswith(path + "::")) and o.get("status") != "passed":
            return failure_signature(status, str(o.get("message") or ""))
    return failure_signature(status, "")


def _counts(outcomes: Mapping[str, str], trial_models: Mapping[str, str],
            counted: set[str] | None) -> tuple[dict[str, list[int]], bool]:
    """model -> [failed, measured] over the passing trials; failures outside `counted` (None:
    all) are measured and not counted."""
    per_model: dict[str, list[int]] = {}
    complete = True
    for trial_id, model in trial_models.items():
        outcome = outcomes.get(trial_id, "unknown")
        if never_a_reading(outcome):
            outcome = "passed"  # measured; a hang or a kill is not a reading of the prompt
        if outcome not in ("failed", "passed"):
            complete = False
            continue
        counts = per_model.setdefault(model, [0, 0])
        counts[1] += 1
        if outcome == "failed" and (counted is None or trial_id in counted):
            counts[0] += 1
    return per_model, complete


def _skipping(per_model: Mapping[str, list[int]]) -> tuple[str, ...]:
    return tuple(sorted(m for m, (failed, measured) in per_model.items() if 2 * failed > measured))


def shared_failure(outcomes: Mapping[str, str], trial_models: Mapping[str, str],
                   signatures: Mapping[str, str]) -> tuple[str, set[str] | None]:
    """(signature, its trials) of the failure rho counts: the group of failing trials with one
    signature that the most models mostly fail with (then the most trials, then by name).
    ("", None) when no failing trial has a signature: every failure counts, as before."""
    failing = [t for t in trial_models if outcomes.get(t) == "failed"]
    groups: dict[str, set[str]] = {}
    for t in failing:
        groups.setdefault(signatures.get(t, ""), set()).add(t)
    if not failing or set(groups) == {""}:
        return "", None

    def weight(sig: str) -> tuple[int, int, str]:
        per_model, _ = _counts(outcomes, trial_models, groups[sig])
        return (len(_skipping(per_model)), len(groups[sig]), sig)

    best = max(groups, key=weight)
    return best, groups[best]


def rho(outcomes: Mapping[str, str], trial_models: Mapping[str, str],
        signatures: Mapping[str, str] | None = None
        ) -> tuple[float, dict[str, tuple[int, int]], tuple[str, ...], bool]:
    """(rho, per-model (failed, measured), skipping models, complete) over the passing trials,
    counting only the failures of the shared group when `signatures` are given."""
    _, counted = shared_failure(outcomes, trial_models, signatures or {})
    per_model, complete = _counts(outcomes, trial_models, counted)
    skipping = _skipping(per_model)
    value = len(skipping) / len(per_model) if per_model else 0.0
    return value, {m: (c[0], c[1]) for m, c in sorted(per_model.items())}, skipping, complete


def classify_witness(w: WitnessFacts, trial_models: Mapping[str, str], instruction: str,
                     verify_quotes: bool = True) -> WitnessClass:
    value, per_model, skipping, complete = rho(w.outcomes, trial_models, w.signatures)
    shared, _ = shared_failure(w.outcomes, trial_models, w.signatures)
    failing = tuple(sorted(t for t, o in w.outcomes.items()
                           if (o == "failed" or never_a_reading(o)) and t in trial_models))
    resource = tuple(sorted(t for t, o in w.outcomes.items() if never_a_reading(o) and t in trial_models))
    note = ""
    explicit = w.explicit
    if explicit and verify_quotes and not quote_in_prompt(w.quote, instruction):
        explicit = False
        note = ("said to be explicit, but its quote is not found in the prompt; treated as implicit"
                if w.quote.strip() else "said to be explicit without quoting the prompt; treated as implicit")
    if explicit:
        klass = EXPLICIT
    elif value > 0.5:
        klass = AMBIGUOUS
    else:
        klass = NECESSARY
    return WitnessClass(
        witness_id=w.witness_id, requirement=w.requirement, klass=klass, rho=value,
        models_measured=len(per_model), models_skipping=skipping, per_model=per_model,
        failing_trials=failing, complete=complete, note=note, resource_trials=resource,
        shared_failure=shared,
        clarification=(w.clarification.strip() or suggest_clarification(w.requirement))
        if klass == AMBIGUOUS else "")


def classify_facts(witnesses: Iterable[WitnessFacts], trial_models: Mapping[str, str],
                   instruction: str, verify_quotes: bool = True) -> dict[str, WitnessClass]:
    """Classify every witness of one task. `trial_models`: passing trial id -> model name
    (the whole corpus of the task's passing trials, not only the active ones)."""
    return {w.witness_id: classify_witness(w, trial_models, instruction, verify_quotes)
            for w in witnesses}


def refutations(classes: Mapping[str, WitnessClass]) -> dict[str, tuple[str, ...]]:
    """trial id -> the witnesses that refute it (sorted): the non-ambiguous ones that fail on it,
    and any it hangs, is killed or crashes under (never a reading of the prompt)."""
    out: dict[str, list[str]] = {}
    for c in classes.values():
        for trial in (c.failing_trials if c.refutes else c.resource_trials):
            out.setdefault(trial, []).append(c.witness_id)
    return {t: tuple(sorted(ws)) for t, ws in sorted(out.items())}


@dataclass(frozen=True)
class Change:
    trial_id: str
    witness_id: str
    rho: float


@dataclass
class Update:
    classes: dict[str, WitnessClass]
    refuted: dict[str, tuple[str, ...]]  # trial -> refuting witnesses, after this update
    new_refutations: list[Change]  # (trial, witness) pairs that refute now and did not before
    withdrawn: list[Change]  # pairs that refuted before and no longer do (emit RefutationWithdrawn)
    reinstated_ambiguous: list[str] = field(default_factory=list)  # witnesses now ambiguous

    @property
    def underspecified(self) -> list[WitnessClass]:
        return [c for c in self.classes.values() if c.klass == AMBIGUOUS]


class AmbiguityTracker:
    """Per-task state for the engine: feed it witness facts as runs arrive; it tells you what
    changed. Pure (no I/O); rebuild it from the store on resume by feeding the same facts."""

    def __init__(self, task_id: str, instruction: str, trial_models: Mapping[str, str],
                 verify_quotes: bool = True):
        self.task_id = task_id
        self.instruction = instruction
        self.trial_models = dict(trial_models)
        self.verify_quotes = verify_quotes
        self.facts: dict[str, WitnessFacts] = {}
        self.classes: dict[str, WitnessClass] = {}
        self._pairs: dict[tuple[str, str], float] = {}

    def add_witness(self, facts: WitnessFacts) -> Update:
        self.facts[facts.witness_id] = facts
        return self._recompute()

    def record(self, witness_id: str, trial_id: str, outcome: str) -> Update:
        """One more measured outcome (failed/passed/unknown) of a witness on a trial."""
        w = self.facts[witness_id]
        outcomes = dict(w.outcomes)
        outcomes[trial_id] = outcome
        self.facts[witness_id] = replace(w, outcomes=outcomes)
        return self._recompute()

    def record_many(self, witness_id: str, outcomes: Mapping[str, str]) -> Update:
        w = self.facts[witness_id]
        merged = dict(w.outcomes)
        merged.update(outcomes)
        self.facts[witness_id] = replace(w, outcomes=merged)
        return self._recompute()

    def _recompute(self) -> Update:
        before_classes = self.classes
        self.classes = classify_facts(self.facts.values(), self.trial_models, self.instruction,
                                          self.verify_quotes)
        refuted = refutations(self.classes)
        pairs = {(t, w): self.classes[w].rho for t, ws in refuted.items() for w in ws}
        new = [Change(t, w, r) for (t, w), r in sorted(pairs.items()) if (t, w) not in self._pairs]
        gone = [Change(t, w, self.classes[w].rho if w in self.classes else r)
                for (t, w), r in sorted(self._pairs.items()) if (t, w) not in pairs]
        became = [w for w, c in self.classes.items() if c.klass == AMBIGUOUS
                  and (w not in before_classes or before_classes[w].klass != AMBIGUOUS)]
        self._pairs = pairs
        return Update(dict(self.classes), refuted, new, gone, became)

    @property
    def refuted(self) -> dict[str, tuple[str, ...]]:
        return refutations(self.classes)


# -- the engine's classification hook (testjack_tui.engine.hooks picks this up by name) ----------

def _checklist_quote(requirement: str, checklist: Iterable[ChecklistRow], instruction: str) -> str:
    """A quote of P from the audit's checklist for the clause this witness checks, if any."""
    want = set(_normalise(requirement).split())
    best, best_score = "", 0.0
    for item in checklist or ():
        quote = item.quote.strip()
        if not item.explicit or not quote or not quote_in_prompt(quote, instruction):
            continue
        words = set(_normalise(item.clause).split())
        score = len(want & words) / len(want | words) if want | words else 0.0
        if score > best_score:
            best, best_score = quote, score
    return best if best_score >= 0.5 else ""


def facts_from_records(witnesses: Iterable[hooks.WitnessRecord], runs_by_trial: Mapping[str, Mapping[str, str]],
                       instruction: str, signatures: Mapping[str, Mapping[str, str]] | None = None
                       ) -> list[WitnessFacts]:
    """Turn the engine's WitnessRecords and replay statuses into WitnessFacts. `signatures`:
    trial id -> witness id -> how it failed there (`failure_signature`)."""
    out = []
    for w in witnesses:
        outcomes = {trial: witness_outcome([runs[w.id]])
                    for trial, runs in runs_by_trial.items() if w.id in runs}
        sigs = {trial: by[w.id] for trial, by in (signatures or {}).items() if w.id in by}
        quote = w.quote or (_checklist_quote(w.requirement, w.checklist, instruction) if w.explicit else "")
        out.append(WitnessFacts(w.id, w.requirement, w.explicit, quote, outcomes, signatures=sigs))
    return out


def classify_witnesses(task: Task, witnesses: Iterable[hooks.WitnessRecord],
                       runs_by_trial: Mapping[str, Mapping[str, str]], trials: Iterable[Trial],
                       signatures: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, hooks.WitnessClass]:
    """Engine hook: {witness id: hooks.WitnessClass("refutes" | "ambiguous", rho, note)}.

    `trials` is the task's corpus of passing trials (rho is computed over all of them);
    `runs_by_trial` maps trial id -> witness id -> status on that trial's model world;
    `signatures` trial id -> witness id -> how it failed there (rho groups failures by it).
    """
    from testjack_tui.engine.hooks import WitnessClass as HookClass

    trial_models = {t.id: t.model for t in trials if getattr(t, "official_pass", True)}
    classes = classify_facts(facts_from_records(witnesses, runs_by_trial, task.instruction, signatures),
                             trial_models, task.instruction)
    out = {}
    for wid, c in classes.items():
        note = c.clarification if c.klass == AMBIGUOUS else c.note
        if c.klass == AMBIGUOUS and c.note:
            note = f"{c.clarification} ({c.note})"
        out[wid] = HookClass("ambiguous" if c.klass == AMBIGUOUS else "refutes", round(c.rho, 4), note,
                             settled=c.klass == EXPLICIT)  # rho does not decide an explicit class
    return out
