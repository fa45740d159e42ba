"""Failures are not all alike: what kind of failure a witness run was, and the log lines that show it.

A runner's status says a test did not pass; it does not say why. A test whose assertion fails is
a statement about behaviour (another reading of the prompt is possible); a run that hangs, is
killed at a memory/disk/pids/cpu limit or crashes is not: it is a defect whatever the prompt
meant. The kinds, as status words the engine stores for a witness on a world:

- `failed`: the test ran and failed (an assertion, or an exception in its body);
- `error`: collection or internal error, or the runner did not report the test (`not_found`);
- `timed_out`: the run hit its wall-clock timeout;
- `killed_memory` / `killed_disk` / `killed_pids` / `killed_cpu`: stopped at a resource limit;
- `crashed`: the process died of a signal (segfault, abort) or the interpreter aborted.

Every runner's outcomes pass through `kind_of` (the engine's `RunResult.status_of`), so the rule
is the same for pytest, Django, go test, the JavaScript runners and cargo: it reads the run's
exit status and the decisive lines of its output, not a runner's format.
"""
from __future__ import annotations

import re
from typing import Iterable

KILLED_MEMORY, KILLED_DISK, KILLED_PIDS, KILLED_CPU = ("killed_memory", "killed_disk", "killed_pids",
                                                       "killed_cpu")
CRASHED = "crashed"
TIMED_OUT = "timed_out"
# Failures that are never "another reading of the prompt" (the ambiguity rule skips them).
RESOURCE_KINDS = (TIMED_OUT, KILLED_MEMORY, KILLED_DISK, KILLED_PIDS, KILLED_CPU, CRASHED)
_SOFT = ("failed", "error", "not_found")  # what a runner reports; refined below

_LABELS = {TIMED_OUT: "timed out", KILLED_MEMORY: "killed (memory)", KILLED_DISK: "killed (disk)",
           KILLED_PIDS: "killed (pids)", KILLED_CPU: "killed (cpu time)", CRASHED: "crashed",
           "not_found": "error (the runner did not report the test)"}

# Decisive lines per kind: what a runner, the kernel, the interpreter or our sandbox writes.
_PATTERNS: dict[str, re.Pattern[str]] = {
    KILLED_DISK: re.compile(r"No space left on device|ENOSPC|File too large|EFBIG|Disk quota exceeded"
                            r"|\(disk limit\)|wrote more than \d+ MiB", re.I),
    KILLED_MEMORY: re.compile(r"\bMemoryError\b|Cannot allocate memory|\bENOMEM\b|out of memory"
                              r"|OOM[- ]?kill|heap out of memory|memory allocation of \d+ bytes failed"
                              r"|fatal error: runtime: out of memory", re.I),
    KILLED_PIDS: re.compile(r"Resource temporarily unavailable|\bEAGAIN\b|can't start new thread"
                            r"|fork: retry|BlockingIOError: \[Errno 11\]|pthread_create failed"
                            r"|failed to create new OS thread", re.I),
    KILLED_CPU: re.compile(r"SIGXCPU|CPU time limit exceeded", re.I),
    CRASHED: re.compile(r"Segmentation fault|SIGSEGV|SIGABRT|SIGBUS|Fatal Python error|core dumped"
                        r"|stack overflow|panicked at .* aborting", re.I),
    TIMED_OUT: re.compile(r"timed? ?out|Timeout", re.I),
}
_ERROR_LINE = re.compile(r"\b\w*(?:Error|Exception|Warning|error|ERROR)\b|Traceback|panic:|FAIL")
# Exit statuses that say how the process ended, whatever it printed (128 + signal, or -signal).
_BY_EXIT = {137: KILLED_MEMORY, -9: KILLED_MEMORY, 152: KILLED_CPU, -24: KILLED_CPU,
            139: CRASHED, -11: CRASHED, 134: CRASHED, -6: CRASHED, 135: CRASHED, -7: CRASHED,
            136: CRASHED, -8: CRASHED, 132: CRASHED, -4: CRASHED}


