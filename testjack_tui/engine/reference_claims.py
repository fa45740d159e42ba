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

from typing import Any

PREFIX = "reference_contradicts:"  # key of the record in the store's audits table
OUTPUT_CHARS = 1500  # the engine's record of the reference run kept beside the claim


def claim_record(task_id: str, by: str, item: dict[str, Any], *, trial_id: str | None = None,
                 candidate: Any = None, reference_run: str = "") -> dict[str, Any] | None:
    """The stored claim (None when it quotes nothing of P or says nothing). `item`: the
    author's {quote, claim, output}; `reference_run`: what the engine's run on the reference
    showed for the test, when a test backs it."""
    quote = str(item.get("quote") or "").strip()
    claim = str(item.get("claim") or "").strip()
    if not quote or not claim:
        return None
    return {"task_id": task_id, "by": by, "source_trial": trial_id, "quote": quote, "claim": claim,
            "output": str(item.get("output") or "").strip(),
            "candidate_id": getattr(candidate, "id", "") or "", "path": getattr(candidate, "path", "") or "",
            "reference_run": reference_run[:OUTPUT_CHARS]}


def author_name(author: str) -> str:
    """Who made a claim, in the report's words (a candidate's `author` field)."""
    return {"audit": "audit agent", "task_analysis": "task analyst"}.get(author, author)


def key_of(record: dict[str, Any]) -> str:
    if record.get("candidate_id"):
        return PREFIX + str(record["candidate_id"])
    return PREFIX + f"{record.get('source_trial')}:{record.get('quote', '')[:80]}"


def record(store: Any, record: dict[str, Any] | None) -> bool:
    """Store a claim once (a resumed session never records it twice). True when new."""
    if record is None:
        return False
    key = key_of(record)
    if store.get_audit(record["task_id"], key) is not None:
        return False
    store.put_audit(record["task_id"], key, record)
    return True


def of_candidate(store: Any, task_id: str, candidate_id: str) -> dict[str, Any] | None:
    found = store.get_audit(task_id, PREFIX + candidate_id)
    return dict(found) if found else None


def stored(store: Any, task_id: str | None = None) -> list[dict[str, Any]]:
    """Every claim of the session (or of one task), oldest first."""
    return [{k: v for k, v in ({"task_id": a.task_id} | a.data).items() if k != "trial_id"}
            for a in store.audits() if a.key.startswith(PREFIX) and (task_id is None or a.task_id == task_id)]


def drop_reason(status: str, claim: dict[str, Any]) -> str:
    """Why a candidate whose author answered with a claim is dropped."""
    return (f"fails on the reference ({status}); its author says the reference contradicts P: "
            f"\"{claim.get('quote')}\" ({claim.get('claim')})")


def markdown_lines(claims: list[dict[str, Any]]) -> list[str]:
    """The report's lines for a task's claims (one bullet each, who said it, P, the run)."""
    out = []
    for c in claims:
        test = f" test `{c['candidate_id']}`" if c.get("candidate_id") else ""
        where = f" (audit of {c['source_trial']})" if c.get("source_trial") else ""
        out.append(f"- {c.get('by')}{where}{test}: P says \"{c.get('quote')}\"; the reference "
                   f"{c.get('claim')}.")
        if c.get("output"):
            out.append(f"  - run output quoted: `{_one_line(c['output'])}`")
        if c.get("reference_run"):
            out.append(f"  - the engine's reference run: `{_one_line(c['reference_run'])}`")
    return out


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ⏎ ".join(line.strip() for line in str(text).splitlines() if line.strip()).replace("`", "'")
    return flat if len(flat) <= limit else flat[:limit] + " …"
