"""The one rule for "is this task well-formed", shared by `verify` and the audit's task check.

Given T0 run on the null world R and on the reference world R[G]:
- well-formed: G passes every T0 test, and every fail-to-pass test fails on R;
- when no T0 test of a world produced any result, that is said once, with the likely cause
  and the runner's last lines (`diagnose`), instead of one complaint per test;
- vacuous tests (a *benchmark finding*): tests T0 adds or changes, or lists as fail-to-pass,
  that already pass on R: they claim to check the change and check nothing. Pre-existing
  pass-to-pass tests passing on R are regression guards: they verify nothing about a trial
  either (the null-world rule), but they are context, not findings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from testjack_tui.diffs import parse_diff
from testjack_tui.model import Task

from .test_ids import file_of

TAIL_LINES = 3
TAIL_CHARS = 300
LIST_CAP = 5
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# A test's definition in the languages T0 is written in: Python's def/class, Go's `func TestX(`,
# Rust's `fn name(`, and the literal title of a JS describe/it/test/suite (vitest, jest, mocha,
# node --test), which is what their ids name.
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)"
                  r"|^\s*func\s+(Test\w*)\s*\("
                  r"|^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)"
                  r"|(?<![\w.$])(?:describe|it|test|suite|context|specify)(?:\.\w+)*\s*\(\s*(['\"`])(.+?)\4")
# What separates the names in a test id of each scheme: pytest `::`, JUnit/Go `.`, vitest/jest
# ` > `, graders' `<file>: <titles>` (ctrf), cargo's `<package>::<target>: <test>`, Go's `/sub`.
_ID_PARTS = re.compile(r"::| > |: |/")


def _definition(text: str) -> str:
    match = _DEF.search(text)
    return next((g for g in match.group(1, 2, 3, 5) if g), "") if match else ""


def id_names(test_id: str) -> set[str]:
    """The names a test id is made of, in any scheme the benchmarks use: pytest and JUnit
    (`tests/test_x.py::C::t`, `tests.test_x.C.t`), vitest/jest (`file > describe > title`),
    ctrf (`file: describe title`), Go (`<import path>.TestX/sub`), cargo (`pkg::target: t`).
    A JS title may hold dots: split both with and without them."""
    head = test_id.partition("[")[0]
    parts = set(_ID_PARTS.split(head))
    return parts | {p for part in parts for p in part.split(".")} | {head.rsplit(": ", 1)[-1]}


def id_file(test_id: str, files: Sequence[str]) -> str:
    """The test file an id names, in any scheme (pytest/JUnit through test_ids.file_of; JS ids
    start with their file before `: `, `::` or ` > `)."""
    for sep in (": ", "::", " > "):
        head = test_id.split(sep, 1)[0]
        if head != test_id and " " not in head and "." in head.rsplit("/", 1)[-1] and not head.endswith(".py"):
            return head
    return file_of(test_id, files)


class T0Run(Protocol):
    """What the rule reads of a T0 run (testjack_tui.sandbox.api.TestRun and the engine's stored RunResult)."""

    flow: str
    reported: int

    def status(self, test_id: str) -> str: ...

    @property
    def output(self) -> str: ...

    @property
    def exit_code(self) -> int | None: ...


@dataclass
class Assessment:
    well_formed: bool
    problems: list[str] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)
    regression_guards: list[str] = field(default_factory=list)
    f2p_passing_on_null: list[str] = field(default_factory=list)
    reference_failures: list[str] = field(default_factory=list)
    diagnoses: dict[str, str] = field(default_factory=dict)  # world kind -> one line


def changed_tests(test_patch: str) -> tuple[set[str], dict[str, set[str]]]:
    """(files the test patch creates, {file: names of functions/classes it adds or edits}),
    read from the one diff parser (`testjack_tui.diffs`)."""
    new_files: set[str] = set()
    changed: dict[str, set[str]] = {}
    for f in parse_diff(test_patch):
        if f.status == "added":
            new_files.add(f.path)
        current_def = ""
        for tag, _number, text in f.rows:
            if tag == "@":
                current_def = _definition(text.split("@@", 2)[-1])
                continue
            found = _definition(text)
            if found and tag in (" ", "+"):
                current_def = found
            # A decorator or attribute line (`@pytest.mark...`, `#[test]`) belongs to the next definition.
            if tag in "+-" and current_def and text.strip() and not text.strip().startswith(("@", "#[")):
                changed.setdefault(f.path, set()).add(current_def)
    return new_files, changed


def added_or_changed(task: Task) -> set[str]:
    """T0 ids whose test T0 adds or edits (by its test patch), in the benchmark's scheme."""
    new_files, changed = changed_tests(task.tests.test_patch or "")
    files = list(task.tests.test_files)
    out = set()
    every_name = set().union(*changed.values()) if changed else set()
    for test_id in task.tests.ids:
        path = id_file(test_id, files)
        if path in new_files:
            out.add(test_id)
            continue
        # Go and cargo ids do not name their file: a name T0 adds or edits anywhere counts.
        names = (changed.get(path, set()) if path in changed or path in files
                 else every_name)
        # ctrf's `<file>: <describe> <title>` joins the titles with spaces.
        tail = test_id.rsplit(": ", 1)[-1]
        if names & id_names(test_id) or any(tail.endswith(" " + n) for n in names):
            out.add(test_id)
    return out


