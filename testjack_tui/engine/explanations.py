"""The four explanations of a finding, built from evidence and the audit agent's own answer.

Every claim points at what backs it: a stored run (its key), a test (its id), a quote of P
(checked against P with `ambiguity.quote_in_prompt`) or a line of the trial's diff (file:line
and its code). A claim says who makes it: the audit agent (its structured finding: what, why,
the clause, why T0 missed it) or the evidence. An agent's statement is shown only beside the
evidence that backs it; one nothing recorded backs (a quote that is not in P, a "ghost branch"
coverage does not show) is left out of the explanation — the agent's raw answer stays in the
report's own section. Where neither has anything to say, the claim says so and points at the run.

Parts: what_is_wrong, why_it_happens (why it violates P), which_clause, why_t0_missed_it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from testjack_tui.diffs import parse_diff
from testjack_tui.engine.ambiguity import quote_in_prompt
from testjack_tui.engine.assertion_lines import asserted_lines, runner_hint
from testjack_tui.engine.detectors.signals import Evidence, Signal
from .records import JsonObject
from .records_agent import AgentFinding, ChecklistRow
from .records_verdict import Explanation
from testjack_tui.engine.records_runs import StoredRun

PARTS = ("what_is_wrong", "why_it_happens", "which_clause", "why_t0_missed_it")
BY_AGENT, BY_EVIDENCE = "audit agent", "evidence"
REF_KINDS = ("run", "test", "quote", "diff")

# A failure that says the required surface is missing, not merely wrong.
MISSING_SURFACE = re.compile(
    r"AttributeError|ImportError|ModuleNotFoundError|NotImplementedError|has no attribute|"
    r"cannot import name|unexpected keyword argument|takes \d+ positional arguments? but|"
    r"missing \d+ required positional argument|is not callable")
# What a failure message shows of objects rather than of the trial's own exception: pytest's
# repr of a half-built object (`<[AttributeError(...) raised in repr()] Blueprint object at 0x..>`)
# and its assertion introspection (`+  where x = <...>`). Issue 36: the missing-code rule matched
# an AttributeError raised inside such a repr although the trial raised its own ValueError.
_REPR_NOISE = re.compile(r"<\[[^\n]*?raised in repr\(\)\][^\n>]*>?|^\s*[E>]?\s*\+\s+(?:where|and)\b.*$",
                         re.M)


def missing_surface(message: str) -> bool:
    """Does this failure say the required surface is missing (not merely wrong)? Read from the
    trial's own exception and assertion, never from how the runner printed objects."""
    return bool(MISSING_SURFACE.search(_REPR_NOISE.sub("", message or "")))


# Traceback frames: pytest's `path:line: in fn` and Python's `File "path", line N`.
_FRAME = re.compile(r'^\s*([\w./-]+\.\w+):(\d+):|File "([^"]+)", line (\d+)')


@dataclass(frozen=True)
class Ref:
    kind: str  # one of REF_KINDS
    ref: str  # run key | test id | P's words | file:line
    excerpt: str = ""  # the failing line of a run, the code of a diff line

    def render(self) -> str:
        if self.kind == "run":
            return f"run {self.ref[:12]}" + (f": {self.excerpt}" if self.excerpt else "")
        if self.kind == "quote":
            return f'P: "{self.ref}"'
        if self.kind == "diff":
            return f"diff {self.ref}" + (f" `{self.excerpt.strip()[:100]}`" if self.excerpt else "")
        return f"test {self.ref}"


@dataclass
class Claim:
    part: str
    text: str
    by: str
    refs: list[Ref] = field(default_factory=list)

    def render(self) -> str:
        who = "" if self.by == BY_EVIDENCE else f"{self.by}: "
        return f"{who}{self.text} [{'; '.join(r.render() for r in self.refs)}]"

    def to_dict(self) -> JsonObject:
        return {"part": self.part, "text": self.text, "by": self.by,
                "refs": [asdict(r) for r in self.refs]}

    @classmethod
    def from_dict(cls, data: JsonObject) -> Claim:
        """A claim `to_dict` wrote (a stored standing's finding)."""
        return cls(str(data["part"]), str(data["text"]), str(data["by"]),
                   [Ref(str(r["kind"]), str(r["ref"]), str(r.get("excerpt") or "")) for r in data.get("refs") or []])


