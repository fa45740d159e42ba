"""`testjack-tui audit BENCHMARK`, `testjack-tui resume SESSION`, `testjack-tui sessions`.

Headless runs render the engine's events as progress lines and write summary.json. Without
--auto-approve, in a terminal, each reviewer verdict is put to the operator on stdin.
"""
from __future__ import annotations

import asyncio
import json
import queue
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TextIO

import typer

from testjack_tui.safe_text import echo, print_safe

from testjack_tui.errors import InputError
from testjack_tui.safe_paths import output_folder

if TYPE_CHECKING:
    from testjack_tui.engine.events import BudgetChanged
    from testjack_tui.engine.session import AuditSession, SessionConfig
    from testjack_tui.engine.store import SessionStore
    from testjack_tui.engine.summary import SessionSummary

EXIT = {"finished": 0, "failed": 1, "paused": 3, "stopped": 130}
EXIT_AUDIT_FAILED = 4  # the session finished, but some task's audit could not run (engine/audit_failures.py)
EXIT_AWAITING = 5  # finished, but judgements wait for a person (summary.json `awaiting_operator`)


# -- rendering ----------------------------------------------------------------------------------
class ProgressPrinter:
    """Turns engine events into short progress lines (one per meaningful step)."""

    def __init__(self, out: TextIO | None = None, verbose: bool = False) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        self.lock = threading.Lock()
        self.settled: dict[str, set[str]] = {}
        self.corpus: dict[str, int] = {}
        self.last_budget = ""
        self.world_nodes: dict[str, str] = {}  # world -> cluster node last seen running it
        self.progress_shown: dict[tuple[str, str, str | None], tuple[float, str]] = {}  # (role, task, trial) -> (elapsed, state) shown
        self.scripts_shown: set[tuple[str, str]] = set()  # (container, multi-line command) printed whole

    PROGRESS_EVERY = 30.0  # seconds between "still waiting" lines of one agent request

    def _agent_progress(self, e: Any) -> None:
        who = f"{e.role} {e.task_id}/{e.trial_id or 'analysis'}"
        key = (e.role, e.task_id, e.trial_id)
        if e.state == "retrying":
            self.line(f"{who}: {e.model}: attempt {e.attempt} of {e.max_attempts} failed: {e.reason}; "
                      f"retrying in {e.delay:.0f}s")
        elif e.state == "failed":
            self.line(f"{who}: {e.model}: request failed after {e.attempt} attempt(s): {e.reason}")
        elif e.state in ("waiting", "streaming"):
            if e.elapsed <= 0:
                self.progress_shown[key] = (0.0, "waiting")
                if self.verbose:
                    self.line(f"{who}: asking {e.model}")
                return
            shown_at, shown_state = self.progress_shown.get(key, (0.0, "waiting"))
            # A line every PROGRESS_EVERY seconds, and one when the first tokens arrive after a
            # wait that was long enough to be reported.
            first_tokens = e.state == "streaming" and shown_state == "waiting" and shown_at > 0
            if e.elapsed - shown_at < self.PROGRESS_EVERY and not first_tokens:
                return
            self.progress_shown[key] = (e.elapsed, e.state)
            if e.state == "waiting":
                self.line(f"{who}: waiting on {e.model} ({e.elapsed:.0f}s, nothing received yet)")
            else:
                self.line(f"{who}: {e.model} is answering ({e.received} characters in {e.elapsed:.0f}s)")
        elif e.state == "done" and self.verbose:
            self.line(f"{who}: {e.model} answered ({e.received} characters in {e.elapsed:.0f}s)")

    def line(self, text: str) -> None:
        with self.lock:
            print_safe(f"[{time.strftime('%H:%M:%S')}] {text}", file=self.out, flush=True)

    def _bar(self, task_id: str) -> str:
        total = self.corpus.get(task_id, 0)
        done = len(self.settled.get(task_id, ()))
        if not total:
            return ""
        width = 20
        filled = int(width * done / total)
        return f" [{'#' * filled}{'.' * (width - filled)}] {done}/{total} settled"

    def __call__(self, e: Any) -> None:  # noqa: C901 - one branch per event kind
        kind = getattr(e, "kind", "")
        task = getattr(e, "task_id", "")
        if kind == "session_started":
            self.line(f"session {e.session_id}: {e.benchmark} ({e.mode}, {len(e.tasks)} tasks, agent {e.agent})")
        elif kind == "task_checked":
            if e.well_formed:
                extra = (f"; {len(e.vacuous)} vacuous T0 test(s): added or changed by T0 and already "
                         "passing on the null world" if e.vacuous else "")
                self.line(f"{task}: well-formed{extra}")
            else:
                self.line(f"{task}: NOT well-formed, excluded: " + "; ".join(e.problems))
        elif kind == "trial_state":
            if e.state == "active":
                self.corpus[task] = self.corpus.get(task, 0) + 1
            elif e.state in ("not_reproducible", "excluded"):
                self.line(f"{task}: trial {e.trial_id} {e.state.replace('_', ' ')}: {e.by}")
            elif e.state in ("clean", "ambiguous"):
                self.settled.setdefault(task, set()).add(e.trial_id)
                self.line(f"{task}: trial {e.trial_id} audited: {e.state}{self._bar(task)}")
            elif e.state == "refuted":
                self.settled.setdefault(task, set()).add(e.trial_id)
            elif e.state == "audit_failed":  # engine/failure_kinds.AUDIT_FAILED
                self.settled.setdefault(task, set()).add(e.trial_id)
                self.line(f"{task}: trial {e.trial_id} AUDIT FAILED (unaudited, not sound): {e.by}")
        elif kind == "round_started":
            self.line(f"{task}: round {e.round}: auditing {e.trial_id} ({e.active} active)")
        elif kind == "round_finished":
            self.line(f"{task}: round {e.round} done: {len(e.witnesses)} witness(es), "
                      f"{len(e.refuted)} trial(s) refuted{self._bar(task)}")
        elif kind == "candidate_validated":
            # the same test's earlier run on the reference answered (engine/oracle.taken_run)
            same = "".join(f" ({world}: the run of {of}, the same test)" for world, of in
                           (("reference", getattr(e, "reference_of", "")), ("trial", getattr(e, "model_of", ""))) if of)
            if e.outcome == "fails_reference":
                from testjack_tui.engine.failure_kinds import label

                why = f"{label(e.reference)}: {e.cause}" if getattr(e, "cause", "") else label(e.reference)
                self.line(f"{task}: candidate {e.candidate_id} fails on the reference ({why}){same}: back to its author")
            elif self.verbose or e.outcome == "discriminates":
                self.line(f"{task}: candidate {e.candidate_id}: {e.outcome.replace('_', ' ')}{same}")
        elif kind == "candidate_dropped":
            self.line(f"{task}: candidate {e.candidate_id} dropped: {e.reason}")
        elif kind == "reviewer_verdict_event":
            self.line(f"{task}: reviewer: {e.candidate_id} is {e.label}"
                      f" ({'explicit' if e.explicit else 'implicit'}: {e.requirement}){': ' + e.reason if e.reason else ''}")
        elif kind == "approval_answered" and e.by == "queued":
            self.line(f"{task or 'queued'}: {e.candidate_id} is {e.label}: left for the operator, not counted")
        elif kind == "approval_answered" and e.by != "auto":
            self.line(f"operator: {e.candidate_id} {'counts' if e.counts else 'does not count'} ({e.label})")
        elif kind == "witness_confirmed":
            self.line(f"{task}: witness {e.witness_id} confirmed: {e.requirement}")
        elif kind == "trial_refuted":
            self.line(f"{task}: trial {e.trial_id} REFUTED by {e.witness_id} ({e.status})")
        elif kind == "refutation_withdrawn":
            self.line(f"{task}: refutation of {e.trial_id} withdrawn: {e.witness_id} is ambiguous (rho {e.rho:.2f})")
        elif kind == "agent_progress":
            self._agent_progress(e)
        elif kind == "paused":
            self.line(f"paused ({e.reason}){': waiting for ' + e.waiting_for if e.waiting_for else ''}")
        elif kind == "budget_changed":
            self.last_budget = budget_text(e)
            if self.verbose:
                self.line("budget: " + self.last_budget)
        elif kind == "image_progress":
            self.line(f"image: {e.message}")
        elif kind == "log":
            if e.level != "info" or self.verbose:
                self.line(f"{e.level}: {e.message}")
        elif kind == "session_finished":
            self.line(f"session {e.state}{': ' + e.reason if e.reason else ''}"
                      + (f" — {self.last_budget}" if self.last_budget else ""))
        elif self.verbose and kind == "test_run_finished":
            self.line(f"{task}: tests on {e.world}: {e.outcome()}")
        elif kind == "world_state" and getattr(e, "node", "") and e.state != "output":
            self._world_node(e)
        elif self.verbose and kind == "world_state" and e.state not in ("output",):
            self.line(f"world {e.world} {e.container} {e.state} {self._command(e)}".rstrip())

    def _command(self, e: Any) -> str:
        """A multi-line script (a helper run with its source) is printed whole once per
        container; its other states name it by its first line."""
        command = e.command or ""
        if "\n" not in command:
            return command
        key = (e.container, command)
        if key not in self.scripts_shown:
            self.scripts_shown.add(key)
            return command
        first = command.split("\n", 1)[0]
        return f"{first[:120]} [... {command.count(chr(10))} more line(s), shown above]"

    def _world_node(self, e: Any) -> None:
        """On a cluster: where each world runs, once per move, and lost nodes."""
        if e.state == "removed" and not e.container and e.text:
            self.line(f"warning: {e.text}")
            return
        if self.verbose:
            self.line(f"world {e.world} {e.container} {e.state} on {e.node} {self._command(e)}".rstrip())
        elif e.world and self.world_nodes.get(e.world) != e.node:
            self.line(f"world {e.world} on node {e.node}")
        self.world_nodes[e.world] = e.node


