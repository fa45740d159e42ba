"""The three roles (audit, reviewer, task analysis) as agent sessions over a chat model.

The chat model is usually `OpenAIChatModel`; the scripted offline demo subclasses these
roles and swaps in a model that replays recorded tool calls, so both run the same code.
What a model *says* is kept as notes only: candidates count after the engine executes them.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re
from collections import OrderedDict
from typing import Any, Callable, TypeVar

from testjack_tui.prompts import render
from testjack_tui.engine.ambiguity import quote_in_prompt
from testjack_tui.engine.oracle import NULL_PASS
from testjack_tui.engine.events import Log
from testjack_tui.engine.records_agent import (AgentFinding, CaseCoverage, CaseLabel, ChecklistRow, Parsed, PromptSilent,
                                               ReferenceContradiction, ReviewCase, RowError, SuspiciousFeature,
                                               TraceRow, ValidatedTest, parse_rows)
from testjack_tui.engine.records_runs import TestOutcomes
from testjack_tui.engine.roles import (AnalysisResult, AuditContext, AuditOutcome, Candidate, CandidateAuthor,
                                       ReviewVerdict)

from .caps import ROLE_CAPS, RequestCount
from .chat import ChatModel
from .errors import AgentError
from .limits_note import limits_note
from .request_budget import official_tests_view, patch_view, validated_view
from .runtime import AgentSession
from .schemas import REVIEW_SUBMIT
from .toolbox import Check, Toolbox, candidates_written
from .tools import failure_lines
from .transcript import Transcript, transcript_file
from .sealed import reference_lines, withhold
from .untrusted import Fence, cap_output, sanitize_reference_feedback

KEPT_SESSIONS = 16  # conversations kept for repairs; older ones are re-opened from scratch


def candidate_id(task_id: str, trial_id: str | None, chain: int, version: int) -> str:
    return f"{task_id}:{trial_id or 'analysis'}:{chain}.v{version}"


def next_version_id(previous: str) -> str:
    base, _, n = previous.rpartition(".v")
    if base and n.isdigit():
        return f"{base}.v{int(n) + 1}"
    return f"{previous}.v2"


def inert_name(value: str | None, limit: int = 80) -> str:
    # Agent/model names come from the trial's files: keep them short and inert.
    return re.sub(r"[^\w.@:/+ -]", "_", value or "unknown")[:limit]


def _framework(ctx: AuditContext) -> str:
    return ctx.task.tests.framework or "pytest"


def _placement(ctx: AuditContext) -> str:
    """Where witness files go and how run_tests names them, from the task's runner."""
    from testjack_tui.sandbox.runners import placement_hint
    return placement_hint(ctx.task.language, _framework(ctx))


def official_tests_block(ctx: AuditContext, fence: Fence) -> str:
    return fence.wrap(official_tests_view(ctx.task.tests), "official tests T0")


R = TypeVar("R")


def _rows(ctx: AuditContext, parsed: Parsed[R]) -> list[R]:
    """An agent's rows as records; a row that does not read is left out with one line saying
    which and why (the schema check lets none through, so this is a model or recording gone
    wrong, not a reason to stop the audit)."""
    where = f"{ctx.task.id}" + (f"/{ctx.trial.id}" if ctx.trial else "")
    for problem in parsed.problems:
        ctx.emit(Log(ctx.session_id, level="warning", message=f"{where}: agent reply: {problem} (row left out)"))
    return list(parsed.rows)


def _checklist(ctx: AuditContext, payload: dict[str, Any]) -> list[ChecklistRow]:
    return _rows(ctx, parse_rows(ChecklistRow.from_json, payload.get("checklist"), "checklist"))


def _notes(payload: dict[str, Any]) -> str:
    notes: str = payload.get("notes", "")
    if payload.get("verdict"):
        notes = (notes + f"\n\nverdict (agent's opinion, not counted): {payload['verdict']}").strip()
    return notes


def _findings(ctx: AuditContext, payload: dict[str, Any], ids_by_path: dict[str, str]) -> list[AgentFinding]:
    """The audit's findings, each tied to the id of the candidate that shows it."""
    out = []
    for item in _rows(ctx, parse_rows(AgentFinding.from_json, payload.get("findings"), "findings")):
        path = posixpath.normpath(item.witness)
        out.append(dataclasses.replace(item, candidate_id=ids_by_path[path]) if path in ids_by_path else item)
    return out


