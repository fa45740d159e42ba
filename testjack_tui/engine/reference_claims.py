""""The reference contradicts P here": a task finding, not a give-up.

A test that checks words of P can fail on the reference because the reference itself breaks
them (it moves data P says must round-trip, keeps what P says to drop, crashes). Bending the
test until the reference passes would hide that; giving up would lose it. The author (the audit
agent or the task analyst, answering a repair request or in its report) says so with the words
of P, what the reference does instead and the run's lines that show it. The engine keeps the
claim with its own record of the reference's run beside it, and the task's report lists it: the
task is not well-formed on that point. The test is dropped as a witness (it fails on the
reference), never used to refute a trial, and never silently.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .records import FlatRecord, JsonObject
from .records_agent import ReferenceContradiction
from .roles import Candidate

PREFIX = "reference_contradicts:"  # key of the record in the store's audits table
OUTPUT_CHARS = 1500  # the engine's record of the reference run kept beside the claim


@dataclass(frozen=True)
class ReferenceClaim(FlatRecord):
    """One claim as stored (the audits table's JSON, in this field order)."""

    task_id: str
    by: str  # who said it, in the report's words (author_name)
    source_trial: str | None  # the trial whose audit said it
    quote: str  # the words of P the reference breaks
    claim: str  # what the reference does instead
    output: str = ""  # the run's lines the author quotes
    candidate_id: str = ""  # the test that backs it, when one does
    path: str = ""
    reference_run: str = ""  # the engine's own record of that test's run on the reference

    @classmethod
    def from_stored(cls, data: JsonObject) -> "ReferenceClaim":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def claim_record(task_id: str, by: str, item: ReferenceContradiction, *, trial_id: str | None = None,
                 candidate: Candidate | None = None, reference_run: str = "") -> ReferenceClaim | None:
    """The claim to store (None when it quotes nothing of P or says nothing). `item`: the
    author's answer; `reference_run`: what the engine's run on the reference showed for the
    test, when a test backs it."""
    quote = item.quote.strip()
    claim = item.claim.strip()
    if not quote or not claim:
        return None
    return ReferenceClaim(task_id, by, trial_id, quote, claim, output=item.output.strip(),
                          candidate_id=candidate.id if candidate else "",
                          path=candidate.path if candidate else "",
                          reference_run=reference_run[:OUTPUT_CHARS])


def author_name(author: str) -> str:
    """Who made a claim, in the report's words (a candidate's `author` field)."""
    return {"audit": "audit agent", "task_analysis": "task analyst"}.get(author, author)


def key_of(claim: ReferenceClaim) -> str:
    if claim.candidate_id:
        return PREFIX + claim.candidate_id
    return PREFIX + f"{claim.source_trial}:{claim.quote[:80]}"


def record(store: Any, claim: ReferenceClaim | None) -> bool:
    """Store a claim once (a resumed session never records it twice). True when new."""
    if claim is None:
        return False
    key = key_of(claim)
    if store.get_audit(claim.task_id, key) is not None:
        return False
    store.put_audit(claim.task_id, key, claim.to_json())
    return True


def of_candidate(store: Any, task_id: str, candidate_id: str) -> ReferenceClaim | None:
    found = store.get_audit(task_id, PREFIX + candidate_id)
    return ReferenceClaim.from_stored(found) if found else None


def stored(store: Any, task_id: str | None = None) -> list[ReferenceClaim]:
    """Every claim of the session (or of one task), oldest first."""
    return [ReferenceClaim.from_stored({"task_id": a.task_id} | a.data)
            for a in store.audits() if a.key.startswith(PREFIX) and (task_id is None or a.task_id == task_id)]


def drop_reason(status: str, claim: ReferenceClaim) -> str:
    """Why a candidate whose author answered with a claim is dropped."""
    return (f"fails on the reference ({status}); its author says the reference contradicts P: "
            f"\"{claim.quote}\" ({claim.claim})")


def markdown_lines(claims: list[ReferenceClaim]) -> list[str]:
    """The report's lines for a task's claims (one bullet each, who said it, P, the run)."""
    out = []
    for c in claims:
        test = f" test `{c.candidate_id}`" if c.candidate_id else ""
        where = f" (audit of {c.source_trial})" if c.source_trial else ""
        out.append(f"- {c.by}{where}{test}: P says \"{c.quote}\"; the reference {c.claim}.")
        if c.output:
            out.append(f"  - run output quoted: `{_one_line(c.output)}`")
        if c.reference_run:
            out.append(f"  - the engine's reference run: `{_one_line(c.reference_run)}`")
    return out


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ⏎ ".join(line.strip() for line in str(text).splitlines() if line.strip()).replace("`", "'")
    return flat if len(flat) <= limit else flat[:limit] + " …"
