"""The operator's whole judgement, on real podman (tests/fixtures/shipkit-labelled, issue 28/35).

One docstring-free witness checks two clauses of P at once (negative weights are rejected; the
bulky surcharge is not doubled), so it fails on six of the eight passing trials and on most of
every model's: rho = 1. Whether it refutes them is then decided by what the operator says about
its requirement in the verdicts file (explicit + a quote of P, or implicit), never by a
docstring. A second witness judged `questionable` becomes an open question about P.
A scripted reviewer's KEEP_SOME with a QUESTIONABLE case, under --auto-approve, leaves that case
waiting for a person (summary, report, exit status).

The three audits run on the fixture (it holds the scripted reviewer's recording the third needs;
the operator's own audits never read agent-scripts) in the home of the shared lightweight audit
of tests/conftest.py (`shipkit_lightweight`, which test_labelled_benchmark_e2e reads too): the
first takes T0's runs on every world from it, the second and the third take the first's
(`--reuse-runs`: T0 on every world, the weight/bulky witness on every world, same keys), so each
runs only what the one before did not.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testjack_tui.commands.audit_cmd import EXIT_AWAITING

from conftest import ROOT, SHIPKIT

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1500)]

BENCH = SHIPKIT
TASK = "express-and-bulky"
FIRST = f"{TASK}__atlas__2"  # fails the bulky case (W), passes EXPRESS: shared to the others
DEFECTIVE = {f"{TASK}__{t}" for t in ("atlas__2", "atlas__3", "brook__2", "brook__3", "cirrus__1", "cirrus__2")}
SOUND = {f"{TASK}__atlas__1", f"{TASK}__brook__1"}
# No docstring: nothing but the verdicts file says what it checks. The fixture holds it with a
# scripted reviewer's recorded KEEP_SOME review of it (agent-scripts/, read only by the third audit).
WITNESS = (BENCH / "agent-scripts" / TASK / "candidates" / "weight_bulky.py").read_text()
EXPRESS = '''from shipkit.rates import rate


def test_express_doubles_everywhere():
    assert rate("international", 1, express=True) == 26.0
    assert rate("domestic", 4, express=True) == 16.0
'''
REQUIREMENT = "weights and bulky parcels are priced as P says"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT,
                          env=dict(os.environ, TESTJACK_HOME=str(home)), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=2400)


def session_of(proc: subprocess.CompletedProcess) -> str:
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", proc.stdout)
    assert match, proc.stdout[-3000:] + proc.stderr[-3000:]
    return match.group(1)


def report(home: Path, session: str, out: Path, formats: tuple[str, ...]) -> dict:
    """The session's report in each of FORMATS (the ones its claims read), by `report`."""
    for fmt in formats:
        proc = cli(home, "report", session, "--format", fmt, "--out", str(out))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    read = {"json": lambda: json.loads((out / "report.json").read_text()), "md": (out / "report.md").read_text,
            "csv": (out / "report.csv").read_text}
    return {fmt: read[fmt]() for fmt in formats}


def operator_run(home: Path, bench: Path, tmp: Path, verdicts: str, *files: tuple[str, str],
                 reuse: str | None = None, formats: tuple[str, ...] = ("json",)) -> dict:
    (tmp / "verdicts.toml").write_text(verdicts)
    args = ["audit", str(bench), "--agent", "operator", "--trial", FIRST,
            "--verdicts", str(tmp / "verdicts.toml"), "--out", str(tmp / "out")]
    args += ["--reuse-runs", reuse] if reuse else []
    for name, source in files:
        (tmp / name).write_text(source)
        args += ["--candidate", str(tmp / name)]
    proc = cli(home, *args)
    session = session_of(proc)
    return {"proc": proc, "session": session, "summary": json.loads((tmp / "out" / "summary.json").read_text()),
            **report(home, session, tmp / "report", formats)}


def refuted(run: dict) -> set[str]:
    return {tid for tid, t in run["summary"]["tasks"][TASK]["trials"].items() if t["state"] == "refuted"}


@pytest.fixture(scope="module")
def home(shipkit_lightweight) -> Path:
    return shipkit_lightweight["home"]


@pytest.fixture(scope="module")
def bench() -> Path:
    return BENCH


@pytest.fixture(scope="module")
def explicit_run(home, bench, shipkit_lightweight, tmp_path_factory) -> dict:
    verdicts = (f'["test_tj_weight_bulky.py"]\nlabel = "valid"\nrequirement = "{REQUIREMENT}"\n'
                f'explicit = true\nquote = "`rate` must reject a weight that is zero or negative"\n'
                'note = "P lists both clauses"\n')
    return operator_run(home, bench, tmp_path_factory.mktemp("explicit"), verdicts, ("weight_bulky.py", WITNESS),
                        reuse=shipkit_lightweight["session_id"])


@pytest.fixture(scope="module")
def implicit_run(home, bench, explicit_run, tmp_path_factory) -> dict:
    verdicts = (f'["test_tj_weight_bulky.py"]\nlabel = "valid"\nrequirement = "{REQUIREMENT}"\n'
                'explicit = false\n\n'
                '["test_tj_express.py"]\nlabel = "questionable"\nrequirement = "express doubles every zone"\n'
                'note = "P never says whether international parcels count as express"\n')
    return operator_run(home, bench, tmp_path_factory.mktemp("implicit"), verdicts,
                        ("weight_bulky.py", WITNESS), ("express.py", EXPRESS), reuse=explicit_run["session"],
                        formats=("json", "md", "csv"))