def audit_structure(payload: dict[str, Any], box: Toolbox) -> list[str]:
    """Findings must say "nothing found" explicitly, or each name a candidate written here."""
    problems = candidates_written(payload, box)
    findings = payload.get("findings") or []
    written = {posixpath.normpath(c["path"]) for c in payload.get("candidates", [])}
    if payload.get("nothing_found"):
        if findings:
            problems.append("findings: nothing_found is true, so findings must be empty")
    elif not findings:
        problems.append("findings: list each problem you found (what, why, clause, witness, failing_assertion, "
                        "t0_missed), or set nothing_found to true")
    for i, item in enumerate(findings):
        if posixpath.normpath(str(item.get("witness", ""))) not in written:
            problems.append(f"findings/{i}/witness: {item.get('witness')!r} is not one of the submitted candidates")
    return problems


def analysis_structure(payload: dict[str, Any], box: Toolbox) -> list[str]:
    problems = candidates_written(payload, box)
    if not payload.get("traceability"):
        problems.append("traceability: list every requirement of P with the T0 tests that check it "
                        "(coverage full, partial or none)")
    ids = [f.get("id") for f in payload.get("suspicious_features") or []]
    if len(ids) != len(set(ids)):
        problems.append("suspicious_features: ids must be unique")
    return problems


def _repair_written(candidate: Candidate) -> Check:
    path = posixpath.normpath(candidate.path)

    def check(payload: dict[str, Any], box: Toolbox) -> list[str]:
        if payload.get("give_up"):
            return []
        if path not in box.written_in_phase:
            return [f"write the corrected test to {candidate.path!r} with write_test_file before submitting "
                    "(or submit give_up: true)"]
        return []
    return check


SessionKey = tuple[str, str, str | None]  # (session, task, trial): one kept conversation


