"""Checks that every claim of a finding's explanations points at something that exists."""
from __future__ import annotations

from testjack_tui.diffs import parse_diff
from testjack_tui.engine.ambiguity import quote_in_prompt
from testjack_tui.engine.explanations import REF_KINDS


def unbacked(claims, *, prompt: str, patch: str, run_keys, test_ids) -> list[str]:
    """Every ref of every claim, checked against what exists."""
    added = {(fd.path, line.number): line.text for fd in parse_diff(patch) for line in fd.added}
    problems = []
    for c in claims:
        c = c if isinstance(c, dict) else c.to_dict()
        if not c["refs"]:
            problems.append(f"{c['part']}: {c['text']!r} points at nothing")
        for r in c["refs"]:
            kind, ref = r["kind"], r["ref"]
            ok = {"run": lambda: ref in run_keys, "test": lambda: ref in test_ids,
                  "quote": lambda: quote_in_prompt(ref, prompt),
                  "diff": lambda: ":" not in ref or (
                      (ref.rsplit(":", 1)[0], int(ref.rsplit(":", 1)[1])) in added
                      and added[(ref.rsplit(":", 1)[0], int(ref.rsplit(":", 1)[1]))].strip() == r["excerpt"].strip())
                  }[kind]()
            if kind not in REF_KINDS or not ok:
                problems.append(f"{c['part']}: {kind} {ref!r} does not exist")
    return problems