@dataclass(frozen=True)
class Run:
    """A stored run the claims can point at."""

    status: str
    message: str = ""
    key: str | None = None


@dataclass
class Facts:
    """What is recorded about one finding, for its explanations."""

    test_ids: Sequence[str]
    path: str
    source: str  # the witness's source
    requirement: str
    explicit: bool
    klass: str  # explicit | implicit_necessary | ambiguous
    quote: str
    reference: Run
    model: Run
    rho: float | None = None
    replays: Sequence[tuple[str, str, str | None]] = ()  # (trial id, status, run key) per passing trial
    agent: AgentFinding | None = None  # the audit agent's structured finding for this witness
    explained: Explanation | None = None  # the explainer's paragraph for this failure pattern


def failing_line(message: str) -> str:
    """The line of a failure that says what went wrong: the assertion itself (pytest's `E` line
    naming the exception or the assertion with its values, hints like `Use -v to get more diff`
    never), else the first line naming an error or an assertion (other runners' messages)."""
    # A stored run's message prefixes each test's failure with `node id: `.
    text = "\n".join(re.sub(r"^\S+::\S+: ", "", ln.strip()) for ln in (message or "").splitlines())
    asserted = asserted_lines(text)
    if asserted:
        named = [ln for ln in asserted if _ASSERTION.search(ln)]
        return (named or asserted)[0][:240]
    raw = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in raw if not set(ln) <= set("_=- ") and not runner_hint(ln)]
    for line in lines:
        if _ASSERTION.search(line):
            return line[:240]
    return lines[-1][:240] if lines else ""


_ASSERTION = re.compile(r"Error|Exception|assert|Failed:|panicked|expected", re.IGNORECASE)


def signal_sentence(message: str) -> str:
    """A detector's message as a sentence of its own (messages already name their subject:
    "the diff hard-codes '128' ...", "added line never executed by T0")."""
    text = message.strip().rstrip(".")
    if text and not text.lower().startswith(_SUBJECTS):
        text = "the diff " + text  # "checks whether pytest is imported": the diff does
    return (text[:1].upper() + text[1:] + ".") if text else ""


_SUBJECTS = ("the ", "added ", "a ", "an ", "its ", "it ", "this ", "no ", "only ")


def explainer_name(explained: Explanation) -> str:
    """Who wrote a pattern's explanation, and how many trials share it."""
    n = len(explained.trials)
    shared = f", one call for {n} trials failing this way" if n > 1 else ""
    return f"explainer ({explained.by or 'model'}{shared})"


def run_message(run: StoredRun | None, path: str, test_ids: Iterable[str] = ()) -> str:
    """What a stored run says about one test file: its tests' failure messages, else the
    output's tail. Untrusted text (it comes from a trial's world)."""
    if not run:
        return ""
    ids = set(test_ids)
    parts = []
    for node, o in sorted(run.outcomes.items()):
        if node in ids or node == path or node.startswith(path + "::"):
            if o.get("message"):
                parts.append(f"{node}: {str(o['message']).strip()}")
    text = "\n".join(parts) or run.tail or run.head
    return text[-3000:]


def _run_ref(run: Run, excerpt: str | None = None) -> list[Ref]:
    if not run.key:
        return []
    return [Ref("run", run.key, failing_line(run.message) if excerpt is None else excerpt)]


def _added_lines(patch: str | None) -> dict[str, dict[int, str]]:
    return {fd.path: {line.number: line.text for line in fd.added} for fd in parse_diff(patch)}


def traceback_diff_refs(message: str, added: dict[str, dict[int, str]], limit: int = 3) -> list[Ref]:
    """Lines of the trial's diff the failing run's traceback goes through, deepest last."""
    out: list[Ref] = []
    for line in (message or "").splitlines():
        m = _FRAME.search(line)
        if not m:
            continue
        path, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        for changed, lines in added.items():
            if (path == changed or path.endswith("/" + changed)) and int(number) in lines:
                ref = Ref("diff", f"{changed}:{number}", lines[int(number)])
                if ref not in out:
                    out.append(ref)
    return out[-limit:]


def _signal_ref(s: Signal) -> Ref:
    return Ref("diff", s.location(), s.excerpt.strip())