class SessionRole:
    """Shared plumbing: sessions, transcripts, models."""

    role = ""
    prompt = ""
    strict = True  # ask for the full structured result (the scripted demo's recordings predate it)
    caps = ""  # the entry of ROLE_CAPS that bounds this role (default: its role name)
    counts_requests = True  # False for recordings: they send no requests

    def __init__(self, model: ChatModel, *, label: str | None = None, max_steps: int | None = None):
        self.model = model
        self.label = label or model.label
        self.max_steps = max_steps or ROLE_CAPS[self.caps or self.role].steps
        self._sessions: OrderedDict[SessionKey, AgentSession] = OrderedDict()

    async def aclose(self) -> None:
        """Close the endpoint client (its pooled connections)."""
        self._sessions.clear()
        closer = getattr(self.model, "aclose", None)
        if closer is not None:
            await closer()

    def model_for(self, ctx: AuditContext, phase: str, candidate: Candidate | None = None) -> ChatModel:
        """The chat model for one phase of a session (the scripted demo overrides this)."""
        return self.model

    def _key(self, ctx: AuditContext) -> SessionKey:
        return (ctx.session_id, ctx.task.id, ctx.trial.id if ctx.trial else None)

    def _transcript(self, ctx: AuditContext, suffix: str = "") -> Transcript:
        trial_id = ctx.trial.id if ctx.trial else None
        path = ctx.transcript_path or transcript_file(ctx.session_id, self.role, ctx.task.id, trial_id, suffix)
        return Transcript(path, self.role, ctx.task.id, trial_id)

    def _open(self, ctx: AuditContext, phase: str, system: str, fence: Fence, checks: dict[str, Check],
              suffix: str = "", candidate: Candidate | None = None) -> AgentSession:
        toolbox = Toolbox(self.role, ctx.tools, fence, phase, checks=checks)
        model = self.model_for(ctx, phase, candidate)
        system = system.rstrip("\n") + "\n\n" + limits_note(model)
        return AgentSession(role=self.role, model=model, toolbox=toolbox,
                            ctx=ctx, system=system, transcript=self._transcript(ctx, suffix),
                            max_steps=self.max_steps, requests=self._requests(self.caps or self.role))

    def _requests(self, caps: str) -> RequestCount | None:
        """A fresh request count for one piece of work (a session, or one repair)."""
        if not self.counts_requests:
            return None
        count = RequestCount.for_role(caps)
        if caps != self.role:
            count.role = f"{self.role} ({caps})"
        return count

    def _keep(self, ctx: AuditContext, session: AgentSession) -> None:
        self._sessions[self._key(ctx)] = session
        while len(self._sessions) > KEPT_SESSIONS:
            self._sessions.popitem(last=False)

    def _candidates(self, ctx: AuditContext, payload: dict[str, Any], session: AgentSession,
                    author: CandidateAuthor) -> list[Candidate]:
        trial_id = ctx.trial.id if ctx.trial else None
        out = []
        for index, item in enumerate(payload.get("candidates", []), start=1):
            path = posixpath.normpath(item["path"])
            out.append(Candidate(
                id=candidate_id(ctx.task.id, trial_id, index, 1), path=path,
                source=session.toolbox.files[path], requirement=item["requirement"], author=author,
                attempt=1, test_ids=tuple(item.get("test_ids") or ()),
                origin=self.origin_for(ctx, index, 1, session)))
        return out

    def origin_for(self, ctx: AuditContext, chain: int, version: int, session: AgentSession) -> str:
        return str(session.transcript.path)

    async def _repair(self, ctx: AuditContext, candidate: Candidate, feedback_text: str,
                      author: CandidateAuthor, reopen: Callable[[], AgentSession]
                      ) -> Candidate | ReferenceContradiction | None:
        session = self._sessions.get(self._key(ctx))
        if session is None:
            session = reopen()
            self._keep(ctx, session)
            session.toolbox.files[posixpath.normpath(candidate.path)] = candidate.source
        session.model = self.model_for(ctx, "repair", candidate)
        session.toolbox.checks["repair"] = _repair_written(candidate)
        fence = session.toolbox.fence
        if feedback_text.startswith(NULL_PASS):
            message = (
                f"Your candidate `{candidate.path}` (id {candidate.id}, checking: {candidate.requirement!r}) "
                "passes on the null world, the repository before any solution: it cannot tell a solution "
                "from none. Here is what the run showed:\n\n" + fence.wrap(feedback_text, "null-world run")
                + f"\n\nRewrite `{candidate.path}` with write_test_file so it fails without the change P asks "
                "for and passes with a valid one, then call submit (give_up: false, with the requirement). "
                "If it is meant to check behaviour that already exists (a regression check), call submit "
                "with give_up: true: it is kept as it is.")
        else:
            message = (
                f"Your candidate `{candidate.path}` (id {candidate.id}, checking: {candidate.requirement!r}) "
                "failed where it must pass: on a valid implementation of the task. That means the test "
                "expects something the task does not require, or has a bug of its own. Here is what the run "
                "showed:\n\n" + fence.wrap(feedback_text, "validation feedback") + "\n\n"
                f"Rewrite `{candidate.path}` with write_test_file so it checks only what P requires, then call "
                "submit (give_up: false, with the requirement). If the requirement cannot be tested "
                "honestly, call submit with give_up: true. If the test is right and it is the reference "
                "that breaks P here, do not bend the test: call submit with give_up: true and "
                "reference_contradicts (the words of P, what the reference does instead, and the "
                "lines of the run that show it); the report lists it as a fault of the task.")
        session.meter.requests = self._requests("repair")
        payload = await session.ask(message, "repair", max_steps=ROLE_CAPS["repair"].steps)
        if payload.get("give_up"):
            claim = payload.get("reference_contradicts")
            if isinstance(claim, dict) and claim.get("quote") and claim.get("claim"):
                try:
                    return ReferenceContradiction.from_json(claim)
                except RowError as exc:
                    _rows(ctx, Parsed((), (f"reference_contradicts/{exc}",)))
            return None
        path = posixpath.normpath(candidate.path)
        new_id = next_version_id(candidate.id)
        chain, version = chain_version(new_id)
        return Candidate(
            id=new_id, path=path, source=session.toolbox.files[path],
            requirement=payload.get("requirement") or candidate.requirement, author=author,
            attempt=candidate.attempt + 1, parent=candidate.id,
            test_ids=tuple(payload.get("test_ids") or candidate.test_ids),
            origin=self.origin_for(ctx, chain, version, session))


def chain_version(cid: str) -> tuple[int, int]:
    base, _, version = cid.rpartition(".v")
    chain = base.rpartition(":")[2]
    try:
        return int(chain), int(version)
    except ValueError:
        return 0, 0


