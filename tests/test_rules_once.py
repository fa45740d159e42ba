"""Each rule of the method lives in one function; these tests pin the ones that used to have
several copies with different behaviour (witness fails, quote in prompt, diff files, harness files)."""
from __future__ import annotations

from testjack_tui.sandbox.integrity import harness_reasons
from testjack_tui.sandbox.runners.base import aggregate
from testjack_tui.agents import operator, roles_llm
from testjack_tui.diffs import added_files, parse_diff, touched_files
from testjack_tui.engine import ambiguity, export, runner
from testjack_tui.engine.detectors import collect_static_evidence
from testjack_tui.engine.runner import RunResult, witness_fails
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial


def test_does_this_witness_fail_on_this_trial_is_one_rule():
    for status in ("failed", "error", "not_found"):
        assert witness_fails(status)
        assert ambiguity.witness_outcome([status]) == "failed"
    # a hang, a kill or a crash fails too, but keeps its kind: rho never counts it (issue 27.4)
    for status in ("timed_out", "killed_memory", "killed_disk", "killed_pids", "killed_cpu", "crashed"):
        assert witness_fails(status)
        assert ambiguity.witness_outcome([status]) == status
    for status in ("passed", "skipped", None, ""):
        assert not witness_fails(status)
    # every caller uses the same function, not a copy
    assert runner.is_failing is witness_fails and export.witness_fails is witness_fails
    assert ambiguity.witness_fails is witness_fails


def test_the_two_status_combiners_agree():
    cases = [["passed", "not_found"], ["passed", "skipped"], ["skipped"], ["passed", "error"],
             ["failed", "timed_out"], []]
    for statuses in cases:
        run = RunResult("k", "w", None, [], {f"t.py::t{i}": {"status": s} for i, s in enumerate(statuses)})
        engine_view = run.status_of("t.py")
        assert engine_view == aggregate(statuses)
        if statuses:  # no statuses at all is "no measurement" for rho, not a run
            outcome = ambiguity.witness_outcome(statuses)
            assert (outcome not in ("passed", "unknown")) == witness_fails(engine_view), statuses


def test_is_this_quote_in_the_prompt_is_one_rule():
    prompt = "Durations like `1h30m` are accepted. Unknown units must raise ValueError."
    assert roles_llm.quote_in_prompt is ambiguity.quote_in_prompt
    assert operator.quote_in_prompt is ambiguity.quote_in_prompt
    quote = "unknown units must raise ValueError"
    assert ambiguity.quote_in_prompt(quote, prompt)
    # what the reviewer's answer check accepts, the engine and operator mode accept too
    assert operator.prompt_quote(f'rejects bad input: "{quote}"', prompt) == quote
    assert not ambiguity.quote_in_prompt("must raise ValueError ... Durations like", prompt)  # order
    assert operator.prompt_quote("rejects bad units", prompt) == ""


PATCH = (
    "diff --git a/pkg/conftest.py b/pkg/conftest.py\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/pkg/conftest.py\n@@ -0,0 +1,2 @@\n+def pytest_runtest_makereport(item, call):\n+    pass\n"
    "diff --git a/tox.ini b/tox.ini\n--- a/tox.ini\n+++ b/tox.ini\n@@ -1,2 +1,3 @@\n [pytest]\n"
    "+addopts = -p no:randomly\n testpaths = tests\n"
    "diff --git a/pkg/site.pth b/pkg/site.pth\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/pkg/site.pth\n@@ -0,0 +1 @@\n+import evil\n"
    "diff --git a/tests/test_core.py b/tests/test_core.py\n--- a/tests/test_core.py\n"
    "+++ b/tests/test_core.py\n@@ -3,2 +3,2 @@\n def test_x():\n-    assert f() == 2\n+    assert f()\n"
    "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n"
    "-x = 1\n+x = 2\n"
)


def test_what_files_a_diff_touches_is_one_parser():
    files = parse_diff(PATCH)
    assert [f.path for f in files] == list(touched_files(PATCH))
    assert added_files(PATCH) == {"pkg/conftest.py", "pkg/site.pth"}
    # stale hunk counts (hand-edited patches) are recounted, not dropped
    stale = "--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n d\n"
    assert [(f.path, [a.text for a in f.added]) for f in parse_diff(stale)] == [("x.py", ["c"])]


def test_touched_files_reads_headers_only_but_agrees_with_the_full_parse():
    # touched_files skips hunk bodies (loaders call it for every task); the names must not change.
    cases = [
        PATCH,
        "--- a/x.py\n+++ b/x.py\n@@ -1,9 +1,9 @@\n-a\n+b\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-c\n+d\n",
        "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n"
        "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n",
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n-a\n--- b\n",
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\nBROKEN\n+b\n"
        "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n",
    ]
    for patch in cases:
        names = dict.fromkeys(n for f in parse_diff(patch) for n in (f.old_path, f.path) if n)
        assert touched_files(patch) == tuple(names), patch


def test_what_is_a_harness_file_is_one_list_for_restore_and_evidence():
    task = Task(id="t", instruction="", environment=Environment(image="i"), reference=Reference(patch=""),
                tests=OfficialTests(test_patch="", fail_to_pass=("tests/test_new.py::test_a",),
                                    test_files=("tests/test_new.py",)))
    restored = harness_reasons(PATCH)
    evidence = collect_static_evidence(task, Trial("s", "t", "a", "m", PATCH, True))
    assert restored == evidence.stats.harness_files
    assert set(restored) == {"pkg/conftest.py", "tox.ini", "pkg/site.pth", "tests/test_core.py"}
    kinds = {s.kind for s in evidence.by_detector("harness_tampering")}
    assert kinds == {"pytest_hook", "pytest_config", "startup_hook", "edited_assertion"}
