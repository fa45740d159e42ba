"""What decides is never cut: a T0 larger than the request's budget still reaches the task
analyst with every fail-to-pass test whole (as received by the endpoint over HTTP); the long
pass-to-pass list and the other test files are what go, and the request says what was cut and
which tool pages it back. The trial's patch is cut by whole file sections, source first."""
from __future__ import annotations

import dataclasses

import pytest

from agents_worlds import FileWorlds, make_ctx, make_task
from fake_openai_server import FakeOpenAIServer, Reply

from testjack_tui.agents import LLMTaskAnalyst, OpenAIChatModel
from testjack_tui.agents.request_budget import T0_BUDGET, official_tests_view, patch_view
from testjack_tui.config import Profile
from testjack_tui.model import OfficialTests


def _file(path: str, body: str) -> str:
    lines = body.splitlines()
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines))


# The fail-to-pass tests: each asserts something a reader must see whole.
F2P_BODY = "from calc import double\n\n" + "\n".join(
    f"def test_double_{i}():\n    assert double({i}) == {2 * i}, 'case {i} of the spec'\n" for i in range(300))
HELPER_BODY = "\n".join(f"def helper_{i}():\n    return {i}  # padding for an unrelated file\n" for i in range(400))
P2P = tuple(f"tests/test_legacy.py::test_kept_behaviour_number_{i}" for i in range(2_000))


def big_tests() -> OfficialTests:
    return OfficialTests(
        framework="pytest",
        # The helper file comes first in the patch, as in the real task where the start of T0 was lost.
        test_patch=_file("tests/test_helpers.py", HELPER_BODY) + _file("tests/test_calc.py", F2P_BODY),
        fail_to_pass=tuple(f"tests/test_calc.py::test_double_{i}" for i in range(300)),
        pass_to_pass=P2P)


def test_t0_larger_than_the_budget_keeps_fail_to_pass_whole():
    tests = big_tests()
    assert len(tests.test_patch) + sum(map(len, P2P)) > 3 * T0_BUDGET
    view = official_tests_view(tests)
    assert _file("tests/test_calc.py", F2P_BODY).rstrip("\n") in view
    assert all(t in view for t in tests.fail_to_pass)
    assert "helper_399" not in view and P2P[-1] not in view
    assert "pass-to-pass ids" in view and "tests/test_helpers.py" in view and "view_official_tests" in view
    # Whole ids only: no id is cut in the middle.
    listed = [ln.strip() for ln in view.splitlines() if ln.startswith("  tests/test_legacy.py")]
    assert listed and set(listed) <= set(P2P)


