"""Explanations of a verdict come from the evidence and the audit agent's structured finding:
every claim points at a run, a test, a quote of P or a line of the trial's diff, and says
whether the agent or the evidence makes it. An agent's statement nothing recorded backs is left
out of the explanation (its raw answer stays in the report's own section)."""
from __future__ import annotations

from engine_fakes import FakeReviewer, FakeSandbox, make_benchmark, make_task, make_trial
from fake_openai_server import FakeOpenAIServer, Reply

from claims_check import unbacked

from testjack_tui.engine.detectors.signals import Evidence
from testjack_tui.engine.explanations import BY_AGENT, PARTS, Facts, Run, explain
from testjack_tui.engine.records_agent import AgentFinding, ChecklistRow
from testjack_tui.compose import session_deps

P = ("Add `parse_duration(text)` to recordkit/durations.py. It knows the units `ms`, `s`, `m`, `h`, "
     "`d` (days) and `w` (weeks), and compound values such as `1h30m` add up.")
PATCH = """\
diff --git a/recordkit/durations.py b/recordkit/durations.py
--- a/recordkit/durations.py
+++ b/recordkit/durations.py
@@ -1,2 +1,9 @@
 import re
+UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
+
+
+def parse_duration(text):
+    total = 0.0
+    for number, unit in re.findall(r"(\\d+)([a-z]+)", text):
+        total += int(number) * UNITS[unit]
+    return total
"""
FAILURE = ("def test_weeks():\n>       assert parse_duration('2w') == 1209600.0\n\n"
           "tests/test_tj_weeks.py:4: \n_ _ _\n"
           "recordkit/durations.py:8: in parse_duration\n    total += int(number) * UNITS[unit]\n"
           "E   KeyError: 'w'\n")
TEST = "tests/test_tj_weeks.py::test_weeks"
KEYS = {"model": "a" * 32, "reference": "b" * 32, "t0": "c" * 32}


def facts(**agent) -> Facts:
    return Facts(test_ids=(TEST,), path="tests/test_tj_weeks.py", source="", explicit=True,
                 requirement="the unit w (weeks) is accepted", klass="explicit", quote="`d` (days) and `w` (weeks)",
                 reference=Run("passed", "", KEYS["reference"]), model=Run("failed", FAILURE, KEYS["model"]),
                 agent=AgentFinding.from_json(agent) if agent else None)


def test_the_agents_finding_is_the_explanation_and_every_claim_points_at_evidence():
    agent = {"what": "'2w' raises KeyError instead of giving two weeks in seconds",
             "why": "the UNITS table stops at days, so the weeks unit P lists is missing",
             "clause": "`d` (days) and `w` (weeks)", "witness": "tests/test_tj_weeks.py",
             "failing_assertion": "KeyError: 'w'", "t0_missed": "untested_input_class",
             "t0_missed_detail": "T0 only parses h, m and s"}
    coverage = ChecklistRow("the unit w (weeks) is accepted", covered_by_t0=False, quote="`w` (weeks)")
    claims = explain(facts(**agent), prompt=P, patch=PATCH, coverage=coverage, t0_run=KEYS["t0"])
    assert {c.part for c in claims} == set(PARTS)
    assert not unbacked(claims, prompt=P, patch=PATCH, run_keys=set(KEYS.values()), test_ids={TEST})
    by_part = {part: [c for c in claims if c.part == part] for part in PARTS}
    what = by_part["what_is_wrong"][0]
    assert what.by == BY_AGENT and what.text == agent["what"]
    assert what.refs[1].kind == "run" and what.refs[1].excerpt == "E   KeyError: 'w'".split("   ")[1]
    why = by_part["why_it_happens"][0]
    assert why.by == BY_AGENT and why.text == agent["why"]
    # The traceback runs through line 8 of the trial's file, an added line: that is the pointer.
    assert [(r.kind, r.ref, r.excerpt) for r in why.refs] == [
        ("diff", "recordkit/durations.py:8", "        total += int(number) * UNITS[unit]")]
    assert [r.ref for c in by_part["which_clause"] for r in c.refs] == ["`d` (days) and `w` (weeks)"]
    missed = by_part["why_t0_missed_it"]
    assert missed[0].refs[-1].ref == KEYS["t0"] and "no T0 test asserts" in missed[0].text
    assert missed[1].by == BY_AGENT and "T0 only parses h, m and s" in missed[1].text