def _limit(value: float | None, fmt: str = "{}") -> str:
    return "-" if value is None else fmt.format(value)


def budget_text(e: BudgetChanged) -> str:
    from testjack_tui.engine.budget import usd_text

    return (f"{usd_text(e.usd, getattr(e, 'unpriced', ()))}/{_limit(e.usd_limit, '${:.2f}')}, tokens {e.tokens}/{_limit(e.tokens_limit)}, "
            f"runs {e.test_runs}/{_limit(e.test_runs_limit)}, {e.seconds:.0f}s/{_limit(e.seconds_limit, '{:.0f}s')}"
            + (" (some usage estimated)" if e.estimated else ""))


def summary_table(summary: SessionSummary) -> str:
    rows: list[tuple[str, ...]] = [
        ("TASK", "MODEL", "PASSING", "REFUTED", "AMBIGUOUS", "CLEAN", "UNAUDITED", "NOT-REPRO", "EXCLUDED")]
    for task_id, task in summary.tasks.items():
        for model, c in sorted(task.models.items()):
            rows.append((task_id, model, *(str(c[k]) for k in ("passing", "refuted", "ambiguous", "clean",
                                                                 "unaudited", "not_reproducible", "excluded"))))
    t = summary.totals
    rows.append(("total", "", *(str(t[k]) for k in ("passing", "refuted", "ambiguous", "clean", "unaudited",
                                                      "not_reproducible", "excluded"))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in rows)


# -- operator approvals on stdin ----------------------------------------------------------------
def _one_block(text: str, limit: int = 600) -> str:
    """Untrusted text for one terminal line block: control characters out, length capped."""
    clean = "".join(ch if ch == "\n" or ch.isprintable() else " " for ch in text.strip())
    return clean[:limit] + ("…" if len(clean) > limit else "")


class StdinApprover:
    """Asks the operator about each verdict, one at a time, in a thread (the loop keeps going)."""

    def __init__(self, session: AuditSession, printer: ProgressPrinter, stdin: TextIO | None = None) -> None:
        from testjack_tui.engine.events import ApprovalRequested

        self.session = session
        self.printer = printer
        self.stdin = stdin or sys.stdin
        self.requests: queue.Queue[str | None] = queue.Queue()
        self.kind = ApprovalRequested
        self.thread = threading.Thread(target=self._loop, name="tj-approvals", daemon=True)
        self.thread.start()

    def __call__(self, event: object) -> None:
        if isinstance(event, self.kind):
            self.requests.put(event.request_id)

    def _loop(self) -> None:
        from testjack_tui.services.approvals import approval_context, operator_decision

        while True:
            rid = self.requests.get()
            if rid is None:
                return
            request = self.session.approvals.request(rid)
            if request is None:
                continue
            v = request.verdict
            judges = v.reviewer == "operator"  # no reviewer's label to approve: the operator judges
            facts = approval_context(self.session.store, request.candidate.id)
            with self.printer.lock:
                out = self.printer.out
                print_safe(f"\n=== approval: {request.task_id} / {request.trial_id or 'task analysis'} ===", file=out)
                print_safe(f"candidate {request.candidate.id} ({request.candidate.path}) checks: "
                      f"{request.candidate.requirement}", file=out)
                print_safe(request.candidate.source.rstrip()[:3000], file=out)
                print_safe(f"reference: {request.reference_status}; trial: {request.model_status}", file=out)
                if facts.model.message:
                    print_safe("on the trial: " + _one_block(facts.model.message), file=out)
                if facts.quote:
                    print_safe(f"the prompt says: \"{_one_block(facts.quote)}\"", file=out)
                if judges:
                    print_safe(f"does it check a requirement of the task prompt ({v.requirement})? "
                          "[y = valid, it counts / n = invalid] ", end="", file=out, flush=True)
                else:
                    print_safe(f"reviewer says {v.label.upper()} ({'explicit' if v.explicit else 'implicit'}: "
                          f"{v.requirement}) {v.reason}", file=out)
                    print_safe("approve the reviewer's verdict? [y = approve / n = overrule] ",
                          end="", file=out, flush=True)
                answer = self.stdin.readline().strip().lower()
            overrule = answer.startswith("n") if not judges else not answer.startswith("y")
            decision = operator_decision(v.label, overrule=overrule, operator_judges=judges,
                                         where="on the command line")
            self.session.answer(rid, decision)

    def close(self) -> None:
        self.requests.put(None)


# -- running ------------------------------------------------------------------------------------
def run_session(session: AuditSession, out: Path | None, verbose: bool, ask_operator: bool,
                stream: TextIO | None = None, stdin: TextIO | None = None) -> int:
    printer = ProgressPrinter(stream, verbose)
    session.subscribe(printer)
    approver = None
    # Under --auto-approve a person at the terminal still gets the QUESTIONABLE / HUMAN_REVIEW
    # verdicts; without one they wait in the session as queued.
    if ask_operator or (stdin is None and stream is None and _interactive()):
        approver = StdinApprover(session, printer, stdin)
        session.subscribe(approver)
        session.operator_present = True

    async def main() -> str:
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, session.stop)
            loop.add_signal_handler(signal.SIGTERM, session.stop)
        except (NotImplementedError, RuntimeError):  # not the main thread / not supported
            pass
        return await session.run()

    try:
        state = asyncio.run(main())
    finally:
        if approver is not None:
            approver.close()
    summary = session.summary()
    paths = [session.write_summary()]
    if out is not None:
        paths.append(session.write_summary(out))
    print_safe(summary_table(summary), file=printer.out)
    print_safe(f"summary: {paths[-1]}", file=printer.out)
    for line in prompt_finding_notice(session.store):
        print_safe(line, file=printer.out)
    for a in summary.awaiting_operator:
        case = f" case {a.case}" if a.case else ""
        print_safe(f"awaiting the operator: {a.candidate_id}{case} ({a.task_id}): {a.label}: "
                   f"{_one_block(a.why, 200)}", file=printer.out)
    if state == "paused":
        print_safe(f"paused: {session.store.get_meta('state_reason', '')}. Continue with: "
              f"testjack-tui resume {session.id} --budget-... (a raised limit)", file=printer.out)
    elif state in ("stopped", "failed"):
        print_safe(f"{state}: continue with: testjack-tui resume {session.id}", file=printer.out)
    from testjack_tui.engine.audit_failures import audit_failures

    failures = audit_failures(session.store)
    for task_id, reason in sorted(failures.items()):
        print_safe(f"audit failed: {task_id}: {reason}", file=printer.out)
    if state == "finished" and summary.awaiting_operator:
        print_safe(f"{len(summary.awaiting_operator)} judgement(s) await the operator (exit status "
                   f"{EXIT_AWAITING}): open the session in the TUI (`testjack-tui open {session.id}`) "
                   "or answer them in a verdicts file", file=printer.out)
    if state == "finished" and failures:
        return EXIT_AUDIT_FAILED
    if state == "finished" and summary.awaiting_operator:
        return EXIT_AWAITING
    return EXIT.get(state, 1)


