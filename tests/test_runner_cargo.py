"""The cargo test runner without containers: the parser on recorded `cargo test` output, and
the launcher's target selection against a stand-in `cargo`."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from testjack_tui.sandbox.api import ExecResult
from testjack_tui.sandbox.runners import get_runner, grader_ids
from testjack_tui.sandbox.runners.cargo_runner import LAUNCHER

LOG = """\
   Compiling numerals v0.1.0 (/app)
    Finished test [unoptimized + debuginfo] target(s) in 1.20s
     Running unittests src/lib.rs (target/debug/deps/numerals-1a2b)

running 1 test
test tests::parses ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/convert.rs (target/debug/deps/convert-3c4d)

running 2 tests
test small_numbers ... ok
test big_numbers ... FAILED

failures:

---- big_numbers stdout ----
thread 'big_numbers' panicked at 'assertion failed: `(left == right)`
  left: `Some("MMMM")`,
 right: `None`', tests/convert.rs:9:5

failures:
    big_numbers

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/tj_range.rs (target/debug/deps/tj_range-5e6f)

running 2 tests
test above_range_is_none ... FAILED
test slow_one ... ignored
"""


def result(code=101, timed_out=False):
    return ExecResult(argv=[], exit_code=None if timed_out else code, timed_out=timed_out,
                      stdout_head="", stdout_tail="", stderr_head="", stderr_tail="",
                      log_path=None, duration=1.0)


def launch(tmp_path: Path, ids: list[str], files: dict[str, str], log: str, code: int = 101):
    repo = tmp_path / "repo"
    for rel, text in {"Cargo.toml": '[package]\nname = "numerals"\nversion = "0.1.0"\n', **files}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (tmp_path / "log").write_text(log)
    fake = bindir / "cargo"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/argv\ncat {tmp_path}/log\nexit {code}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    launcher = tmp_path / "cargo_launch.py"
    launcher.write_text(LAUNCHER)
    runner = get_runner("cargo test")
    out = tmp_path / "out"
    _, env, _ = runner.command(ids, workdir=str(repo), out_dir=str(out))
    for _path, _text in runner.command(ids, workdir=str(repo), out_dir=str(out))[2].items():
        Path(_path).parent.mkdir(parents=True, exist_ok=True)
        Path(_path).write_text(_text)
    proc = subprocess.run([sys.executable, str(launcher), str(out / "spec.json")], capture_output=True,
                          env={**os.environ, **env, "PATH": f"{bindir}:{os.environ['PATH']}"})
    reports = {p: Path(p).read_bytes() if Path(p).exists() else None for p in runner.report_paths(str(out))}
    argv = (tmp_path / "argv").read_text().split("\n") if (tmp_path / "argv").exists() else []
    return argv, runner.parse(ids, reports, result(proc.returncode))


def test_nextest_style_ids_and_a_witness_file_in_one_cargo_test(tmp_path):
    ids = ["numerals: tests::parses", "numerals::convert: small_numbers", "numerals::convert: big_numbers",
           "tests/tj_range.rs", "numerals::convert: gone"]
    argv, out = launch(tmp_path, ids, {"tests/tj_range.rs": "#[test] fn above_range_is_none() {}"}, LOG)
    assert argv[:4] == ["test", "--no-fail-fast", "--offline", "--lib"]
    assert argv[4:8] == ["--test", "convert", "--test", "tj_range"]  # each target once
    assert [out[i].status for i in ids] == ["passed", "passed", "failed", "failed", "not_found"]
    assert "MMMM" in out["numerals::convert: big_numbers"].message
    assert out["tests/tj_range.rs::slow_one"].status == "skipped"
    assert out["numerals::tj_range: above_range_is_none"].status == "failed"
    assert grader_ids("cargo test", "tests/tj_range.rs", {k: {} for k in out}) == [
        "numerals::tj_range: above_range_is_none", "numerals::tj_range: slow_one"]


def test_compile_error_is_an_error_and_witness_files_must_be_integration_tests(tmp_path):
    log = ("   Compiling numerals v0.1.0 (/app)\nerror[E0425]: cannot find function `to_romn`\n"
           " --> tests/tj_range.rs:3:5\nerror: could not compile `numerals` due to previous error\n")
    _, out = launch(tmp_path, ["tests/tj_range.rs", "src/tj.rs"], {"tests/tj_range.rs": ""}, log)
    assert out["tests/tj_range.rs"].status == "error"
    assert out["tests/tj_range.rs"].message.startswith("build failed") and "E0425" in out["tests/tj_range.rs"].message
    assert out["src/tj.rs"].status == "not_found" and "tests/<name>.rs" in out["src/tj.rs"].message


def test_timeout(tmp_path):
    runner = get_runner("cargo-nextest")
    plan = json.dumps({"package": "numerals", "ids": {"numerals::convert: a": {
        "binary": "numerals::convert", "name": "a", "file": None, "missing": ""}}}).encode()
    out = runner.parse(["numerals::convert: a"], {"x/cargo-plan.json": plan, "x/cargo-test.log": b""},
                       result(timed_out=True))
    assert out["numerals::convert: a"].status == "timed_out"