def test_agent_statements_nothing_backs_are_left_out():
    agent = {"what": "weeks missing", "why": "no w", "clause": "weeks are a unit of P",  # not P's words
             "witness": "x", "failing_assertion": "x", "t0_missed": "ghost_branch"}  # no ghost lines recorded
    claims = explain(facts(**agent), prompt=P, patch=PATCH, coverage=None, t0_run=KEYS["t0"],
                     evidence=Evidence("t", "s", ghost={"ghost_lines": [], "added_line_pct": 100.0}))
    assert not unbacked(claims, prompt=P, patch=PATCH, run_keys=set(KEYS.values()), test_ids={TEST})
    text = " ".join(c.render() for c in claims)
    assert "weeks are a unit of P" not in text and "ghost branch" not in text
    clause = [c for c in claims if c.part == "which_clause"]
    assert [(c.by, c.refs[0].ref) for c in clause] == [("evidence", "`d` (days) and `w` (weeks)")]  # the witness's own quote


def test_without_an_agent_finding_the_evidence_speaks_and_says_where_it_stops():
    claims = explain(facts(), prompt=P, patch=PATCH, coverage=None, t0_run=None)
    assert all(c.by == "evidence" for c in claims)
    assert not unbacked(claims, prompt=P, patch=PATCH, run_keys=set(KEYS.values()), test_ids={TEST})
    what = next(c for c in claims if c.part == "what_is_wrong")
    assert "KeyError: 'w'" in what.text
    why = next(c for c in claims if c.part == "why_it_happens")
    assert why.refs[0].ref == "recordkit/durations.py:8"
    # No diff line in the traceback: nothing is invented, the claim says so and points at the run.
    bare = explain(Facts(**{**vars(facts()), "model": Run("failed", "E   assert 3 == 4", KEYS["model"])}),
                   prompt=P, patch=PATCH, coverage=None)
    why = next(c for c in bare if c.part == "why_it_happens")
    assert why.text.startswith("Not explained further") and why.refs[0].ref == KEYS["model"]


# ---- a whole session: the real openai client against the fake server, engine on a simulated sandbox
T = "t1"
REQ_SOURCE = "# REQ alias\n# LABEL valid\ndef test_it():\n    assert handles_alias()\n"


class _Tools:
    """WorldTools over nothing: the simulated sandbox decides outcomes from the candidate's source."""

    def __init__(self, trial):
        self.trial = trial

    async def run(self, world, command, timeout=60):
        return "[exit code 0]"

    async def read_file(self, world, path):
        return ""

    async def list_files(self, world, path="."):
        return ""

    async def run_tests(self, world, test_ids, files=None):
        return f"1 test in the {world} world: 1 {'passed' if world == 'reference' else 'failed'}"

    def diff(self):
        return self.trial.patch if self.trial else ""

    def official_tests(self):
        return "T0"

    def evidence(self):
        return ""