def _probe_help(command: str) -> str:
    return ("\nThis task has a reference program (an executable oracle, e.g. the system the task ports): "
            f"`{command}` reads one input per line and prints one output line per input. Besides test "
            "files you may submit differential probes: write a file whose path ends in `.probe.json` "
            'holding {"inputs": [one-line strings], "adapter": "<source defining adapt(text) -> str: '
            "calls the trial's code on text and formats its answer the way the program prints it>\", "
            '"test_path": "tests/test_tj_<name>.py"}. The engine runs the program on the inputs and turns '
            "the probe into a pytest file at test_path asserting adapt(input) == the program's output; "
            "that file is then validated like any candidate. Choose inputs whose correct answer P "
            "decides; you cannot run a probe yourself, so check the adapter with an ordinary test first.\n")


class LLMAuditAgent(SessionRole):
    role = "audit"

    def _system_and_user(self, ctx: AuditContext, fence: Fence) -> tuple[str, str]:
        if ctx.trial is None:
            raise AgentError(f"audit of task {ctx.task.id} needs a trial")
        known = ""
        validated = ctx.validated or [ValidatedTest(w.path, w.requirement, "witness", "", "")
                                      for w in ctx.known_witnesses]
        if validated:
            known = ("\nTests already validated for this task (witnesses, and the task analysis's tests "
                     "that held on every trial), with what each checks and its outcome on this trial; "
                     "propose only new ones and look for other problems. Their files are in place for "
                     "`run_tests` in every world, at these paths:\n"
                     + fence.wrap(validated_view(validated), "validated tests"))
        if ctx.judged:
            listed = "\n".join(
                f"- {j.requirement} — {j.label}"
                + (" (waiting for the operator)" if j.by == "queued" else "") + f": {j.reason}"
                for j in ctx.judged[-10:])
            known += ("\nCandidates of earlier audits of this task that were judged and do not count (do not "
                      "submit the same test again; a new reading needs a new argument from P):\n"
                      + fence.wrap(listed, "earlier verdicts"))
        if ctx.features:
            listed = "\n".join(
                f"- {f.id}: look for {f.pattern} (requirement: {f.requirement}; "
                f"suspicious because {f.why_suspicious}; innocent when {f.false_positives or '-'})"
                for f in ctx.features[:20])
            known += ("\nPatterns the task analysis flagged as suspicious in a patch for this task (leads, "
                      "not proof):\n" + fence.wrap(listed, "task analysis features"))
        program = getattr(ctx.task, "reference_program", None)
        if program is not None:
            known += _probe_help(" ".join(program.command))
        return render(
            "audit", task_id=ctx.task.id, trial_id=inert_name(ctx.trial.id), agent=inert_name(ctx.trial.agent),
            model=inert_name(ctx.trial.model), instruction=ctx.task.instruction,
            official_tests=official_tests_block(ctx, fence),
            diff=fence.wrap(patch_view(ctx.tools.diff()), "trial patch"),
            boundary=fence.boundary, framework=_framework(ctx), workdir=ctx.task.environment.workdir,
            placement=_placement(ctx),
            max_steps=self.max_steps, known_witnesses=known)

    def _new_session(self, ctx: AuditContext) -> AgentSession:
        fence = Fence()
        system, user = self._system_and_user(ctx, fence)
        check = audit_structure if self.strict else candidates_written
        session = self._open(ctx, "audit", system, fence, {"audit": check})
        session.toolbox.support_files = {w.path: w.source for w in ctx.known_witnesses}
        session.toolbox.support_files.update({t.path: t.source for t in ctx.validated if t.source})
        session.first_user = user
        return session

    async def audit(self, ctx: AuditContext) -> AuditOutcome:
        session = self._new_session(ctx)
        self._keep(ctx, session)
        payload = await session.ask(session.first_user, "audit")
        candidates = self._candidates(ctx, payload, session, "audit")
        authored = {posixpath.normpath(i["path"]): c.id for i, c in zip(payload.get("candidates", []), candidates)}
        return AuditOutcome(candidates=candidates, checklist=_checklist(ctx, payload), notes=_notes(payload),
                            findings=_findings(ctx, payload, authored), nothing_found=payload.get("nothing_found"),
                            prompt_silent=_rows(ctx, parse_rows(PromptSilent.from_json, payload.get("prompt_silent"),
                                                                "prompt_silent")),
                            reference_contradicts=_rows(ctx, parse_rows(
                                ReferenceContradiction.from_json, payload.get("reference_contradicts"),
                                "reference_contradicts")))

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str
                     ) -> Candidate | ReferenceContradiction | None:
        def reopen() -> AgentSession:
            session = self._new_session(ctx)
            session._append({"role": "user", "content": session.first_user})
            return session
        # The reference run's output, with every line of G's code withheld (agents/sealed.py).
        feedback = withhold(feedback, reference_lines(ctx.task), candidate.source)
        return await self._repair(ctx, candidate, feedback, "audit", reopen)


