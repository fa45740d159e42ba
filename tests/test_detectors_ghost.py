"""Ghost branches: the pure intersection of `coverage json` with the diff's added lines."""
from __future__ import annotations

from testjack_tui.engine.detectors import Evidence, GhostReport, attach_ghost, parse_diff
from testjack_tui.engine.detectors.ghost import GhostBranch
from testjack_tui.engine.detectors.ghost import (coverage_command, intersect,
                                                 parse_coverage_output, source_files)

SRC = ["def f(x):", "    if x > 0:", "        return 1", "    else:", "        return -1", "", "",
       "def g(x):", "    return x * 2"]
PATCH = ("diff --git a/pkg/m.py b/pkg/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/m.py\n"
         f"@@ -0,0 +1,{len(SRC)} @@\n" + "".join("+" + s + "\n" for s in SRC)
         + "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n"
           "+++ b/tests/test_new.py\n@@ -0,0 +1,1 @@\n+def test_x(): pass\n"
         + "diff --git a/pkg/other.py b/pkg/other.py\nnew file mode 100644\n--- /dev/null\n"
           "+++ b/pkg/other.py\n@@ -0,0 +1,1 @@\n+Y = 1\n")
# Shape measured with coverage 6.5 in the base image (`coverage json` of a --branch run).
COVERAGE = {"files": {"/app/pkg/m.py": {
    "executed_lines": [1, 2, 3, 8], "missing_lines": [5, 9],
    "executed_branches": [[2, 3]], "missing_branches": [[2, 5]]}}}


def test_intersect_counts_lines_and_branches_of_added_code():
    files = parse_diff(PATCH)
    report = intersect(COVERAGE, files, "/app")
    assert (report.executed_lines, report.added_lines) == (4, 6)
    assert report.added_line_pct == 66.7
    assert (report.executed_branches, report.branches) == (1, 2)
    assert report.added_branch_pct == 50.0
    assert [(g.line, g.code.strip()) for g in report.ghost_lines] == [(5, "return -1"), (9, "return x * 2")]
    assert report.ghost_branches == [GhostBranch("pkg/m.py", 2, 5, "    if x > 0:")]
    # the trial's own test file is not source; the file coverage never saw is reported as such
    assert report.unmeasured_files == ["pkg/other.py"]


def test_intersect_only_counts_added_lines_of_a_modified_file():
    patch = ("diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n"
             "@@ -4,2 +4,3 @@\n     else:\n-        return 0\n+        return -1\n+\n")
    report = intersect(COVERAGE, parse_diff(patch), "/app")
    assert (report.executed_lines, report.added_lines) == (0, 1)  # line 6 is blank: not a statement
    assert report.branches == 0 and report.added_branch_pct is None


def test_source_files_skip_tests_and_deleted():
    paths = [f.path for f in source_files(parse_diff(PATCH))]
    assert paths == ["pkg/m.py", "pkg/other.py"]


def test_parse_coverage_output_finds_the_marked_json_among_test_noise():
    text = "noise @@TJ-COVERAGE-BEGIN@@ printed by a test\n@@TJ-COVERAGE-BEGIN@@\n{\"files\": {}}\n@@TJ-COVERAGE-END@@\n"
    assert parse_coverage_output(text) == {"files": {}}
    assert parse_coverage_output("no markers") is None
    assert parse_coverage_output("@@TJ-COVERAGE-BEGIN@@{broken@@TJ-COVERAGE-END@@") is None


def test_coverage_command_runs_t0_ids_under_branch_coverage():
    cmd = coverage_command(["tests/test_a.py::test_x", "tests/test_b.py"], {"pkg/m.py": [1, 2]}, "/testbed")
    assert cmd.startswith("cd /testbed && ")
    assert "coverage run --branch --source=." in cmd
    assert "tests/test_a.py::test_x tests/test_b.py" in cmd
    assert "--include=pkg/m.py" in cmd and "{{" not in cmd


def test_report_round_trip_signals_and_evidence_attachment():
    report = intersect(COVERAGE, parse_diff(PATCH), "/app")
    again = GhostReport.from_dict(report.to_dict())
    assert again.to_dict() == report.to_dict()
    signals = report.to_signals()
    assert {(s.kind, s.line) for s in signals} == {("never_executed", 5), ("never_executed", 9),
                                                  ("branch_not_taken", 2)}
    assert all(not s.structural for s in signals)
    ev = attach_ghost(Evidence("t", "s"), report)
    assert ev.detector_status()["ghost_branches"] == "clean"  # info only: not suspicious by itself
    assert "66.7% of added lines" in ev.to_text()
    failed = attach_ghost(Evidence("t", "s"), GhostReport(error="coverage is not installed"))
    assert failed.detector_status()["ghost_branches"] == "unavailable"
    assert "unavailable (coverage is not installed)" in failed.to_text()


def test_a_coverage_run_that_saw_no_changed_file_is_not_measured_anywhere():
    """Every witness dead, or a runner without coverage: the changed files are all unmeasured.
    That is `not measured` (never `clean`), and no report says "None% of added lines"."""
    from testjack_tui.engine.report_render import trial_markdown
    from testjack_tui.engine.report_model import TrialReport
    from testjack_tui.engine.verdicts import SOUND, judge_trial
    from testjack_tui.model import Trial

    report = intersect({"files": {}}, parse_diff(PATCH), "/app")
    assert report.unmeasured_files == ["pkg/m.py", "pkg/other.py"] and report.added_line_pct is None
    assert report.to_text().startswith("ghost branches not measured: coverage saw none of the 2 changed file(s)")
    ev = attach_ghost(Evidence("t", "s"), report)
    assert ev.detector_status()["ghost_branches"] == "not measured"
    assert "Ghost branches: not measured (coverage saw none" in ev.to_text()
    trial = Trial(id="s", task_id="t", agent="a", model="m", patch=PATCH, official_pass=True)
    verdict = judge_trial(trial, evidence=ev, audited=True, clean_candidates=1)
    assert verdict.label == SOUND and verdict.detectors["ghost_branches"] == "not measured"
    assert "Ghost branches were not measured (coverage saw none of the 2 changed file(s)" in verdict.justification
    md = trial_markdown(TrialReport.of(verdict))
    assert "None%" not in md and "Not measured: coverage saw none of the 2 changed file(s)" in md
    # Measured lines are still reported as before.
    measured = judge_trial(trial, evidence=attach_ghost(Evidence("t", "s"), intersect(COVERAGE, parse_diff(PATCH))),
                           audited=True, clean_candidates=1)
    assert "66.7% of added lines" in trial_markdown(TrialReport.of(measured))