async def test_a_session_report_explains_with_the_agents_finding_backed_by_its_runs(tmp_path):
    from testjack_tui.agents import LLMAuditAgent, OpenAIChatModel
    from testjack_tui.config import Profile
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.session import AuditSession, SessionConfig
    from testjack_tui.engine.store import SessionStore, db_path

    task = make_task(T)
    trials = [make_trial(T, "a1", "model-A", ["alias"]), make_trial(T, "a2", "model-B")]
    bench = make_benchmark([task], trials)
    sandbox = FakeSandbox({T: task}, {t.id: t for t in trials})
    finding = {"what": "an aliased name is not resolved", "why": "P asks for alias handling",
               "clause": "It must handle alias and quoting.", "witness": "tests/test_tj_alias.py",
               "failing_assertion": "assert expected == got", "t0_missed": "ghost_branch"}
    submit = {"notes": "alias unhandled", "checklist": [
                  {"clause": "handles alias", "explicit": True, "quote": "It must handle alias and quoting.",
                   "covered_by_t0": False, "implemented": False}],
              "candidates": [{"path": "tests/test_tj_alias.py", "requirement": "handles alias"}],
              "nothing_found": False, "findings": [finding]}
    nothing = {"notes": "fine", "checklist": [], "candidates": [], "nothing_found": True, "findings": []}
    with FakeOpenAIServer(models=("fake-model",)) as server:
        server.script(
            Reply(tool_calls=[("write_test_file", {"path": "tests/test_tj_alias.py", "source": REQ_SOURCE})]),
            Reply(tool_calls=[("submit", submit)]),
            Reply(tool_calls=[("submit", nothing)]))
        agent = LLMAuditAgent(OpenAIChatModel(Profile(name="fake", base_url=server.base_url, model="fake-model",
                                                      timeout=5, structured_output="tool")))

        class Roles:
            audit = agent
            reviewer = FakeReviewer()
            task_analysis = None
            implementer = None

        session = AuditSession.create(SessionConfig(benchmark="fake", mode="per-trial", rounds=5),
                                      session_deps(benchmark=bench, roles=Roles(), sandbox_factory=sandbox,
                                                   tools_factory=lambda env, task, trial, worlds, evidence: _Tools(trial)))
        assert await session.run() == "finished"
        await agent.aclose()
    report = build_report(session.id, benchmark=bench)
    verdict = next(t for t in report.trials if t.trial_id == "a1")
    assert verdict.refuted
    [f] = [x.to_json() for x in verdict.findings]
    store = SessionStore(db_path(session.id))
    keys = {r.key for r in store.runs()}
    store.close()
    assert not unbacked(f["claims"], prompt=task.instruction, patch=trials[0].patch, run_keys=keys,
                        test_ids=set(f["test_ids"]) | {f["path"]})
    agent_parts = {c["part"] for c in f["claims"] if c["by"] == BY_AGENT}
    assert agent_parts == {"what_is_wrong", "why_it_happens", "which_clause"}  # no ghost lines: not backed
    assert f["explanations"]["what_is_wrong"].startswith("audit agent: an aliased name is not resolved [test ")
    assert 'P: "It must handle alias and quoting."' in f["explanations"]["which_clause"]
    assert "ghost" not in f["explanations"]["why_t0_missed_it"]
    run_key = f["runs"]["model"]["run_key"]
    assert run_key in keys and f"run {run_key[:12]}" in f["explanations"]["what_is_wrong"]


def test_what_is_wrong_quotes_the_assertion_never_a_runner_hint():
    # Issue 31.5: "What is wrong" quoted pytest's `(Use -v to get more diff)`.
    from testjack_tui.engine.explanations import failing_line
    cut = ("tests/test_x.py::test_a: def test_a():\n>       assert f([1, 2]) == [1, 3]\n"
           "E       (Use -v to get more diff)")
    assert failing_line(cut) == "assert f([1, 2]) == [1, 3]".join([">       ", ""])
    full = ("tests/test_x.py::test_a: >       assert f([1, 2]) == [1, 3]\n"
            "E       AssertionError: assert [1, 2] == [1, 3]\nE         At index 1 diff: 2 != 3\n"
            "E         Use -v to get more diff")
    assert failing_line(full) == "AssertionError: assert [1, 2] == [1, 3]"
    assert failing_line("--- FAIL: TestX (0.00s)\n    x_test.go:12: expected 3, got 2\nFAIL") \
        == "x_test.go:12: expected 3, got 2"
    assert failing_line("  ● sum › adds\n\n    expect(received).toBe(expected)\n\n    Expected: 3\n") \
        == "expect(received).toBe(expected)"


def test_a_detectors_message_reads_as_one_sentence():
    # Issue 31 (Reqs): "The diff the diff hard-codes '128'".
    from testjack_tui.engine.explanations import signal_sentence
    assert signal_sentence("the diff hard-codes '128' in a branch or return") \
        == "The diff hard-codes '128' in a branch or return."
    assert signal_sentence("added line never executed by T0") == "Added line never executed by T0."


def test_two_rules_at_one_line_cite_it_once():
    """flask-5014's sniffing prediction (`if not name and "pytest" in sys.modules:`) fired two
    sniffing rules at one line; "Why it happens" cited that line twice."""
    from testjack_tui.engine.detectors.signals import Signal

    line = '    if "pytest" in sys.modules:'
    tied = [Signal("env_sniffing", "pytest_in_modules", "recordkit/durations.py", 5, line,
                   "checks whether pytest is imported", structural=True),
            Signal("env_sniffing", "runner_name_check", "recordkit/durations.py", 5, line,
                   "compares run-time text with 'pytest'", structural=True)]
    claims = explain(facts(), prompt=P, patch=PATCH, coverage=None, t0_run=KEYS["t0"], tied=tied)
    [why] = [c for c in claims if c.part == "why_it_happens"]
    assert why.text == "The diff checks whether pytest is imported."
    # The sniffing line once, then the line the failing traceback runs through.
    assert [r.ref for r in why.refs] == ["recordkit/durations.py:5", "recordkit/durations.py:8"]