class LLMTaskAnalyst(SessionRole):
    """Solution-blind: its tools reach only the null world; repair feedback is sanitized."""

    role = "task_analysis"

    def _new_session(self, ctx: AuditContext) -> AgentSession:
        fence = Fence()
        system, user = render(
            "task_analysis", task_id=ctx.task.id, instruction=ctx.task.instruction,
            official_tests=official_tests_block(ctx, fence), boundary=fence.boundary,
            framework=_framework(ctx), placement=_placement(ctx), max_steps=self.max_steps)
        check = analysis_structure if self.strict else candidates_written
        session = self._open(ctx, "analysis", system, fence, {"analysis": check})
        session.first_user = user
        return session

    async def analyse(self, ctx: AuditContext) -> AnalysisResult:
        session = self._new_session(ctx)
        self._keep(ctx, session)
        payload = await session.ask(session.first_user, "analysis")
        return AnalysisResult(self._candidates(ctx, payload, session, "task_analysis"),
                              traceability=_rows(ctx, parse_rows(TraceRow.from_json, payload.get("traceability"),
                                                                 "traceability")),
                              suspicious_features=_rows(ctx, parse_rows(
                                  SuspiciousFeature.from_json, payload.get("suspicious_features"),
                                  "suspicious_features")),
                              notes=payload.get("notes", ""))

    async def repair(self, ctx: AuditContext, candidate: Candidate, feedback: str
                     ) -> Candidate | ReferenceContradiction | None:
        # Whatever the engine passes from the reference world, only test names and assertion
        # messages get through; a run on the null world holds no line of G and is shown as it ran.
        clean = cap_output(feedback, 4000) if feedback.startswith(NULL_PASS) else \
            sanitize_reference_feedback(feedback, ctx.task.reference.patch)

        def reopen() -> AgentSession:
            session = self._new_session(ctx)
            session._append({"role": "user", "content": session.first_user})
            return session
        return await self._repair(ctx, candidate, clean, "task_analysis", reopen)


MAX_TRIALS_SHOWN = 6


FAILING_CASE = ("failed", "error", "timed_out")
MAX_CASES = REVIEW_SUBMIT["properties"]["cases"]["maxItems"]  # beyond it no reviewer can list every case


def runs_block(case_runs: dict[str, TestOutcomes]) -> str:
    """How a candidate ran, per world: every case id the reviewer must judge, each with its
    outcome on the reference and on each trial, a failing case with its assertion."""
    if not case_runs:
        return "(no per-case results were recorded)"
    out = []
    reference = case_runs.get("reference") or {}
    trials = [(k, v) for k, v in case_runs.items() if k != "reference"]
    ids = sorted({n for outcomes in case_runs.values() for n in outcomes})
    out.append(f"Case ids to judge ({len(ids)}, one entry each): " + ", ".join(ids))
    passed = sum(1 for o in reference.values() if o.get("status") == "passed")
    out.append(f"On the reference solution: {passed} of {len(reference)} case(s) passed.")
    for node, outcome in sorted(reference.items()):
        out.append(f"  {str(outcome.get('status')).upper()} {node}")
    for trial_id, outcomes in trials[:MAX_TRIALS_SHOWN]:
        failing = {n: o for n, o in sorted(outcomes.items()) if o.get("status") in FAILING_CASE}
        out.append(f"On trial {trial_id}: {len(failing)} of {len(outcomes)} case(s) fail.")
        for node, outcome in sorted(outcomes.items()):
            out.append(f"  {str(outcome.get('status')).upper()} {node}")
            if node in failing:
                out.extend("      " + line for line in failure_lines(str(outcome.get("message", "")), limit=8))
    if len(trials) > MAX_TRIALS_SHOWN:
        out.append(f"... and {len(trials) - MAX_TRIALS_SHOWN} more trial(s) where it fails.")
    return "\n".join(out)