def _clean(text: str) -> str:
    return _CONTROL.sub("?", text)


def output_tail(text: str) -> str:
    lines = [_clean(line.strip()) for line in (text or "").splitlines() if line.strip()]
    lines = [line if len(line) <= 160 else line[:157] + "..." for line in lines[-TAIL_LINES:]]
    tail = " | ".join(lines)
    return tail if len(tail) <= TAIL_CHARS else "..." + tail[-(TAIL_CHARS - 3):]


def other_python(ids: Sequence[str], output: str) -> str | None:
    """Why Django ids match nothing when the log names T0's tests in the other Python's form:
    unittest describes a test as `test_m (app.mod.Class)` before Python 3.11 and
    `test_m (app.mod.Class.test_m)` since, and the harness matches ids exactly."""
    from .runners.django_runner import other_form

    for test_id in ids:
        other = other_form(test_id)
        if other and f"{other} ..." in output:
            short = len(other) > len(test_id)
            return (f"T0 names Django tests as Python {'before 3.11' if short else '3.11+'} describes them "
                    f"(`{test_id}`), the log as Python {'3.11+' if short else 'before 3.11'} does "
                    f"(`{other}`): the image runs another Python than T0 was recorded with, and the "
                    "harness matches ids exactly (SWE-bench runs Django 4.x on Python 3.8/3.9, 5.x on 3.11)")
    return None


def diagnose(kind: str, run: T0Run, ids: Sequence[str]) -> str | None:
    """One line when no T0 test of this world produced a result; None when some did."""
    if not ids or any(run.status(i) != "not_found" for i in ids):
        return None
    output = run.output or ""
    lowered = output.lower()
    code = run.exit_code
    if "error collecting" in lowered or "during collection" in lowered:
        cause = "a collection error"
    elif code in (126, 127) or "command not found" in lowered or "no module named pytest" in lowered:
        cause = f"the test runner failed to start (exit {code})"
    elif run.reported:
        cause = other_python(ids, output) or (
            f"none of T0's {len(ids)} ids matches any of the {run.reported} tests the run "
            "reported (ids written in another scheme?)")
    elif "importerror" in lowered or "modulenotfounderror" in lowered:
        cause = "an import error"
    elif run.flow == "direct" and "TJ_FILES []" in output:
        cause = "T0's ids name no test file that exists in the repo"
    else:
        cause = f"the run wrote no report of any T0 test (exit {code})"
    tail = output_tail(output)
    return f"{kind} world: no T0 test produced a result: {cause}" + (f"; last output: {tail}" if tail else "")


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:LIST_CAP])
    return shown + (f" and {len(items) - LIST_CAP} more" if len(items) > LIST_CAP else "")


def assess(task: Task, null_run: T0Run | None, ref_run: T0Run | None) -> Assessment:
    """The verdict on the task from its null and reference runs (None: that world did not run)."""
    ids = list(dict.fromkeys(task.tests.ids))
    result = Assessment(well_formed=True)
    if not ids:
        result.problems.append("T0 lists no test ids (fail-to-pass and pass-to-pass are empty)")
    f2p = set(task.tests.fail_to_pass)
    if null_run is not None and ids:
        diagnosis = diagnose("null", null_run, ids)
        if diagnosis:
            result.diagnoses["null"] = diagnosis
            result.problems.append(diagnosis)
        else:
            passing = [i for i in ids if null_run.status(i) == "passed"]
            claimed = f2p | added_or_changed(task)
            result.vacuous = [i for i in passing if i in claimed]
            result.regression_guards = [i for i in passing if i not in claimed]
            result.f2p_passing_on_null = [i for i in passing if i in f2p]
            found = result.f2p_passing_on_null
            if len(found) == 1:
                result.problems.append(f"fail-to-pass test {found[0]} passes on the null world")
            elif found:
                result.problems.append(f"{len(found)} fail-to-pass tests pass on the null world: "
                                       + _listed(found))
    if ref_run is not None and ids:
        diagnosis = diagnose("reference", ref_run, ids)
        if diagnosis:
            result.diagnoses["reference"] = diagnosis
            result.problems.append(diagnosis)
        else:
            result.reference_failures = [i for i in ids if ref_run.status(i) != "passed"]
            bad = [f"{i} ({_status_text(ref_run, i)})" for i in result.reference_failures]
            if bad:
                result.problems.append(f"G does not pass T0: {len(bad)} test(s) not passing on the "
                                       "reference world: " + _listed(bad))
    result.well_formed = not result.problems
    return result


def _status_text(run: T0Run, test_id: str) -> str:
    status = run.status(test_id)
    if status == "not_found":
        return "missing from report" if run.flow == "official" else "not found"
    return status
