"""WorldTools bound to one task's prepared worlds, for one agent session.

Each world gets one long-lived container (`Sandbox.open`) the first time a tool touches it,
so an agent's commands within a session share state the way a developer's shell would;
`aclose()` (or leaving `async with`) removes them. Candidate files written by the agent are
copied into every open container and into containers opened later.

Only the worlds passed in are reachable: the engine gives the task-analysis role just the
null world and no trial, so nothing here can show it G or a trial's patch. A sealed world (the
reference: see `sealed`) only runs tests, and what they print comes back with G's code withheld.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Mapping

from testjack_tui.engine.assertion_lines import asserted_lines, runner_hint
from testjack_tui.engine.budgeted import BudgetedWorld, budgeted
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.model import Task, Trial

from .request_budget import official_tests_view
from .sealed import FORGET_FUTURE, SEALED_WORLDS, probe_refusal, reference_lines, withhold

NO_TRIAL = "(no trial in this session)"
# Models type `python`; images often have only python3. Commands run under sh -c, where a
# function stands in for the missing name (the shell's own commands see it; subprocesses do not).
PYTHON_SHIM = 'command -v python >/dev/null 2>&1 || python() { python3 "$@"; }\n'


# The repository (and its src/ folder) importable from any directory a command cds to: a model
# that wrote a script under /tmp lost a turn to "No module named ..." (issue 31.7).
REPO_IMPORTABLE = ('PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"; '
                   'if [ -d src ]; then PYTHONPATH="$PWD/src:$PYTHONPATH"; fi; export PYTHONPATH\n')


def with_shims(command: str) -> str:
    return PYTHON_SHIM + REPO_IMPORTABLE + command


_LOCATION = re.compile(r"^([\w./-]+\.\w+):(\d+)(:|$)")
STATUS_ORDER = ("failed", "error", "timed_out", "not_found", "skipped", "passed")


def failure_lines(message: str, limit: int = 8) -> list[str]:
    """A failure's assertion and the shortest useful traceback: where it failed, then the E lines.

    pytest's report repeats the assertion in its message and its long text; each line is kept once.
    """
    lines = [ln.rstrip() for ln in (message or "").strip().splitlines()]
    asserted = asserted_lines(message)
    where = ""
    for line in lines:
        stripped = line.strip()
        m = _LOCATION.match(stripped)
        # The deepest frame in the repo (a relative path), not the interpreter's own files.
        if m and (not where or not m.group(1).startswith("/")):
            where = stripped
    if not asserted:
        for line in lines:
            text = line.strip()
            if text and not set(text) <= set("_=-") and not runner_hint(text) and text not in asserted:
                asserted.append(text)
            if len(asserted) >= 3:
                break
    out = [f"at {where.strip()}"] if where else []
    out += asserted[:limit]
    if len(asserted) > limit:
        out.append(f"... {len(asserted) - limit} more lines")
    return out


def format_test_run(run: Any, world: str = "") -> str:
    """Summary first, then one line per test (cases, not the files that hold them), failures first,
    each with its assertion and where it failed."""
    requested = list(run.test_ids or [])
    outcomes = dict(run.outcomes)
    # A requested file or class id is reported through the cases collected under it, once.
    for test_id in requested:
        if any(o.startswith((test_id + "::", test_id + "[")) for o in outcomes if o != test_id):
            outcomes.pop(test_id, None)
    for test_id in requested:
        if test_id not in outcomes and not any(o.startswith((test_id + "::", test_id + "["))
                                               for o in outcomes):
            outcomes[test_id] = None
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        status = outcome.status if outcome else "not_found"
        counts[status] = counts.get(status, 0) + 1
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    ordered = sorted(outcomes.items(),
                     key=lambda kv: (rank.get(kv[1].status if kv[1] else "not_found", 9), kv[0]))
    where = f" in the {world} world" if world else ""
    head = (f"{len(outcomes)} test{'s' if len(outcomes) != 1 else ''}{where}: "
            + ", ".join(f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: rank.get(s, 9)))
            if outcomes else f"no test results{where}")
    lines = [head + runner_count(run, outcomes)]
    for test_id, outcome in ordered:
        status = outcome.status if outcome else "not_found"
        lines.append(f"{status.upper():9} {test_id}")
        if status != "passed":
            message = outcome.message if outcome else "no such test was collected"
            lines.extend("    " + line for line in failure_lines(message))
    if not run.outcomes:
        lines += ["[runner output]", run.exec.output]
    return "\n".join(lines)


CASE_WORDS = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")


def runner_count(run: Any, outcomes: Mapping[str, Any]) -> str:
    """The runner's own count of the model's cases, when it differs from the cases listed.

    The runner's summary also counts the canaries run beside the model's tests; they are taken
    out (by the outcomes the runner gave them), so the count is of the model's own cases and
    says nothing of tests the model does not know about (issue 31.7)."""
    from testjack_tui.sandbox.channels import terminal_summary  # pytest's summary line

    summary = terminal_summary(run.exec) if getattr(run, "exec", None) is not None else None
    if summary is None:
        return ""
    _, counts = summary
    canaries = getattr(run, "canary_counts", None) or {}
    own = {w: counts.get(w, 0) - canaries.get(w, 0) for w in CASE_WORDS}
    own = {w: n for w, n in own.items() if n > 0}
    total, listed = sum(own.values()), sum(1 for o in outcomes.values() if o is not None)
    if total == listed:
        return ""
    said = ", ".join(f"{n} {w}" for w, n in own.items())
    return f" (the runner counted {total} of your cases: {said}; {listed} are itemised below)"


def format_exec(result: Any) -> str:
    status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
    return f"[{status}]\n{result.output}"


class SandboxTools:
    def __init__(self, sandbox: SandboxBackend, task: Task, trial: Trial | None, worlds: Mapping[str, Any],
                 evidence: str | Mapping[str, Any] | None = None, sealed: frozenset[str] = SEALED_WORLDS):
        # The session's BudgetedBackend: every execution an agent triggers counts against
        # --budget-runs there (BudgetExceeded pauses the session). A bare backend counts nothing.
        self.sandbox = budgeted(sandbox)
        self.sealed = sealed
        self._secret: frozenset[str] | None = None
        self.task = task
        self.trial = trial
        self.worlds = dict(worlds)  # kind -> WorldRef
        self._evidence = evidence
        self._live: dict[str, BudgetedWorld] = {}
        self._stack = contextlib.AsyncExitStack()
        self.candidates: dict[str, str] = {}

    async def __aenter__(self) -> "SandboxTools":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Remove this session's containers; later tool calls open fresh ones."""
        stack, self._stack = self._stack, contextlib.AsyncExitStack()
        self._live.clear()
        await stack.aclose()

    async def _world(self, world: str) -> BudgetedWorld:
        if world not in self.worlds:
            raise PermissionError(f"world {world!r} is not available in this session "
                                  f"(available: {', '.join(self.worlds) or 'none'})")
        live = self._live.get(world)
        if live is None:
            live = await self._stack.enter_async_context(self.sandbox.open(self.worlds[world]))
            self._live[world] = live
            if world not in self.sealed:  # ours, not the agent's: not counted
                await live.unmetered.exec(FORGET_FUTURE, timeout=120)
            for path, source in self.candidates.items():
                await live.write_file(path, source)
        return live

    # ---- roles.WorldTools -------------------------------------------------------------------
    def _readable(self, world: str, what: str) -> None:
        if world in self.sealed:
            raise PermissionError(f"the {world} world holds the reference solution: {what} there is not "
                                  "available (run_tests there shows outcomes, with its code withheld)")

    async def run(self, world: str, command: str, timeout: float = 60) -> str:
        self._readable(world, "running commands")
        live = await self._world(world)
        return format_exec(await live.exec(with_shims(command), timeout=timeout))

    async def probe(self, world: str, command: str, timeout: float = 60, visible: str = "") -> str:
        """A command on the sealed reference world, to see what G does (not what it is): refused
        when it names a file G changes or is a file reader (sealed.probe_refusal); its output
        comes back with every line of G's code withheld, like a test run's there. `visible`: the
        agent's own files (never withheld). Counted like any run."""
        if world not in self.sealed:
            raise PermissionError(f"a probe is for the sealed reference world; use run in {world}")
        refused = probe_refusal(command, self.task)
        if refused:
            raise PermissionError(refused)
        live = await self._world(world)
        if self._secret is None:
            self._secret = reference_lines(self.task)
        text = format_exec(await live.exec(with_shims(command), timeout=timeout))
        return withhold(text, self._secret, visible + "\n" + command)

    async def read_file(self, world: str, path: str) -> str:
        self._readable(world, "reading files")
        live = await self._world(world)
        return await live.read_file(path)

    async def list_files(self, world: str, path: str = ".") -> str:
        self._readable(world, "listing files")
        live = await self._world(world)
        return "\n".join(await live.list_files(path))

    async def run_tests(self, world: str, test_ids: list[str], files: dict[str, str] | None = None) -> str:
        live = await self._world(world)
        run = await live.run_tests(list(test_ids), files=files or None)
        text = format_test_run(run, world)
        if world in self.sealed:
            if self._secret is None:
                self._secret = reference_lines(self.task)
            text = withhold(text, self._secret, "\n".join((files or {}).values()))
        return text

    def diff(self) -> str:
        return self.trial.patch if self.trial is not None else NO_TRIAL

    def official_tests(self) -> str:
        return official_tests_view(self.task.tests, limit=10**12)  # whole: the tool pages it

    def evidence(self) -> str:
        if not self._evidence:
            return "(no deterministic evidence was collected for this trial)"
        if isinstance(self._evidence, str):
            return self._evidence
        from .evidence_view import evidence_facts

        return evidence_facts(dict(self._evidence))

    # ---- extras the toolbox uses ------------------------------------------------------------
    async def write_candidate(self, path: str, source: str) -> None:
        self.candidates[path] = source
        for live in self._live.values():
            await live.write_file(path, source)
