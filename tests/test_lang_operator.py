"""Operator candidates in the task's own language, end to end with real podman (issue 29): for
each language fixture, the operator's test file (a recorded candidate's source, so the scripted
reviewer replays its recorded review) goes to `audit --agent operator` without a path; it lands
where the runner collects it, refutes the planted defect, the re-run command the report prints,
run as printed, fails on that trial and passes on G, and the harbor export (see below) gives G
reward 1 and the refuted trial 0 under the task's own unchanged test.sh.

One parametrised module; each case reuses its fixture's images (tests/test_lang_*.py build them;
tests/fixtures/jest is this module's own: jest from npm at image build, a CTRF grader of ours;
tests/fixtures/nodetest's CTRF reporter is the task's own, under node --test). A fixture with a
language module of its own (go, typescript, rust, node) adds the operator's witness to that
module's scripted audit (`lang_audits`, once per test session): `--reuse-runs` reads T0's runs
from it, and the witness's own runs where the scripted audit ran the same file at the same place
(go, typescript, node: the operator's file lands where the scripted audit put it). jest has no
scripted audit to lend, so its operator audit makes its own T0 runs.

The export round trip (`export --format harbor`, whose check runs the exported task through its
own unchanged test.sh on G and on each refuted trial, `testjack_check.json`) runs here for jest,
which has no language module, and for node, the export of a session that took T0's runs from
its lender (its run of T0 on G, lent, stands for G without the witnesses). An export of the
go, typescript or rust case would be their module's export of the scripted audit again
(test_lang_go/ts/rust): the same witness file in the same worlds, so the same runs of test.sh,
whose count those modules assert; one round trip proves it. The written folder is graded by test.sh itself in test_lang_node (on the
sound trial the check does not run); here, as in the modules, the written folder is tied to the
check by its content (lang_e2e.export_check: the ids and the patch the check ran).
"""
from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from lang_e2e import cli, export_check, export_runs_expected

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

