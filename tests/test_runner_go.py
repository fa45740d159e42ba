"""The go test runner without containers: its launcher against a stand-in `go` that prints a
recorded `go test -json` stream, and the parser on the statuses a user sees."""
from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.integrity import harness_reasons
from testjack_tui.sandbox.runners import get_runner, grader_ids, placement_hint, runner_name
from testjack_tui.sandbox.runners.go_runner import EVENTS, LAUNCHER, PLAN, STDERR, GoTestRunner
from testjack_tui.engine.export_suite import new_file_diff
from testjack_tui.engine.oracle import tagged_path

MOD = "example.com/textkit"


def ev(action, test=None, pkg=MOD, output=None, elapsed=0.01):
    rec = {"Action": action, "Package": pkg}
    if test:
        rec["Test"] = test
    if output is not None:
        rec["Output"] = output
    if action in ("pass", "fail", "skip"):
        rec["Elapsed"] = elapsed
    return json.dumps(rec)


def result(code=1, timed_out=False):
    return ExecResult(argv=[], exit_code=None if timed_out else code, timed_out=timed_out,
                      stdout_head="", stdout_tail="", stderr_head="", stderr_tail="",
                      log_path=None, duration=1.0)


def launch(tmp_path: Path, ids: list[str], files: dict[str, str], events: list[str],
           stderr: str = "", code: int = 1):
    """Run the launcher on the host in a repo holding `files`, with a fake `go` printing
    `events`; returns (the argv go got, the runner's outcomes)."""
    repo = tmp_path / "repo"
    for rel, text in {"go.mod": f"module {MOD}\n\ngo 1.19\n", **files}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "go"
    fake.write_text("#!/bin/sh\n"
                    f"printf '%s\\n' \"$@\" > {tmp_path}/argv\n"
                    f"cat {tmp_path}/events\n"
                    f"cat {tmp_path}/stderr >&2\n"
                    f"exit {code}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "events").write_text("".join(e + "\n" for e in events))
    (tmp_path / "stderr").write_text(stderr)
    launcher = tmp_path / "go_launch.py"
    launcher.write_text(LAUNCHER)
    out = tmp_path / "out"
    runner = GoTestRunner()
    argv, env, extra = runner.command(ids, workdir=str(repo), out_dir=str(out))
    for _path, _text in runner.command(ids, workdir=str(repo), out_dir=str(out))[2].items():
        Path(_path).parent.mkdir(parents=True, exist_ok=True)
        Path(_path).write_text(_text)
    proc = subprocess.run([sys.executable, str(launcher), str(out / "spec.json")], env={**os.environ, **env,
                          "PATH": f"{bindir}:{os.environ['PATH']}"}, capture_output=True, text=True)
    reports = {}
    for path in runner.report_paths(str(out)):
        reports[path] = Path(path).read_bytes() if Path(path).exists() else None
    go_argv = (tmp_path / "argv").read_text().split("\n") if (tmp_path / "argv").exists() else []
    return go_argv, runner.parse(ids, reports, result(proc.returncode)), repo


WITNESS = ("package textkit\n\nimport \"testing\"\n\n"
           "func TestTJUnderscore(t *testing.T) {}\n\nfunc TestTJEmpty(t *testing.T) {}\n")


def test_canonical_subtest_and_file_ids_run_in_one_go_test(tmp_path):
    ids = [f"{MOD}.TestSlugify", f"{MOD}.TestSlugify/edges", f"{MOD}/wrap.TestWords",
           "slug_tj_test.go", f"{MOD}.TestGone"]
    events = [ev("run", "TestSlugify"), ev("run", "TestSlugify/edges"),
              ev("output", "TestSlugify/edges", output="    slug_test.go:9: got \"-go-\"\n"),
              ev("fail", "TestSlugify/edges"), ev("fail", "TestSlugify"),
              ev("run", "TestTJUnderscore"), ev("pass", "TestTJUnderscore"),
              ev("run", "TestTJEmpty"), ev("skip", "TestTJEmpty"), ev("fail"),
              ev("run", "TestWords", pkg=f"{MOD}/wrap"), ev("pass", "TestWords", pkg=f"{MOD}/wrap"),
              ev("pass", pkg=f"{MOD}/wrap")]
    argv, out, _ = launch(tmp_path, ids, {"slug_tj_test.go": WITNESS}, events)
    # One process: -json, no test cache, anchored top-level names, each package once.
    assert argv[:4] == ["test", "-json", "-count=1", "-timeout"]
    run = argv[argv.index("-run") + 1]
    assert run.startswith("^(") and set(run[2:-2].split("|")) == {
        "TestSlugify", "TestWords", "TestTJUnderscore", "TestTJEmpty", "TestGone"}
    assert [a for a in argv if a.startswith(MOD)] == [MOD, f"{MOD}/wrap"]
    assert out[f"{MOD}.TestSlugify"].status == "failed"
    assert out[f"{MOD}.TestSlugify/edges"].status == "failed"
    assert 'got "-go-"' in out[f"{MOD}.TestSlugify/edges"].message
    assert out[f"{MOD}/wrap.TestWords"].status == "passed"
    assert out[f"{MOD}.TestGone"].status == "not_found"
    # A witness file: its tests under `file::Test` (engine) and `<import path>.Test` (grader).
    assert out["slug_tj_test.go"].status == "passed"  # one passed, one skipped
    assert out["slug_tj_test.go::TestTJEmpty"].status == "skipped"
    assert out[f"{MOD}.TestTJUnderscore"].status == "passed"
    assert grader_ids("go test", "slug_tj_test.go", {k: {} for k in out}) == [
        f"{MOD}.TestTJEmpty", f"{MOD}.TestTJUnderscore"]


def test_build_failure_is_an_error_with_the_compiler_message(tmp_path):
    stderr = (f"# {MOD} [{MOD}.test]\n./slug_tj_test.go:6:9: undefined: SlugifyStrict\n"
              f"FAIL\t{MOD} [build failed]\n")
    _, out, _ = launch(tmp_path, ["slug_tj_test.go", f"{MOD}/wrap.TestWords"],
                       {"slug_tj_test.go": WITNESS},
                       [ev("run", "TestWords", pkg=f"{MOD}/wrap"),
                        ev("pass", "TestWords", pkg=f"{MOD}/wrap")], stderr=stderr)
    assert out["slug_tj_test.go"].status == "error"
    assert out["slug_tj_test.go"].message.startswith("build failed")
    assert "undefined: SlugifyStrict" in out["slug_tj_test.go"].message
    assert out[f"{MOD}/wrap.TestWords"].status == "passed"  # other packages still ran


def test_panic_and_timeout(tmp_path):
    events = [ev("run", "TestA"), ev("pass", "TestA"), ev("run", "TestB"),
              ev("output", "TestB", output="panic: boom\n")]
    ids = [f"{MOD}.TestA", f"{MOD}.TestB", f"{MOD}.TestC"]
    _, out, repo = launch(tmp_path, ids, {}, events, code=2)
    assert [out[i].status for i in ids] == ["passed", "error", "not_found"]
    assert "panic: boom" in out[f"{MOD}.TestB"].message
    # The same stream cut by our timeout: the running test timed out, the next never ran.
    runner = GoTestRunner()
    reports = {f"x/{EVENTS}": "\n".join(events).encode(), f"x/{STDERR}": b"",
               f"x/{PLAN}": (tmp_path / "out" / PLAN).read_bytes()}
    timed = runner.parse(ids, reports, result(timed_out=True))
    assert [timed[i].status for i in ids] == ["passed", "timed_out", "timed_out"]


def test_same_test_name_in_two_witness_files_is_renamed_for_the_batch(tmp_path):
    other = WITNESS.replace("TestTJEmpty", "TestTJOther")
    events = [ev("run", "TestTJUnderscore"), ev("pass", "TestTJUnderscore"),
              ev("run", "TestTJUnderscore_tj2"), ev("fail", "TestTJUnderscore_tj2")]
    argv, out, repo = launch(tmp_path, ["a_tj_test.go", "b_tj_test.go"],
                             {"a_tj_test.go": WITNESS, "b_tj_test.go": other}, events)
    assert "func TestTJUnderscore_tj2(" in (repo / "b_tj_test.go").read_text()
    assert out["a_tj_test.go::TestTJUnderscore"].status == "passed"
    assert out["b_tj_test.go::TestTJUnderscore"].status == "failed"
    assert out["b_tj_test.go"].status == "failed"


def test_files_go_test_does_not_compile_are_not_found_with_the_reason(tmp_path):
    _, out, _ = launch(tmp_path, ["slug_tj.go", "missing_test.go", "slug_tj_test.go::TestNope"],
                       {"slug_tj.go": WITNESS, "slug_tj_test.go": WITNESS}, [])
    assert out["slug_tj.go"].status == "not_found" and "*_test.go" in out["slug_tj.go"].message
    assert out["missing_test.go"].message == "no such test file"
    assert out["slug_tj_test.go::TestNope"].status == "not_found"


def test_runner_names_and_placement():
    assert runner_name("go") == runner_name("golang") or runner_name("go") == "go test"
    assert get_runner("go test").name == "go test"
    assert runner_name("junit") is None
    hint = placement_hint("go", "go test")
    assert "_test.go" in hint and "package" in hint
    assert "cannot be run" in placement_hint("java", "junit")


def test_test_main_and_init_in_test_files_are_harness():
    test_main = new_file_diff("main_test.go", "package textkit\n\nfunc TestMain(m *testing.M) {\n}\n")
    init = new_file_diff("wrap/x_test.go", "package wrap\n\nfunc init() {\n\tstrict = true\n}\n")
    plain = new_file_diff("wrap/y_test.go", "package wrap\n\nfunc TestY(t *testing.T) {}\n")
    reasons = harness_reasons(test_main + init + plain)
    assert "TestMain" in reasons["main_test.go"] and "TestMain" in reasons["wrap/x_test.go"]
    assert reasons["wrap/y_test.go"] == "test file"


@pytest.mark.parametrize("path,tag,want", [
    ("tests/test_x.py", "2", "tests/test_x_2.py"),
    ("pkg/slug_tj_test.go", "2", "pkg/slug_tj_2_test.go"),
    ("src/a.test.ts", "w1", "src/a_w1.test.ts"),
    ("tests/it.rs", "2", "tests/it_2.rs"),
])
def test_renamed_witness_files_stay_collectable(path, tag, want):
    assert tagged_path(path, tag) == want


def test_go_ghost_lines_from_a_statement_profile():
    from testjack_tui.engine.detectors import parse_diff
    from testjack_tui.engine.detectors.ghost_go import intersect_profile

    patch = ("diff --git a/slug.go b/slug.go\n--- a/slug.go\n+++ b/slug.go\n@@ -6,2 +6,6 @@\n"
             " func Slugify(s string) string {\n+\tif s == \"\" {\n+\t\treturn \"\"\n+\t}\n"
             "+\treturn strings.ToLower(s)\n }\n")
    profile = [f"{MOD}/slug.go:6.30,7.14 1 1", f"{MOD}/slug.go:7.14,9.3 1 0",
               f"{MOD}/slug.go:10.2,10.27 1 1"]
    report = intersect_profile(profile, parse_diff(patch))
    assert (report.added_lines, report.executed_lines) == (3, 2)
    assert [(g.line, g.code.strip()) for g in report.ghost_lines] == [(8, 'return ""')]
    assert report.branches == 0 and "statement coverage" in report.to_text()


def test_ghost_branches_for_a_language_without_coverage_are_unavailable_not_clean():
    from testjack_tui.engine.detectors import evidence_provider
    from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial

    task = Task("t", "P", Environment(image="x"), Reference(patch=""), OfficialTests(framework="cargo test"),
                language="rust")
    trial = Trial("s", "t", "a", "m", "diff --git a/src/lib.rs b/src/lib.rs\n", True)
    evidence = asyncio.run(evidence_provider(object(), task, trial, {"model": object()}))
    assert evidence["ghost"]["error"].startswith("no coverage tool for rust tasks")
    assert not [s for s in evidence["signals"] if s["detector"] == "ghost_branches"]


def test_a_canary_written_under_an_import_path_lands_in_that_package(tmp_path):
    """Canaries for `<import path>.TestName` ids are written under the import path as
    `package _`; the launcher moves each into its package's folder with that package's clause,
    and go test runs it there."""
    from testjack_tui.sandbox.canaries import GoCanaries, make_canaries

    ids = [f"{MOD}.TestSlugify", f"{MOD}/wrap.TestWords"]
    canaries = make_canaries(ids, style=GoCanaries())
    assert set(canaries.expected.values()) == {"passed", "failed"}  # no per-test "error" in Go
    files = {"slug.go": "package textkit\n", "wrap/wrap.go": "// Package wrap.\npackage wrap\n",
             **canaries.files}
    go_argv, out, repo = launch(tmp_path, ids + canaries.ids, files, [])
    placed = sorted(str(p.relative_to(repo)) for p in repo.rglob("*_test.go"))
    assert sorted(p.rsplit("/", 1)[0] if "/" in p else "." for p in placed) == [".", "wrap"]
    assert not (repo / "example.com").exists()
    clauses = {(repo / p).read_text().splitlines()[0] for p in placed}
    assert clauses == {"package textkit", "package wrap"}
    names = {i.split("::")[1] for i in canaries.ids}
    assert all(n in go_argv[go_argv.index("-run") + 1] for n in names)
    assert {f"{MOD}", f"{MOD}/wrap"} <= set(go_argv)