async def test_the_analysts_request_holds_every_fail_to_pass_test():
    task = dataclasses.replace(make_task(), tests=big_tests())
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", {
            "notes": "n", "candidates": [], "suspicious_features": [],
            "traceability": [{"requirement": "double", "explicit": True, "t0_tests": [], "coverage": "full"}]})]))
        ctx = dataclasses.replace(make_ctx(FileWorlds(None, worlds=("null",)), None, []), task=task)
        analyst = LLMTaskAnalyst(OpenAIChatModel(Profile(name="f", base_url=server.base_url,
                                                         model="fake-model", timeout=5)))
        await analyst.analyse(ctx)
        await analyst.aclose()
        user = [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"][0]
    for i in range(300):
        assert f"+def test_double_{i}():\n+    assert double({i}) == {2 * i}, 'case {i} of the spec'" in user
    assert "pass-to-pass ids" in user and "call view_official_tests" in user.lower()
    # The P2P list and the unrelated helper file did not ride along.
    assert "helper_399" not in user and P2P[-1] not in user
    assert len(user) < len(official_tests_view(big_tests(), limit=10**9)) // 2


def test_a_long_patch_keeps_source_sections_whole_and_names_the_rest():
    source = _file("calc.py", "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(200)))
    noise = _file("tests/test_generated.py", "\n".join(f"def test_g{i}():\n    pass\n" for i in range(3_000)))
    view = patch_view(noise + source, limit=len(source) + 500)
    assert source.rstrip("\n") in view
    assert "test_g2999" not in view
    assert "tests/test_generated.py (+" in view and "view_diff" in view


# What pytest prints for a dict comparison: the hints used to fill the kept lines, so the
# differing items never reached the model.
DICT_FAILURE = (
    "def test_convert():\n>       assert convert(doc) == {'a': 1, 'b': {'c': 2}}\n"
    "E       AssertionError: assert {'a': 1, 'b': {'c': 3}} == {'a': 1, 'b': {'c': 2}}\n"
    "E         \n"
    "E         Omitting 1 identical items, use -vv to show\n"
    "E         Differing items:\n"
    "E         {'b': {'c': 3}} != {'b': {'c': 2}}\n"
    "E         Use -v to get more diff\n"
    "\ntests/test_tj_convert.py:4: AssertionError")


def test_failure_lines_keep_the_diff_not_the_hints():
    from testjack_tui.agents.tools import failure_lines

    lines = failure_lines(DICT_FAILURE, limit=4)
    assert "{'b': {'c': 3}} != {'b': {'c': 2}}" in lines and "Differing items:" in lines
    assert "Omitting 1 identical items" in lines
    assert not any("-v" in line for line in lines)


def test_solution_blind_repair_feedback_keeps_the_differing_items():
    from testjack_tui.engine.oracle import feedback_for
    from testjack_tui.engine.roles import Candidate
    from testjack_tui.engine.runner import RunResult

    node = "tests/test_tj_convert.py::test_convert"
    run = RunResult(key="k", world="reference", trial_id=None, test_ids=[node],
                    outcomes={node: {"status": "failed", "message": DICT_FAILURE}})
    candidate = Candidate(id="t:analysis:1.v1", path="tests/test_tj_convert.py", source="",
                          requirement="r", author="task_analysis")
    text = feedback_for(run, candidate, sanitize=True)
    assert "{'b': {'c': 3}} != {'b': {'c': 2}}" in text and "use -v" not in text.lower()


# ---- exact text to the model (35.5) ------------------------------------------------------------
COMMAND = "python3 - <<'PY' 2>&1 | tail -n 5\nprint(\"a\" < \"b\")\nPY"
OUTPUT = "[exit code 0]\nTrue <<'PY' 2>&1 \x1b[31mred\x1b[0m nul:\x00:end"


class _ExactWorlds(FileWorlds):
    async def run(self, world, command, timeout=60):
        self.calls.append(("run", world, command))
        return OUTPUT


async def test_commands_outputs_and_files_reach_the_model_as_they_ran():
    worlds = _ExactWorlds(None, worlds=("null",))
    worlds.files["null"]["calc.py"] = "def cmp(a, b):\n    return a < b and b > 0  # 2>&1 <<'PY'\n"
    with FakeOpenAIServer() as server:
        server.script(
            Reply(tool_calls=[("run", {"world": "null", "command": COMMAND}),
                              ("read_file", {"world": "null", "path": "calc.py"})]),
            Reply(tool_calls=[("submit", {
                "notes": "n", "candidates": [], "suspicious_features": [],
                "traceability": [{"requirement": "r", "explicit": False, "t0_tests": [], "coverage": "none"}]})]))
        analyst = LLMTaskAnalyst(OpenAIChatModel(Profile(name="f", base_url=server.base_url,
                                                         model="fake-model", timeout=5)))
        await analyst.analyse(make_ctx(worlds, None, []))
        await analyst.aclose()
        ran, read = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert worlds.calls[0] == ("run", "null", COMMAND)
    # The command as the model wrote it, and its output as it ran (escapes included) ...
    assert f"$ {COMMAND}\n[exit code 0]\nTrue <<'PY' 2>&1 \x1b[31mred\x1b[0m nul:" in ran
    assert "›" not in ran and "‹" not in ran
    # ... minus only what a JSON payload cannot carry, shown rather than dropped.
    assert "\x00" not in ran and "nul:\\x00:end" in ran
    assert "return a < b and b > 0  # 2>&1 <<'PY'" in read
    # Still framed as untrusted data.
    for content in (ran, read):
        assert content.startswith("<untrusted-trial-data boundary=") and content.rstrip().endswith(">")


# ---- how turns run, and whose review it is (35.8) ----------------------------------------------
async def test_every_request_says_its_time_limit_and_that_tool_calls_run_in_order():
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", {
            "notes": "n", "candidates": [], "suspicious_features": [],
            "traceability": [{"requirement": "r", "explicit": False, "t0_tests": [], "coverage": "none"}]})]))
        analyst = LLMTaskAnalyst(OpenAIChatModel(Profile(name="f", base_url=server.base_url,
                                                         model="fake-model", timeout=7)))
        await analyst.analyse(make_ctx(FileWorlds(None, worlds=("null",)), None, []))
        await analyst.aclose()
        system = server.requests[0]["messages"][0]["content"]
    assert "time limit of 7 s" in system
    assert "run one after another, in the order you list them" in system