def prompt_finding_notice(store: SessionStore) -> list[str]:
    """Once per run: why a witness the operator judged valid refutes nothing, and what to write
    in the verdicts file if P does state its requirement."""
    from testjack_tui.engine.approval import judged_valid_but_ambiguous

    found = judged_valid_but_ambiguous(store)
    if not found:
        return []
    out = [f"{len(found)} witness(es) you judged valid became underspecified-prompt findings, not "
           "refutations: their requirement is implicit (no quote of P accepted) and most models with "
           "passing trials fail them (rho > 1/2), so P, not the trials, is taken to be at fault:"]
    for w in found:
        why = ("said explicit, but its quote is not P's words" if w.explicit and w.quote
               else "judged implicit" if w.quote else "no quote of P")
        out.append(f"  {w.id}: \"{w.requirement}\" (rho {w.rho or 0:.2f}; {why})")
    out.append("If P states it, say so in the verdicts file: explicit = true and quote = \"<the words of P>\" "
               "(or --requirement quoting P); explicit = false keeps it a prompt finding.")
    return out


def _print_agents(agents: dict[str, str]) -> None:
    """Say at start-up what each role's agent resolved to (endpoint, model, limits)."""
    from testjack_tui.services.sessions import describe_agents

    for line in describe_agents(agents):
        echo(line)