def test_explicit_with_a_quote_refutes_every_defect_and_finds_no_prompt_gap(explicit_run):
    run = explicit_run
    assert run["proc"].returncode == 0, run["proc"].stdout[-3000:] + run["proc"].stderr[-3000:]
    assert refuted(run) == DEFECTIVE
    assert run["json"]["underspecified_prompts"] == []
    (w,) = run["summary"]["tasks"][TASK]["witnesses"]
    assert w["requirement"] == REQUIREMENT
    # The operator's whole judgement is stored beside the decision and shown with it.
    decisions = run["json"]["decisions"]
    assert decisions and decisions[0]["decision"] == "judged" and decisions[0]["label"] == "valid"
    assert "became underspecified-prompt findings" not in run["proc"].stdout


def test_implicit_becomes_a_prompt_finding_and_questionable_an_open_question(implicit_run):
    run = implicit_run
    assert run["proc"].returncode == 0, run["proc"].stdout[-3000:] + run["proc"].stderr[-3000:]
    assert refuted(run) == set()
    found = run["json"]["underspecified_prompts"]
    kinds = {u["kind"] for u in found}
    assert kinds == {"witness", "open question"}, found
    witness = next(u for u in found if u["kind"] == "witness")
    assert witness["requirement"] == REQUIREMENT and witness["rho"] == 1.0
    question = next(u for u in found if u["kind"] == "open question")
    assert question["requirement"] == "express doubles every zone"
    assert set(question["fails_on"]) == {f"{TASK}__brook__3", f"{TASK}__cirrus__2"}
    assert any("international" in s for s in question["said"]), question
    assert question["clarification"]
    # The run said once why the valid witness refutes nothing, and how to say otherwise.
    out = run["proc"].stdout
    assert out.count("became underspecified-prompt findings") == 1 and "explicit = true" in out
    # The report's heading lists both; the trials that differ keep their verdict and carry it.
    assert "open question" in run["md"] and "express doubles every zone" in run["md"]
    trials = {t["trial_id"]: t for t in run["json"]["trials"]}
    for tid in question["fails_on"]:
        assert not trials[tid]["refuted"]
        assert any(q["requirement"] == "express doubles every zone" for q in trials[tid]["open_questions"])
    assert "express doubles every zone" in run["csv"]


@pytest.fixture(scope="module")
def keep_some_run(home, bench, explicit_run, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("keep-some")
    (tmp / "weight_bulky.py").write_text(WITNESS)
    proc = cli(home, "audit", str(bench), "--agent", "operator", "--candidate", str(tmp / "weight_bulky.py"),
               "--trial", f"{TASK}__atlas__3", "--reviewer", "scripted", "--auto-approve", "--headless",
               "--reuse-runs", explicit_run["session"], "--out", str(tmp / "out"))
    session = session_of(proc)
    return {"proc": proc, "session": session, "summary": json.loads((tmp / "out" / "summary.json").read_text()),
            **report(home, session, tmp / "report", ("json", "md"))}


def test_a_questionable_case_of_keep_some_waits_for_a_person(keep_some_run):
    run = keep_some_run
    assert run["proc"].returncode == EXIT_AWAITING, run["proc"].stdout[-3000:] + run["proc"].stderr[-3000:]
    assert "await the operator" in run["proc"].stdout
    (waiting,) = run["summary"]["awaiting_operator"]
    assert waiting["case"].endswith("::test_bulky_surcharge_is_not_doubled") and waiting["label"] == "questionable"
    assert run["json"]["awaiting_operator"][0]["case"] == waiting["case"]
    assert "test_bulky_surcharge_is_not_doubled" in run["md"].split("## Waiting for the operator")[1]
    # The kept case counts: the negative-weight trials are refuted by it, no sound trial is.
    assert {f"{TASK}__atlas__3", f"{TASK}__brook__2", f"{TASK}__cirrus__1"} <= refuted(run)
    assert not refuted(run) & SOUND


def test_the_later_audits_ran_only_what_the_first_had_not(explicit_run, implicit_run, keep_some_run, home,
                                                          shipkit_lightweight, monkeypatch):
    """`--reuse-runs`: T0 ran once, on every world, in the shared lightweight audit; the first
    ran only its witness, the second only its new witness, the third only its own witness runs
    (the reviewer kept one case of two)."""
    from testjack_tui.engine.store import SessionStore, db_path

    monkeypatch.setenv("TESTJACK_HOME", str(home))

    def runs(session: str) -> dict:
        store = SessionStore(db_path(session))
        try:
            return {r.key: {i.split("::")[0] for i in r.test_ids} for r in store.runs()}
        finally:
            store.close()
    lender, first = runs(shipkit_lightweight["session_id"]), runs(explicit_run["session"])
    for before, run, files in ((lender, explicit_run, {"tests/test_tj_weight_bulky.py"}),
                               (first, implicit_run, {"tests/test_tj_express.py"}),
                               (first, keep_some_run, {"tests/test_tj_weight_bulky.py"})):
        mine = runs(run["session"])
        new = [ran for key, ran in mine.items() if key not in before]
        assert mine.keys() & before.keys() and new, (len(mine), len(new))
        assert all(ran <= files for ran in new), new
