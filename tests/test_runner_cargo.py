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


def test_a_canary_for_a_package_becomes_that_packages_integration_test(tmp_path):
    canary = "tests/numerals/split_range_1a2b3c.rs"
    ids = ["numerals::convert: small_numbers", f"{canary}::merge_order_4d5e6f"]
    log = LOG.replace("tests/tj_range.rs (target/debug/deps/tj_range-5e6f)",
                      "tests/split_range_1a2b3c.rs (target/debug/deps/split_range_1a2b3c-5e6f)")
    log = log.replace("above_range_is_none", "merge_order_4d5e6f")
    argv, out = launch(tmp_path, ids, {canary: "#[test] fn merge_order_4d5e6f() {}"}, log)
    repo = tmp_path / "repo"
    assert (repo / "tests" / "split_range_1a2b3c.rs").is_file() and not (repo / "tests" / "numerals").exists()
    assert argv[3:7] == ["--test", "convert", "--test", "split_range_1a2b3c"]
    assert out[ids[1]].status == "failed" and out[ids[0]].status == "passed"


WORKSPACE_LOGS = {
    "numkit": """\
   Compiling numkit v0.1.0 (/w/crates/numkit)
     Running unittests src/lib.rs (target/debug/deps/numkit-50d1)

running 1 test
test tests::doubles ... ok

     Running tests/parse_value_1a2b3c.rs (target/debug/deps/parse_value_1a2b3c-9f00)

running 2 tests
test count_token_4d5e6f ... ok
test label_shape_7a8b9c ... FAILED

     Running tests/w.rs (target/debug/deps/w-1111)

running 1 test
test halves ... FAILED
""",
    "word-kit": """\
     Running unittests src/lib.rs (target/debug/deps/word_kit-f427)

running 1 test
test tests::doubles ... FAILED
""",
}


def test_a_workspace_without_a_root_package_is_tested_package_by_package(tmp_path):
    """A virtual manifest: members come from `cargo metadata`; each named package runs in its
    own `cargo test -p`, its canary lands in its own tests/ folder, and a test named the same
    in two packages is told apart."""
    repo, bindir = tmp_path / "repo", tmp_path / "bin"
    files = {"Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
             "crates/numkit/Cargo.toml": '[package]\nname = "numkit"\n',
             "crates/word-kit/Cargo.toml": '[package]\nname = "word-kit"\n',
             "tests/numkit/parse_value_1a2b3c.rs": "#[test] fn count_token_4d5e6f() {}\n",
             "crates/numkit/tests/w.rs": "#[test] fn halves() {}\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    meta = {"packages": [{"name": n, "manifest_path": str(repo / "crates" / n / "Cargo.toml")}
                         for n in ("numkit", "word-kit")]}
    bindir.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    for name, text in WORKSPACE_LOGS.items():
        (tmp_path / f"log-{name}").write_text(text)
    fake = bindir / "cargo"
    fake.write_text(f"#!/bin/sh\n[ \"$1\" = metadata ] && exec cat {tmp_path}/meta.json\n"
                    f"printf '%s\\n' \"$*\" >> {tmp_path}/argv\n"
                    f"while [ \"$1\" != -p ]; do shift; done\ncat {tmp_path}/log-$2\nexit 101\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    launcher = tmp_path / "cargo_launch.py"
    launcher.write_text(LAUNCHER)
    runner = get_runner("cargo test")
    ids = ["numkit: tests::doubles", "word-kit: tests::doubles",
           "tests/numkit/parse_value_1a2b3c.rs::count_token_4d5e6f",
           "tests/numkit/parse_value_1a2b3c.rs::label_shape_7a8b9c", "crates/numkit/tests/w.rs",
           "tests/lost.rs"]
    out_dir = tmp_path / "out"
    for path, text in runner.command(ids, workdir=str(repo), out_dir=str(out_dir))[2].items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    proc = subprocess.run([sys.executable, str(launcher), str(out_dir / "spec.json")], capture_output=True,
                          env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"})
    assert (repo / "crates/numkit/tests/parse_value_1a2b3c.rs").is_file() and not (repo / "tests").exists()
    assert (tmp_path / "argv").read_text().splitlines() == [
        "test --no-fail-fast --offline -p numkit --lib --test parse_value_1a2b3c --test w",
        "test --no-fail-fast --offline -p word-kit --lib"]
    reports = {p: Path(p).read_bytes() if Path(p).exists() else None for p in runner.report_paths(str(out_dir))}
    out = runner.parse(ids, reports, result(proc.returncode))
    assert [out[i].status for i in ids] == ["passed", "failed", "passed", "failed", "failed", "not_found"]
    assert out["numkit::w: halves"].status == "failed"
    assert "in a member's folder" in out["tests/lost.rs"].message