def _agents(agent: str, reviewer: str | None) -> dict[str, str]:
    return {"audit": agent, "task_analysis": agent, "reviewer": reviewer or agent}


def _asks_operator(cfg: SessionConfig) -> bool:
    # The operator reviewer's verdicts always go to the operator, --auto-approve or not.
    return not cfg.auto_approve or cfg.agents.get("reviewer") == "operator"


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def register(app: typer.Typer) -> None:
    @app.command("audit")
    def audit(
        benchmark: Annotated[str, typer.Argument(help="A benchmark folder or benchmark.toml.")],
        out: Annotated[Optional[Path], typer.Option("--out", help="Folder for summary.json.")] = None,
        task: Annotated[Optional[list[str]], typer.Option("--task", help="Audit only this task (repeatable).")] = None,
        trial: Annotated[Optional[list[str]], typer.Option("--trial", help="Audit only this trial (repeatable).")] = None,
        mode: Annotated[str, typer.Option(help="lightweight (Algorithm 1: sample, audit, share witnesses) or per-trial (the paper's per-trial audit: every passing trial audited on its own, refuted only by its own witnesses).")] = "lightweight",
        rounds: Annotated[Optional[int], typer.Option(help="Audit rounds per task (lightweight; default 3).")] = None,
        k: Annotated[int, typer.Option("--k", help="k: repair attempts after the first candidate (the paper's k = 3). A candidate failing on the reference world goes back to its author with that world's failure output (never the reference code), at most k times.")] = 3,
        sampler: Annotated[str, typer.Option(help="Sampling strategy for the lightweight loop.")] = "uniform",
        budget_usd: Annotated[Optional[float], typer.Option(help="Stop LLM spending at this many USD.")] = None,
        budget_tokens: Annotated[Optional[int], typer.Option(help="Token limit.")] = None,
        budget_seconds: Annotated[Optional[float], typer.Option(help="Wall-time limit in seconds.")] = None,
        budget_runs: Annotated[Optional[int], typer.Option(help="Limit on test executions.")] = None,
        seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
        backend: Annotated[Optional[str], typer.Option(
            help="Where worlds and test runs go: local podman or a ray cluster (default: the config "
                 "file's [sandbox] backend, else local).")] = None,
        ray_address: Annotated[Optional[str], typer.Option(
            "--ray-address", help="The Ray cluster for --backend ray: auto, ray://HOST:10001 or HOST:6379 "
                                  "(default: [sandbox] ray_address, RAY_ADDRESS, else a Ray started here).")] = None,
        agent: Annotated[Optional[str], typer.Option(
            help="scripted | openai | operator | a profile name (default: scripted; operator with --candidate). "
                 "openai = for each role the profile [roles] names in the config file (see `doctor`), else "
                 "the profile 'default', which comes from [profiles.default] or, without it, from "
                 "OPENAI_BASE_URL, OPENAI_API_KEY and TESTJACK_MODEL; the start-up lines say what each "
                 "role resolved to.")] = None,
        reviewer: Annotated[Optional[str], typer.Option(help="Reviewer role (default: as --agent).")] = None,
        mutants: Annotated[int, typer.Option(
            "--mutants", help="Mutation evidence: run up to N mutants of each audited trial's added "
                              "lines under T0 (one test run each, counted in --budget-runs); 0: off.")] = 0,
        no_reference: Annotated[bool, typer.Option(
            "--no-reference", help="Ignore the tasks' reference solutions G: audit against an independent "
                                   "implementation G′ the task-analysis role writes from the prompt (weaker "
                                   "verdicts, marked as such). Tasks without G use this mode anyway.")] = False,
        no_task_analysis: Annotated[bool, typer.Option("--no-task-analysis", help="Skip the task-analysis tests.")] = False,
        reuse_runs: Annotated[Optional[str], typer.Option("--reuse-runs", metavar="SESSION", help="Take the test runs SESSION (an id or an --out folder, same benchmark) already made (same world snapshot, tests and files) instead of running them again: a per-trial audit after a lightweight one runs only what that one did not; with --candidate after a finished audit, only your test runs.")] = None,
        auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Valid verdicts count without asking.")] = False,
        step: Annotated[bool, typer.Option("--step", help="Pause before each round and after each automatic verdict (TUI).")] = False,
        headless: Annotated[bool, typer.Option("--headless", help="Progress lines instead of the TUI.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also show test runs and containers.")] = False,
        candidate: Annotated[Optional[list[Path]], typer.Option(
            "--candidate", help="Operator mode, headless: your test file, checked on the trials "
                                "(repeatable; with --trial, the trials to check it on first).")] = None,
        verdicts: Annotated[Optional[Path], typer.Option(
            "--verdicts", help="The operator's judgements in advance (TOML/JSON: candidate id, path or "
                               "file name -> label valid/invalid/questionable, requirement, explicit, quote of P, note): "
                               "approvals are answered from FILE, no terminal needed (CI). Unnamed "
                               "candidates do not count.")] = None,
        candidate_path: Annotated[Optional[list[str]], typer.Option(
            "--candidate-path", help="Where --candidate goes in the repo (default tests/test_tj_<name>.py).")] = None,
        requirement: Annotated[Optional[list[str]], typer.Option(
            "--requirement", help="The clause of the prompt --candidate checks (one, or one per file).")] = None,
    ) -> None:
        """Audit the passing trials of a benchmark with witness tests."""
        from testjack_tui.compose import session_deps
        from testjack_tui.engine.config import mode_named
        from testjack_tui.engine.session import AuditSession, BudgetLimits, SessionConfig

        if agent is None:
            agent = "operator" if candidate else "scripted"

        try:
            cfg = SessionConfig(
                benchmark=str(Path(benchmark).expanduser().resolve()), tasks=list(task) if task else None,
                trials=list(trial) if trial else None, mode=mode_named(mode), rounds=3 if rounds is None else rounds,
                k_repairs=k, sampler=sampler,
                seed=seed, budget=BudgetLimits(usd=budget_usd, tokens=budget_tokens, seconds=budget_seconds,
                                               test_runs=budget_runs),
                agents=_agents(agent, reviewer), step=step, auto_approve=auto_approve,
                task_analysis=not no_task_analysis, mutants=mutants,
                no_reference=no_reference, backend=backend, ray_address=ray_address)
            if reuse_runs:
                from testjack_tui.engine.run_reuse import lender_for

                cfg.reuse_runs = lender_for(reuse_runs, cfg.benchmark, cfg.trials)
            from testjack_tui.commands import load_with_warnings
            from testjack_tui.services.sessions import SessionOptions, plan_session

            cfg.validate()
            if out is not None:
                output_folder(out)
            interactive = _interactive()
            operator_files = None
            if candidate or candidate_path or requirement or agent == "operator":
                from . import operator_input

                operator_files = operator_input.prepare(agent, candidate, candidate_path, requirement,
                                                        headless, interactive)
                headless = headless or operator_files is not None
            table = None
            if verdicts is not None:
                from testjack_tui.engine.approval import TableApprover

                from .verdicts_file import load_verdicts

                table = TableApprover(load_verdicts(verdicts), str(verdicts))
                cfg.auto_approve = False  # every verdict goes to the table
                headless = True
            # What each role resolves to is said first: a bad --task below must not hide it.
            _print_agents(cfg.agents)
            # options checked, benchmark read, --task / --trial selected, roles built: before any session
            plan = plan_session(SessionOptions(cfg, interactive=interactive, headless=headless,
                                               verdicts_file=table is not None, load=load_with_warnings))
            bench, roles = plan.benchmark, plan.roles
            if table is not None and verdicts is not None:
                from .verdicts_file import check_quotes

                check_quotes(table.table, Path(verdicts), {tid: t.instruction for tid, t in bench.tasks.items()
                                                           if not cfg.tasks or tid in cfg.tasks})
            if operator_files is not None:
                roles = operator_input.attach(bench, cfg, roles, operator_files, rounds is not None, table)
            if not headless and interactive:
                session = AuditSession.create(cfg, session_deps())
                from testjack_tui.tui import run as run_tui

                raise typer.Exit(run_tui(session=session.id) or 0)
            session = AuditSession.create(cfg, session_deps(benchmark=bench, roles=roles, approver=table))
        except InputError as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        raise typer.Exit(run_session(session, out, verbose,
                                     ask_operator=table is None and _asks_operator(cfg)))

    @app.command("resume")
    def resume(
        session_id: Annotated[str, typer.Argument(metavar="SESSION", help="A session id (see `sessions`), or the "
                                                                          "folder `audit --out` wrote.")],
        out: Annotated[Optional[Path], typer.Option("--out", help="Folder for summary.json.")] = None,
        budget_usd: Annotated[Optional[float], typer.Option(help="New USD limit.")] = None,
        budget_tokens: Annotated[Optional[int], typer.Option(help="New token limit.")] = None,
        budget_seconds: Annotated[Optional[float], typer.Option(help="New wall-time limit.")] = None,
        budget_runs: Annotated[Optional[int], typer.Option(help="New limit on test executions.")] = None,
        rounds: Annotated[Optional[int], typer.Option(help="New number of rounds per task.")] = None,
        auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Valid verdicts count without asking.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
        ray_address: Annotated[Optional[str], typer.Option(
            "--ray-address", help="The session's Ray cluster moved: its new address.")] = None,
    ) -> None:
        """Continue a paused, stopped or interrupted session (stored steps are not redone)."""
        from testjack_tui.compose import session_deps
        from testjack_tui.engine.session import AuditSession
        from testjack_tui.engine.store import session_ref

        session_id = session_ref(session_id)
        limits = {name: value for name, value in (("usd", budget_usd), ("tokens", budget_tokens),
                                                   ("seconds", budget_seconds), ("test_runs", budget_runs),
                                                   ("rounds", rounds)) if value is not None}
        try:
            if out is not None:
                output_folder(out)
            session = AuditSession.open(session_id, session_deps())
            if session.state == "running":
                raise InputError(session.store.path, "state", f"session {session_id} is running in another process")
            if limits:
                session.raise_limits(**limits)
            if ray_address:
                session.config.ray_address = ray_address
                session.store.set_meta("config", session.config.to_dict())
            if auto_approve and not session.config.auto_approve:
                session.config.auto_approve = True
                session.store.set_meta("config", session.config.to_dict())
            if session.config.agents.get("audit") == "operator":
                raise InputError(session.store.path, "agents.audit", "this session takes its candidates from the "
                                 "operator: resume it in the TUI (testjack-tui tui, then open the session)")
            if session.config.agents.get("reviewer") == "operator" and not _interactive():
                raise InputError("resume", "--reviewer", "the operator reviewer asks on a terminal and there is none")
            if not session.config.auto_approve and not _interactive():
                raise InputError("resume", "--auto-approve",
                                 "no terminal to ask the operator about each verdict: pass --auto-approve")
        except InputError as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        raise typer.Exit(run_session(session, out, verbose, ask_operator=_asks_operator(session.config)))

    @app.command("sessions")
    def sessions(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
        """List stored audit sessions with their state."""
        from testjack_tui.engine.budget import usd_text
        from testjack_tui.engine.session import list_sessions, state_text

        items = list_sessions()
        if as_json:
            echo(json.dumps(items, indent=2, default=str))
            return
        if not items:
            echo("no sessions yet")
            return
        rows = [("SESSION", "STATE", "MODE", "REFUTED", "WITNESSES", "ROUNDS", "OVERRULES", "RUNS", "USD",
                 "BENCHMARK")]
        for s in items:
            rows.append((s["id"], state_text(s), str(s.get("mode") or "-"), str(s.get("refuted", "-")),
                         str(s.get("witnesses", "-")), str(s.get("rounds", "-")), str(s.get("overrules", "-")),
                         str(s.get("test_runs", "-")),
                         usd_text(s["usd"], s.get("unpriced") or ()).lstrip("$")
                         if isinstance(s.get("usd"), (int, float)) else "-",
                         str(s.get("benchmark") or "-")))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