def kind_of(status: str, *, exit_code: int | None = None, timed_out: bool = False,
            message: str = "", output: str = "") -> str:
    """The failure kind of one witness's status in one run. `message`: the witness's own failure
    text (its assertion, its exception); `output`: the whole run's output. A pass, a skip, an
    unverifiable run and a kind already refined are returned as they are."""
    if status not in _SOFT:
        return status
    if timed_out:
        return TIMED_OUT
    # The witness's own text first: its test ran into the limit (ENOSPC, MemoryError, EAGAIN).
    for kind in (KILLED_DISK, KILLED_MEMORY, KILLED_PIDS, KILLED_CPU, CRASHED):
        if _PATTERNS[kind].search(message or ""):
            return kind
    # Then how the process ended: a kill or a signal ends every test of the run.
    by_exit = _BY_EXIT.get(exit_code) if exit_code is not None else None
    if by_exit in (KILLED_MEMORY, CRASHED):
        # A SIGKILL or an abort whose log names the limit: our disk guard kills with SIGKILL and
        # says so; node aborts when its heap is full.
        for kind in (KILLED_DISK, KILLED_MEMORY, KILLED_PIDS):
            if _PATTERNS[kind].search(output or ""):
                return kind
    if by_exit is not None:
        return by_exit
    if status == "failed":
        return status
    # The runner did not report the test (error / not_found): its output says why, if anything.
    for kind in (KILLED_DISK, KILLED_MEMORY, KILLED_PIDS, CRASHED):
        if _PATTERNS[kind].search(output or ""):
            return kind
    return status  # "not_found" stays: label() reads it as an error the runner did not report


def never_a_reading(status: str | None) -> bool:
    """A witness outcome no reading of the prompt explains (a hang, a kill, a crash): it refutes
    the trial whatever the ambiguity rule says of the witness (the reference passed it)."""
    return status in RESOURCE_KINDS


def label(status: str) -> str:
    """The kind as people read it: "killed (memory)", "timed out", "failed"."""
    return _LABELS.get(status, status.replace("_", " "))


def cause(status: str, message: str = "", output: str = "", limit: int = 3) -> str:
    """The decisive log lines of a failure, at most `limit`, joined by " | ": the lines that show
    its kind, else the last error lines of the witness's message, else of the run's output."""
    pattern = _PATTERNS.get(status)
    for text in (message, output):
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
        picked = [ln for ln in lines if pattern is not None and pattern.search(ln)]
        if not picked:
            picked = [ln for ln in lines if _ERROR_LINE.search(ln)]
        if picked:
            return " | ".join(_short(ln) for ln in _unique(picked)[-limit:])
    return ""


def _unique(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _short(line: str, width: int = 200) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


AUDIT_FAILED = "audit_failed"  # a trial's or task's state: no candidate could run on the reference
RUNNABLE = ("passed", "failed")  # a reference run in which the runner reported the test


def void_audit(reference_runs: Iterable[tuple[str, str]]) -> str:
    """Why an audit of a task measured nothing, or "" when it did.

    `reference_runs`: (status, cause) of every candidate's run on the reference world. The audit
    is void when there was at least one and the runner reported none of them (every one ended in
    an error, not_found, a timeout, a kill or a crash): a witness that cannot run on the reference
    says nothing about any trial, so its trials are unaudited, never sound."""
    runs = list(reference_runs)
    if not runs or any(status in RUNNABLE for status, _ in runs):
        return ""
    counts: dict[str, int] = {}
    for status, _ in runs:
        counts[label(status)] = counts.get(label(status), 0) + 1
    causes = _unique(c for _, c in runs if c)
    what = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return (f"no candidate could run on the reference world ({what})"
            + (f": {causes[0]}" if causes else ""))