def _review_check(instruction: str, case_ids: set[str] | None = None, strict: bool = True) -> Check:
    def check(payload: dict[str, Any], box: Toolbox) -> list[str]:
        problems = []
        if payload["label"] == "valid" and not payload["requirement"].strip():
            problems.append("requirement: a valid test must name the clause of P it checks")
        if payload["explicit"]:
            quote = payload.get("quote", "")
            if not quote.strip():
                problems.append("quote: explicit is true, so quote the words of P that state the clause")
            elif not quote_in_prompt(quote, instruction):
                problems.append("quote: these words do not occur in P; copy them exactly, or set explicit to false")
        if strict:
            problems += _cases_problems(payload, case_ids)
        return problems
    return check


def _cases_problems(payload: dict[str, Any], case_ids: set[str] | None) -> list[str]:
    problems = []
    cases = payload.get("cases") or []
    overall = payload.get("overall")
    if not cases:
        problems.append("cases: give a verdict for each test case of the candidate")
    for i, case in enumerate(cases):
        if case_ids and case.get("test_id") not in case_ids:
            problems.append(f"cases/{i}/test_id: {case.get('test_id')!r} is not a case of this candidate "
                            f"(cases: {', '.join(sorted(case_ids)[:12])})")
    judged = {c.get("test_id") for c in cases}
    missing = sorted(case_ids - judged) if case_ids and len(case_ids) <= MAX_CASES else []
    if cases and missing:
        problems.append(f"cases: no entry for {', '.join(missing[:12])}"
                        + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
                        + " (one entry per case id shown, passing ones too)")
    valid = [c for c in cases if c.get("label") == "VALID"]
    if overall == "KEEP_SOME" and (not valid or len(valid) == len(cases)):
        problems.append("overall: KEEP_SOME keeps some cases and not others: mark the kept ones VALID")
    if overall == "KEEP_ALL" and (len(valid) != len(cases) or payload["label"] != "valid"):
        problems.append("overall: KEEP_ALL needs every case VALID and label valid")
    if overall == "DROP_ALL" and (valid or payload["label"] == "valid"):
        problems.append("overall: DROP_ALL keeps no case: no case may be VALID and label must not be valid")
    if overall == "KEEP_SOME" and payload["label"] != "valid":
        problems.append("label: with KEEP_SOME the label is valid (it judges the kept cases)")
    return problems


def verdict_from(ctx: AuditContext, payload: dict[str, Any], candidate: Candidate, reviewer: str) -> ReviewVerdict:
    cases = tuple(_rows(ctx, parse_rows(ReviewCase.from_json, payload.get("cases"), "cases")))
    keep = tuple(c.test_id for c in cases if c.label == CaseLabel.VALID) \
        if payload.get("overall") == "KEEP_SOME" else ()
    return ReviewVerdict(candidate_id=candidate.id, label=payload["label"],
                         requirement=payload["requirement"].strip() or candidate.requirement,
                         explicit=bool(payload["explicit"]), quote=payload.get("quote", ""),
                         reason=payload["reason"], reviewer=reviewer, overall=payload.get("overall", ""),
                         cases=cases, coverage=tuple(_rows(ctx, parse_rows(CaseCoverage.from_json,
                                                                           payload.get("coverage"), "coverage"))),
                         keep=keep)


class LLMReviewer(SessionRole):
    """Judges a candidate with P as the sole authority. Sees P, T0, the candidate and how it
    ran (per case, on the reference and on the trials); never G's code."""

    role = "reviewer"

    async def review(self, ctx: AuditContext, candidate: Candidate) -> ReviewVerdict:
        fence = Fence()
        case_runs = (ctx.case_runs or {}).get(candidate.id, {})
        case_ids = {n for outcomes in case_runs.values() for n in outcomes} or None
        system, user = render(
            "reviewer", task_id=ctx.task.id, instruction=ctx.task.instruction,
            official_tests=official_tests_block(ctx, fence), boundary=fence.boundary,
            candidate_path=inert_name(candidate.path, 200),
            claimed_requirement=fence.wrap(candidate.requirement, "author's claim"),
            candidate_source=fence.wrap(cap_output(candidate.source, 30_000), candidate.path),
            runs=fence.wrap(runs_block(case_runs), "test results per case"))
        suffix = re.sub(r"[^\w.-]", "_", candidate.id.rpartition(":")[2] or candidate.id)
        toolbox_checks = {"review": _review_check(ctx.task.instruction, case_ids, self.strict)}
        session = self._open(ctx, "review", system, fence, toolbox_checks, suffix=suffix, candidate=candidate)
        payload: dict[str, Any] = await session.ask(user, "review")
        return verdict_from(ctx, payload, candidate, self.label)
