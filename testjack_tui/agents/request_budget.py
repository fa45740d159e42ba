"""What a request keeps when its material is larger than its budget.

A request's decisive parts come first and are never cut: the fail-to-pass ids and the
sections of the test patch that hold those tests (what they assert), then the trial's patch
file by file (source before tests and configuration). Long id lists (pass-to-pass) and the
other sections go first when something must go, and every cut says what it dropped and the
tool that pages it back (`view_official_tests`, `view_diff`, both paged by `read_more`).
Cuts are whole file sections or whole ids, never the middle of a test.
"""
from __future__ import annotations

import re

from testjack_tui.diffs import parse_diff
from testjack_tui.engine.detectors.scope import categorize
from testjack_tui.engine.records_agent import ValidatedTest
from testjack_tui.model import OfficialTests

T0_BUDGET = 24_000  # characters of the official tests shown in a first request
PATCH_BUDGET = 30_000  # characters of the trial's patch shown in a first request
_WORD = re.compile(r"[A-Za-z_]\w*")


def _id_path(test_id: str) -> str:
    return test_id.split("::", 1)[0].split(" ", 1)[0]


def _id_name(test_id: str) -> str:
    """The test's own name: `test_x` of `a.py::C::test_x[1]` or `test_x (app.tests.C)`, `TestFoo`."""
    match = _WORD.search(test_id.rsplit("::", 1)[-1])
    return match.group(0) if match else ""


def holds_test(path: str, text: str, test_ids: tuple[str, ...] | list[str]) -> bool:
    """Does this file section of the test patch define (or host) one of these tests?"""
    for test_id in test_ids:
        if _id_path(test_id) == path:
            return True
        name = _id_name(test_id)
        if len(name) >= 4 and re.search(rf"\b{re.escape(name)}\b", text):
            return True
    return False


def _ids(title: str, ids: list[str], room: int) -> tuple[list[str], int]:
    """The heading and as many whole ids as fit in `room` characters; how many were left out."""
    out = [f"{title}: {len(ids)}"]
    used = len(out[0])
    for shown, test_id in enumerate(ids):
        line = f"  {test_id}"
        if used + len(line) + 1 > room:
            return out, len(ids) - shown
        out.append(line)
        used += len(line) + 1
    return out, 0


def official_tests_view(tests: OfficialTests, limit: int = T0_BUDGET) -> str:
    """T0 for a request: every fail-to-pass id and the test-patch sections that hold them, whole;
    then the other sections and the pass-to-pass ids while they fit; each cut named."""
    f2p = [str(t) for t in tests.fail_to_pass]
    p2p = [str(t) for t in tests.pass_to_pass]
    sections = [(f.path, f.text) for f in parse_diff(tests.test_patch)] if tests.test_patch else []
    if tests.test_patch and not sections:
        sections = [("test patch", tests.test_patch)]
    decisive = [(p, t) for p, t in sections if holds_test(p, t, f2p)]
    if not decisive:  # no section could be tied to a fail-to-pass id: none may be dropped
        decisive = sections
    others = [(p, t) for p, t in sections if (p, t) not in decisive]
    parts = [f"framework: {tests.framework}",
             "fail-to-pass (must fail before the change, pass after):",
             *[f"  {t}" for t in f2p]]
    if decisive:
        parts.append("test patch, the files holding the fail-to-pass tests (whole):")
        parts += [text.rstrip("\n") for _, text in decisive]
    used = sum(len(p) + 1 for p in parts)
    cut_files: list[str] = []
    kept_others = []
    for path, text in others:
        if used + len(text) + 1 <= limit - 2_000:  # room is left for some pass-to-pass ids
            kept_others.append(text.rstrip("\n"))
            used += len(text) + 1
        else:
            cut_files.append(path)
    if kept_others:
        parts.append("test patch, other files:")
        parts += kept_others
    listed, cut_ids = _ids("pass-to-pass (must keep passing)", p2p, max(limit - used, 400))
    parts += listed
    cuts = []
    if cut_ids:
        cuts.append(f"{cut_ids} of {len(p2p)} pass-to-pass ids")
    if cut_files:
        cuts.append(f"the test patch's sections for {', '.join(cut_files[:10])}"
                    + (f" and {len(cut_files) - 10} more files" if len(cut_files) > 10 else ""))
    if cuts:
        parts.append(f"[cut to fit this request: {'; '.join(cuts)}. Call view_official_tests for T0 "
                     "whole, in pages (read_more).]")
    return "\n".join(parts)


def _counts(text: str) -> str:
    lines = text.splitlines()
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return f"+{added} -{removed}"


def patch_view(patch: str, limit: int = PATCH_BUDGET) -> str:
    """The trial's patch for a request: whole when it fits; else whole file sections, source
    files first, and the names of the sections left out with the tool that shows them."""
    if len(patch) <= limit:
        return patch
    sections = parse_diff(patch)
    if not sections:
        head = patch[:limit].rsplit("\n", 1)[0]
        return (f"{head}\n[cut to fit this request: the last {len(patch) - len(head)} characters of the "
                "patch. Call view_diff for the whole patch, in pages (read_more).]")
    order = sorted(range(len(sections)), key=lambda i: (categorize(sections[i].path) is not None, i))
    kept: set[int] = set()
    used = 0
    for i in order:
        size = len(sections[i].text) + 1
        if used + size <= limit:
            kept.add(i)
            used += size
    if not kept:  # one section larger than the whole budget: its head, cut at a line end
        first = sections[order[0]]
        head = first.text[:limit].rsplit("\n", 1)[0]
        body = [f"{head}\n[... {first.path}: {len(first.text) - len(head)} more characters ...]"]
        dropped = [f for i, f in enumerate(sections) if i != order[0]]
    else:
        body = [sections[i].text.rstrip("\n") for i in sorted(kept)]
        dropped = [f for i, f in enumerate(sections) if i not in kept]
    note = ", ".join(f"{f.path} ({_counts(f.text)})" for f in dropped[:20])
    if len(dropped) > 20:
        note += f" and {len(dropped) - 20} more files"
    what = f"the sections for {note}" if dropped else "the rest of that section"
    return "\n".join(body) + (f"\n[cut to fit this request: {what}. Call view_diff for the whole patch, "
                              "in pages (read_more).]")


VALIDATED_BUDGET = 6_000  # characters of the task's validated tests shown to an auditor


def validated_view(tests: list[ValidatedTest], limit: int = VALIDATED_BUDGET) -> str:
    """The task's validated tests for an auditor, one line each (path, kind, what it checks, its
    outcome on this trial); when they do not fit, the last ones go and the cut says how many."""
    lines = [f"- {t.path} ({t.kind}; on this trial: {t.outcome or 'not run'}): {t.requirement}" for t in tests]
    used, kept = 0, []
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    if len(kept) < len(lines):
        kept.append(f"[cut to fit this request: the last {len(lines) - len(kept)} of {len(lines)} validated "
                    "tests. Their files are in place; list_files shows them.]")
    return "\n".join(kept)