def test_a_reviewer_on_the_authors_model_is_said_once_at_start(monkeypatch, podman_calls):
    from typer.testing import CliRunner

    from testjack_tui.cli import app
    from testjack_tui.config import config_path

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TESTJACK_MODEL", "coder")
    base = ["audit", "benchmarks/demo", "--agent", "openai", "--headless", "--auto-approve", "--task", "no-such-task"]
    output = CliRunner().invoke(app, base).output
    notes = [ln for ln in output.splitlines() if "review is not independent" in ln]
    assert len(notes) == 1 and "coder at http://127.0.0.1:9/v1" in notes[0]
    assert "task_analysis and audit" in notes[0] and "--reviewer NAME" in notes[0]
    # The reviewer on its own profile (another model): nothing to say.
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[profiles.judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "judge-model"\n')
    output = CliRunner().invoke(app, base + ["--reviewer", "judge"]).output
    assert "agent reviewer: judge" in output and "not independent" not in output
    assert podman_calls() == []


def test_audit_repair_feedback_names_every_failing_assertion_whatever_the_message_budget():
    from testjack_tui.engine.oracle import feedback_for
    from testjack_tui.engine.roles import Candidate
    from testjack_tui.engine.runner import RunResult

    long_trace = "".join(f"  frame {i}: some/module.py:{i} in call\n" for i in range(200))
    outcomes = {f"tests/test_tj_convert.py::test_{i}": {
        "status": "failed", "message": long_trace + f"E       assert {i} == {i + 1}\n"} for i in range(5)}
    run = RunResult(key="k", world="reference", trial_id=None, test_ids=list(outcomes), outcomes=outcomes)
    candidate = Candidate(id="t:tr:1.v1", path="tests/test_tj_convert.py", source="", requirement="r",
                          author="audit")
    text = feedback_for(run, candidate, sanitize=False)
    assert all(f"assert {i} == {i + 1}" in text for i in range(5))


def test_long_solution_blind_feedback_says_it_was_cut():
    from testjack_tui.agents import sanitize_reference_feedback

    feedback = "".join(f"E       assert {i} == {i + 1}\n" for i in range(1_000))
    text = sanitize_reference_feedback(feedback, None, limit=500)
    assert len(text) < 600 and text.endswith("more lines of this feedback]")
    assert "assert 0 == 1" in text and all(line.startswith(("E ", "[cut")) for line in text.splitlines())


def test_a_test_patch_no_id_can_be_tied_to_is_kept_whole():
    tests = OfficialTests(framework="pytest", test_patch="not a diff at all\n" * 3_000,
                          fail_to_pass=("weird id scheme",), pass_to_pass=P2P)
    view = official_tests_view(tests)
    assert tests.test_patch.rstrip("\n") in view and P2P[-1] not in view


@pytest.mark.parametrize("framework,path,body,test_id", [
    ("go test", "parse/parse_test.go", "func TestParseHours(t *testing.T) {\n\tif Parse(\"1h\") != 3600 { t.Fail() }\n}",
     "TestParseHours"),
    ("django", "app/tests.py", "class T(TestCase):\n    def test_parse_hours(self):\n        self.assertEqual(1, 1)",
     "test_parse_hours (app.tests.T)"),
    ("cargo", "tests/parse.rs", "#[test]\nfn parse_hours() {\n    assert_eq!(parse(\"1h\"), 3600);\n}",
     "parse_hours"),
    ("jest", "src/parse.test.js", "test('parses hours', () => {\n  expect(parse('1h')).toBe(3600);\n});",
     "src/parse.test.js > parses hours"),
])
def test_fail_to_pass_sections_are_found_for_every_runner(framework, path, body, test_id):
    tests = OfficialTests(framework=framework, test_patch=_file("other/noise_file.txt", HELPER_BODY) + _file(path, body),
                          fail_to_pass=(test_id,), pass_to_pass=P2P)
    view = official_tests_view(tests, limit=8_000)
    assert _file(path, body).rstrip("\n") in view and "helper_399" not in view