FIXTURES = ROOT / "tests" / "fixtures"
SCRIPTED = {"go", "typescript", "rust", "node"}  # a scripted audit of the fixture exists to lend T0's runs
# Exported here: jest (no language module) and node (a borrowing session's export); the others'
# export of the same witness file is their module's (see the docstring).
EXPORTED = {"jest", "node"}
CASES = {
    # language: (fixture, task, recorded candidate, the name the operator gives it, defect trial, its repo path)
    "go": ("golang", "slugify-separators", "au_underscore_v1.go", "underscore.go",
           "slugify-separators__orca__3", "underscore_tj_test.go"),
    "typescript": ("typescript", "query-parse", "au_plus_v1.ts", "plus.ts", "query-parse__lumen__2",
                   "test/plus.tj.test.ts"),
    # jest graded from a CTRF report naming tests by jest's full name (`clamp with a NaN bound throws
    # a RangeError`): the export must use that name, not our runner's `file: a > b`.
    "jest": ("jest", "clamp-bounds", "au_nan_v1.js", "nan.js", "clamp-bounds__lumen__2", "test/nan.tj.test.js"),
    "rust": ("rust", "roman-numerals", "au_range_v1.rs", "range.rs", "roman-numerals__lumen__2",
             "tests/tj_range.rs"),
    # node --test graded from a CTRF report of the task's own reporter (`<file>: <describe> > <title>`).
    "node": ("nodetest", "parse-duration", "au_bare_v1.js", "bare.js", "parse-duration__lumen__2",
             "test/bare.tj.test.js"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tj-lang-operator-home")


# The operator's witness runs the scripted audit's session (the lender) already holds, by key:
# the same file at the same place (go, typescript, node) is the same run; rust's audit of the
# defect trial put its own copy elsewhere, so only the reference run and the other trial's
# replay are lent.
LENT_WITNESS_RUNS = {"go": 7, "typescript": 7, "rust": 2, "node": 6}
# The export's ids differ from those its probe ran G with: jest's grader names the test as jest
# does, not as our runner (node's reporter names it as our runner does).
FINAL_IDS_DIFFER = {"jest"}


def _runs(home: Path, session_id: str, candidate: bool) -> list[str]:
    """The keys of a session's stored runs that carry a candidate (or, False, none: T0's own)."""
    from testjack_tui.engine.store import SessionStore, db_path

    with pytest.MonkeyPatch.context() as mp:  # the sessions live in the audit's TESTJACK_HOME
        mp.setenv("TESTJACK_HOME", str(home))
        store = SessionStore(db_path(session_id))
    try:
        return [r.key for r in store.run_headers() if bool(r.candidate_ids) == candidate]
    finally:
        store.close()


def _t0_runs(home: Path, session_id: str) -> set[str]:
    return set(_runs(home, session_id, candidate=False))


def _passing_trials(bench: Path, task_id: str) -> int:
    from testjack_tui.benchmarks import load_benchmark

    return sum(1 for t in load_benchmark(bench).trials if t.task_id == task_id and t.official_pass)


async def _run_printed(bench: Path, task_id: str, trial_id: str, path: str, source: str,
                       command: str) -> dict[str, int]:
    """The printed command, as printed, in the trial's model world and in the reference world,
    with the witness written where the report says."""
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    loaded = load_benchmark(bench)
    task, trial = loaded.tasks[task_id], next(t for t in loaded.trials if t.id == trial_id)
    workdir = task.environment.workdir
    script = f"mkdir -p \"$(dirname {workdir}/{path})\" && cat > {workdir}/{path} && {command}"
    codes = {}
    async with Sandbox(session="lang-operator-rerun") as sb:
        for name, world in (("model", await sb.prepare(task, "model", trial)),
                            ("reference", await sb.prepare(task, "reference"))):
            result = await sb.exec(world, ["bash", "-c", script], timeout=600, stdin=source)
            codes[name] = result.exit_code
            codes[name + "_output"] = result.output[-1500:]  # type: ignore[assignment]
    return codes


@pytest.mark.parametrize("language", list(CASES))
def test_an_operator_witness_in_the_tasks_language_refutes_reruns_and_exports(language, lang_audits, home,
                                                                             tmp_path):
    fixture, task_id, recorded, name, defect, repo_path = CASES[language]
    bench = FIXTURES / fixture
    source = (bench / "agent-scripts" / task_id / "candidates" / recorded).read_text()
    mine = tmp_path / name
    shutil.copyfile(bench / "agent-scripts" / task_id / "candidates" / recorded, mine)
    out = tmp_path / "audit"
    lender: list[str] = []
    if language in SCRIPTED:  # the witness added to the scripted audit's T0 runs, in its home
        scripted = lang_audits(fixture)
        home, lender = scripted["home"], ["--reuse-runs", scripted["session_id"]]
    proc = cli("audit", str(bench), "--agent", "operator", "--candidate", str(mine), "--trial", defect,
               "--reviewer", "scripted", "--auto-approve", "--headless",
               "--out", str(out), *lender, home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"][task_id]["trials"][defect]["state"] == "refuted", proc.stdout[-3000:]
    if lender:  # a session of its own that made none of T0's runs: each is the scripted audit's
        t0_here, lent = _t0_runs(home, summary["session_id"]), _t0_runs(home, lender[1])
        assert summary["session_id"] != lender[1] and t0_here and t0_here <= lent, (t0_here - lent)
    # The witness is validated once (REFERENCE_RUNS on R[G], two on the defect trial: its run and
    # the flakiness re-run) and replayed once on each other passing trial; nothing runs twice.
    from testjack_tui.engine.oracle import REFERENCE_RUNS

    witness_runs = _runs(home, summary["session_id"], candidate=True)
    assert len(witness_runs) == len(set(witness_runs)) == REFERENCE_RUNS + 1 + _passing_trials(bench, task_id), \
        witness_runs
    if lender:  # what the scripted audit ran already is lent, not run again
        lent_witness = set(witness_runs) & set(_runs(home, lender[1], candidate=True))
        assert len(lent_witness) == LENT_WITNESS_RUNS[language], (len(lent_witness), witness_runs)

    report_dir = tmp_path / "report"
    proc = cli("report", summary["session_id"], "--format", "json", "--out", str(report_dir), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [trial] = [json.loads(f.read_text()) for f in report_dir.rglob("*.json")
               if json.loads(f.read_text()).get("trial_id") == defect]
    finding = trial["findings"][0]
    assert finding["path"] == repo_path  # the runner's place, not tests/test_tj_<name>.py
    assert "pytest" not in finding["command"]
    codes = asyncio.run(_run_printed(bench, task_id, defect, finding["path"], source, finding["command"]))
    assert codes["model"] != 0 and codes["reference"] == 0, codes

    if language in EXPORTED:
        _export_round_trip(language, home, summary["session_id"], defect, tmp_path / "export")


def _export_round_trip(language: str, home: Path, session_id: str, defect: str, export: Path) -> None:
    logs = home / "cache" / "logs"  # one log per run of the task's own flow (`t0-...`)
    before = {p.name for p in logs.glob("*-t0-*")}
    proc = cli("export", session_id, "--format", "harbor", "--out", str(export), home=home)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [config_file] = export.glob("*/tests/config.json")
    config = json.loads(config_file.read_text())
    assert config["testjack"]["checked"] is True, proc.stdout
    if language == "jest":  # the grader's scheme, read from what its reporter printed on G
        assert config["testjack"]["added_f2p"] == ["clamp with a NaN bound throws a RangeError"]
    if language == "node":
        assert config["testjack"]["added_f2p"] == ["test/bare.tj.test.js: reads a bare number as seconds"]
    # The check ran the exported task through its own unchanged test.sh (the task's tests folder
    # with the written test.patch and ids): G reward 1, the refuted trial 0.
    check = export_check(config_file.parent)
    assert check["rewards"]["reference"] == 1 and check["rewards"][defect] == 0, check
    # Its runs of test.sh: G with the witnesses, R, each refuted trial, each harness restored; G
    # once more only when the final ids are not those G already ran with. G without the witnesses
    # is the audit's own run of T0 on G (node: the lender's, lent), not run again.
    runs = {p.name for p in logs.glob("*-t0-*")} - before
    assert len(runs) == export_runs_expected(check, language in FINAL_IDS_DIFFER), sorted(runs)


# A candidate with a syntax error, per language: (file name, source, the line the toolchain names, its tool).
BROKEN = {
    "go": ("broken.go", 'package textkit\n\nimport "testing"\n\nfunc TestX(t *testing.T) {\n\tif Slugify("a" {\n\t}\n}\n',
           6, "gofmt -e"),
    "typescript": ("broken.ts", 'import { it } from "vitest";\n\nit("x", () => {\n  const a: number = ;\n});\n',
                   4, "esbuild"),
    "jest": ("broken.js", '"use strict";\n\ntest("x", () => {\n  expect(1).toBe(1;\n});\n', 4, "node --check"),
    "rust": ("broken.rs", "#[test]\nfn x() {\n    let a = ;\n}\n", 3, "rustc parser"),
}


@pytest.mark.parametrize("language", list(BROKEN))
def test_a_candidate_with_a_syntax_error_is_refused_up_front_by_its_toolchain(language, home, tmp_path):
    fixture, task_id, _, _, defect, _ = CASES[language]
    name, source, line, tool = BROKEN[language]
    mine = tmp_path / name
    mine.write_text(source)
    proc = cli("audit", str(FIXTURES / fixture), "--agent", "operator", "--candidate", str(mine), "--trial", defect,
               "--reviewer", "scripted", "--auto-approve", "--headless",
               "--out", str(tmp_path / "audit"), home=home, timeout=900)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    [error] = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert error.startswith(f"error: {mine}: --candidate: line {line}: ") and f"({tool})" in error, proc.stderr
    assert error.endswith(f"checked in task {task_id}'s world"), error
    assert "Traceback" not in proc.stderr and not (tmp_path / "audit" / "summary.json").exists()


@pytest.mark.parametrize("language", list(BROKEN))
def test_a_syntax_check_podman_cannot_make_is_said_and_never_passed_off_as_parsing(language, refuse_copies,
                                                                                  tmp_path, capsys):
    """When no check could be made (here: podman drops every copy of the file into the check's
    container), the candidate is not taken to parse: one warning line says why, and the audit
    goes on to its runs. The broken file is caught as soon as a copy goes in again."""
    from types import SimpleNamespace

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.commands.operator_input import check_syntax, read_candidates
    from testjack_tui.errors import InputError

    fixture, task_id, *_ = CASES[language]
    name, source, line, tool = BROKEN[language]
    mine = tmp_path / name
    mine.write_text(source)
    bench = load_benchmark(FIXTURES / fixture)
    cfg = SimpleNamespace(tasks=[task_id])
    candidates = read_candidates([mine], None, None, bench.tasks[task_id].tests.framework)
    asked = refuse_copies(99)
    check_syntax(bench, cfg, candidates)  # no InputError: the check did not happen
    [warning] = capsys.readouterr().err.splitlines()
    assert warning.startswith("warning: the candidates' syntax was not checked before the audit (") \
        and "broken pipe" in warning, warning
    assert len(asked) == 3  # three copies tried, no more
    refuse_copies(1)  # podman drops one copy: the next goes in and the toolchain is heard
    with pytest.raises(InputError, match=rf"line {line}: .*\({tool}\), checked in task {task_id}'s world"):
        check_syntax(bench, cfg, candidates)