def _quote(text: str, prompt: str) -> str | None:
    """text as a quote of P, when it really is one (after stripping quote marks)."""
    text = (text or "").strip().strip('"“”').strip()
    return text if text and prompt and quote_in_prompt(text, prompt) else None


def _tests(ids: Iterable[str]) -> list[Ref]:
    return [Ref("test", t) for t in ids if t]


def explain(f: Facts, *, prompt: str, patch: str | None, tied: Sequence[Signal] = (),
            evidence: Evidence | None = None, coverage: ChecklistRow | None = None, t0_run: str | None = None,
            vacuous: Sequence[str] = (), proven: Sequence[JsonObject] = ()) -> list[Claim]:
    """The claims behind one finding. coverage: the recorded checklist item for its requirement
    or None; t0_run: the key of T0's run on this trial."""
    agent = f.agent
    claims: list[Claim] = []
    test = f.test_ids[0] if f.test_ids else f.path
    err = failing_line(f.model.message) or f.model.status
    witness_refs = _tests([test]) + _run_ref(f.model) + _run_ref(f.reference, "passed")
    failing_run = _run_ref(f.model) or _tests([test])  # the run; its test where no run was stored
    t0_refs = [Ref("run", t0_run, "T0 passes")] if t0_run else []

    # -- what is wrong --
    if agent is not None and agent.what:
        claims.append(Claim("what_is_wrong", agent.what.strip(), BY_AGENT, witness_refs))
    else:
        claims.append(Claim("what_is_wrong", f"{test} {f.model.status} on this trial's world ({err}) and "
                            "passes on the reference world.", BY_EVIDENCE,
                            _tests([test]) + _run_ref(f.model, "") + _run_ref(f.reference, "passed")))

    # -- why it happens: the diff lines involved --
    added = _added_lines(patch)
    # Two rules firing at one line (pytest in sys.modules is both a module check and a text
    # comparison) cite that line once.
    diff_refs: list[Ref] = []
    for ref in [_signal_ref(s) for s in tied] + traceback_diff_refs(f.model.message, added):
        if all(ref.ref != kept.ref for kept in diff_refs):
            diff_refs.append(ref)
    ghost = (evidence.ghost if evidence else None) or {}
    touched = {r.ref.rsplit(":", 1)[0] for r in diff_refs}
    ghost_refs = [Ref("diff", f"{g['file']}:{g['line']}", g.get("code", ""))
                  for g in ghost.get("ghost_lines") or []]
    explained = f.explained.text.strip() if f.explained is not None else ""
    if agent is not None and agent.why:
        claims.append(Claim("why_it_happens", agent.why.strip(), BY_AGENT,
                            diff_refs or failing_run))
    else:
        # Nobody audited this trial for this witness: the explainer's paragraph for the way it
        # fails (one call per pattern), then what the evidence shows.
        if explained:
            claims.append(Claim("why_it_happens", explained, explainer_name(f.explained or Explanation("")),
                                failing_run + diff_refs[:2]))
        if tied:
            claims.append(Claim("why_it_happens", signal_sentence(tied[0].message), BY_EVIDENCE, diff_refs))
        elif diff_refs:
            claims.append(Claim("why_it_happens", "The failing run goes through lines this trial added.",
                                BY_EVIDENCE, diff_refs))
        elif missing_surface(f.model.message):
            claims.append(Claim("why_it_happens", "The trial does not provide what the requirement needs: "
                                "the failing run finds it missing.", BY_EVIDENCE, failing_run))
        elif not explained:
            claims.append(Claim("why_it_happens", "Not explained further: no audit finding names the cause "
                                "and the failing run's traceback passes through no line this trial added.",
                                BY_EVIDENCE, failing_run))
    near = [r for r in ghost_refs if r.ref.rsplit(":", 1)[0] in touched] if touched else []
    if near and not tied:
        claims.append(Claim("why_it_happens", "T0 never executes some of the added code involved.",
                            BY_EVIDENCE, near[:3]))

    # -- which clause of P --
    agent_quote = _quote(agent.clause if agent is not None else "", prompt)
    own_quote = _quote(f.quote, prompt)
    if f.explicit and f.klass == "explicit":
        if agent_quote:
            claims.append(Claim("which_clause", "P states it.", BY_AGENT, [Ref("quote", agent_quote)]))
        if own_quote and own_quote != agent_quote:
            claims.append(Claim("which_clause", "P states it.", BY_EVIDENCE, [Ref("quote", own_quote)]))
        if not agent_quote and not own_quote:
            claims.append(Claim("which_clause", f"P states it: {f.requirement} (no quote of P was "
                                "recorded for it).", BY_EVIDENCE, _tests([test])))
    else:
        failing = [(t, s, k) for t, s, k in f.replays if s != "passed"]
        rho = f"{f.rho:.2f}" if f.rho is not None else "n/a"
        refs = [Ref("run", k, f"{s} on {t}") for t, s, k in failing if k][:5] or _tests([test])
        count = f": {len(failing)} of {len(f.replays)} passing trials fail the witness" if f.replays else ""
        claims.append(Claim("which_clause", f"Implicit in P: {f.requirement} (rho = {rho}{count}; below "
                            "1/2, so most readers of P implement it).", BY_EVIDENCE, refs))
        if agent_quote:
            claims.append(Claim("which_clause", "P implies it here.", BY_AGENT, [Ref("quote", agent_quote)]))

    # -- why T0 missed it --
    if coverage is None:
        claims.append(Claim("why_t0_missed_it", "T0's coverage of this requirement was not recorded, so "
                            "no claim is made about which T0 tests check it"
                            + ("; T0 passes on this trial." if t0_refs else "."),
                            BY_EVIDENCE, t0_refs or _tests([test])))
    elif coverage.covered_by_t0 is False:
        quote = _quote(coverage.quote, prompt)
        claims.append(Claim("why_t0_missed_it", "The recorded coverage says no T0 test asserts this "
                            f"requirement ({coverage.clause}).", BY_EVIDENCE,
                            ([Ref("quote", quote)] if quote else []) + t0_refs or _tests([test])))
    else:
        t0_tests = list(coverage.t0_tests)
        claims.append(Claim("why_t0_missed_it", "The recorded coverage says T0 checks this requirement "
                            "only on inputs the trial handles: T0 passes on it while the witness fails.",
                            BY_EVIDENCE, _tests(t0_tests) + t0_refs + witness_refs[:2]))
    missed = agent.t0_missed if agent is not None else None
    detail = ((agent.t0_missed_detail if agent is not None else None) or "").strip()
    said = f"{str(missed).replace('_', ' ')}" + (f": {detail}" if detail else "")
    if missed == "ghost_branch" and ghost_refs:
        claims.append(Claim("why_t0_missed_it", f"{said}.", BY_AGENT, (near or ghost_refs)[:3]))
    elif missed == "vacuous_test" and vacuous:
        claims.append(Claim("why_t0_missed_it", f"{said}.", BY_AGENT, _tests(vacuous[:3])))
    elif missed == "literal":
        literal = [s for s in tied if s.detector == "literal_collision"]
        if literal:
            claims.append(Claim("why_t0_missed_it", f"{said}.", BY_AGENT, [_signal_ref(s) for s in literal]))
    elif missed in ("untested_input_class", "other") and detail:
        claims.append(Claim("why_t0_missed_it", f"{said}.", BY_AGENT, witness_refs[:2] + t0_refs))
    if ghost.get("added_line_pct") is not None and ghost_refs and missed != "ghost_branch":
        claims.append(Claim("why_t0_missed_it", f"Under T0 only {ghost['added_line_pct']}% of the diff's "
                            f"added lines run ({len(ghost_refs)} never do).", BY_EVIDENCE, ghost_refs[:3]))
    tamper = [s for s in tied if s.detector == "harness_tampering"]
    if tamper:
        claims.append(Claim("why_t0_missed_it", f"The trial also changed {tamper[0].file}, which affects "
                            "how T0 runs.", BY_EVIDENCE, [_signal_ref(tamper[0])]))
    for p in list(proven)[:2]:
        refs = [Ref("diff", path) for path in p.get("files") or []] + \
               [Ref("test", t) for t in (p.get("tests") or {})]
        if refs:
            claims.append(Claim("why_t0_missed_it", str(p.get("message", "")), BY_EVIDENCE, refs[:4]))
    return [c for c in claims if c.refs]


def as_text(claims: Sequence[Claim]) -> dict[str, str]:
    """Each part as one paragraph, every claim followed by what backs it."""
    return {part: " ".join(c.render() for c in claims if c.part == part) for part in PARTS}
