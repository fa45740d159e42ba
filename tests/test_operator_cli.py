"""Operator mode from the command line: `audit --agent operator --candidate FILE`.

The operator's own test file (written here, not taken from the demo's scripts) is checked on the
reference and model worlds of a chosen demo trial with real podman, judged by a reviewer (the
LLM path against the local fake OpenAI server, or the operator on a terminal), and shared like
any witness: the other trials with the same mistake are refuted by running it in their worlds.
labels.json is read here only to pick a defective trial and its look-alikes.
"""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import DEMO, ROOT
from fake_openai_server import FakeOpenAIServer, Reply
from testjack_tui.cli import app
from testjack_tui.commands.operator_input import default_repo_path, read_candidates, recorded_origin
from testjack_tui.errors import InputError

TASK = "recordset-metadata"
# The operator's witness: P says the record sets returned by `where` keep the metadata.
WITNESS = '''"""The record set returned by where() keeps the metadata of the one it filtered."""
from recordkit.records import RecordSet


def test_where_result_keeps_metadata():
    meta = {"source": "greenhouse sensors", "units": {"temp": "C"}, "rev": 3}
    readings = RecordSet([{"temp": "18"}, {"temp": "27"}, {"temp": "31"}], meta=meta)
    warm = readings.where(lambda row: int(row["temp"]) > 20)
    assert warm.meta == meta
'''
REQUIREMENT = "record sets returned by where keep the metadata"
REVIEW = {"label": "valid", "requirement": REQUIREMENT, "explicit": True,
          "quote": "the new record sets returned by `select` and `where`",
          "reason": "P lists where() among the operations that must keep metadata",
          "overall": "KEEP_ALL", "cases": [{"test_id": "tests/test_tj_where_meta.py::test_where_result_keeps_metadata", "label": "VALID", "scope": "in_scope",
                                            "overfitting": "none", "reason": "P lists where()"}]}

runner = CliRunner()


def labels() -> dict:
    return json.loads((DEMO / "labels.json").read_text())["trials"]


def where_group() -> tuple[str, list[str]]:
    """A trial that drops meta in where(), and every trial labelled with the same mistake."""
    group = sorted(tid for tid, t in labels().items() if t["mode_group"] == "records-where-meta")
    assert len(group) >= 2
    return group[0], group


def sound_trials() -> set[str]:
    return {tid for tid, t in labels().items() if t["task"] == TASK and t["label"].startswith("sound")}


# -- argument handling (no containers) ---------------------------------------------------------
def test_headless_operator_without_a_candidate_fails_in_one_line():
    result = runner.invoke(app, ["audit", str(DEMO), "--agent", "operator", "--headless", "--auto-approve"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "--candidate FILE" in result.output


def test_candidate_errors_name_the_file_and_option(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def test_x(:\n")
    result = runner.invoke(app, ["audit", str(DEMO), "--candidate", str(bad), "--headless", "--auto-approve",
                                 "--reviewer", "openai"])
    assert result.exit_code == 2 and "broken.py: --candidate: line 1" in result.output
    good = tmp_path / "where.py"
    good.write_text(WITNESS)
    result = runner.invoke(app, ["audit", str(DEMO), "--candidate", str(good), "--agent", "scripted",
                                 "--headless", "--auto-approve"])
    assert result.exit_code == 2 and "--agent operator" in result.output
    # No terminal to ask on: the operator reviewer (the default with --agent operator) is refused.
    result = runner.invoke(app, ["audit", str(DEMO), "--candidate", str(good), "--headless", "--auto-approve"])
    assert result.exit_code == 2 and "--reviewer" in result.output
    # The scripted reviewer has no recorded review of a file the operator wrote.
    result = runner.invoke(app, ["audit", str(DEMO), "--candidate", str(good), "--task", TASK,
                                 "--headless", "--auto-approve", "--reviewer", "scripted"])
    assert result.exit_code == 2 and "recorded review" in result.output
    result = runner.invoke(app, ["audit", str(DEMO), "--candidate", str(good), "--trial",
                                 "recordset-metadata__lumen__3", "--headless", "--auto-approve",
                                 "--reviewer", "openai"], env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2 and "did not pass officially" in result.output


def test_candidate_paths_and_requirements_pair_by_position(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "test_b.py"
    a.write_text(WITNESS)
    b.write_text("def test_b():\n    assert 1\n")
    got = read_candidates([a, b], ["tests/test_tj_where.py"], ["one for all"])
    assert [c.path_in_repo for c in got] == ["tests/test_tj_where.py", "tests/test_b.py"]
    assert {c.requirement for c in got} == {"one for all"}
    assert read_candidates([a], None, None)[0].requirement.startswith("The record set returned by where()")
    assert default_repo_path(Path("x/where.py")) == "tests/test_tj_where.py"
    with pytest.raises(InputError, match="--candidate-path"):
        read_candidates([a], ["/abs/test_x.py"], None)
    with pytest.raises(InputError, match="--requirement"):
        read_candidates([a, b], None, ["r1", "r2", "r3"])


def test_a_recorded_candidate_keeps_its_recorded_review():
    recorded = DEMO / "agent-scripts" / TASK / "candidates" / "au_rec_where_v1.py"
    assert recorded_origin(DEMO, TASK, recorded.read_text()) == "candidates/au_rec_where_v1.py"
    assert recorded_origin(DEMO, TASK, WITNESS) is None


# -- end to end with real containers -----------------------------------------------------------
def cli_env(home: Path, **extra: str) -> dict:
    return dict(os.environ, TESTJACK_HOME=str(home), **extra)


@pytest.fixture(scope="module")
def home(demo_lightweight_audit) -> Path:
    """The shared demo home (tests/conftest.py): the operator's audits take T0's runs on every
    world of the task from the session's lightweight demo audit (`--reuse-runs`), as an operator
    adding a test after a finished audit does; only their own witness runs."""
    return demo_lightweight_audit["home"]


@pytest.fixture(scope="module")
def lender(demo_lightweight_audit) -> str:
    return demo_lightweight_audit["session_id"]


@pytest.fixture(scope="module")
def witness_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("operator") / "where_keeps_meta.py"
    path.write_text(WITNESS)
    return path


def refuted(summary: dict) -> set[str]:
    return {tid for tid, t in summary["tasks"][TASK]["trials"].items() if t["state"] == "refuted"}


@pytest.fixture(scope="module")
def reviewed_and_judged(home, lender, witness_file, tmp_path_factory) -> dict:
    """One operator audit of the chosen trial serves both headless claims: the LLM reviewer
    reviews the operator's witness, and the verdicts file (no terminal: stdin is /dev/null)
    gives the operator's judgement. The two tests below each ran their own audit of the same
    trial with the same witness; with `--verdicts` the table answers every verdict anyway
    (`--auto-approve` is set aside), so one session makes both sets of claims. The LLM verdict
    counting on its own under `--auto-approve` is test_official_audit_export's path (same flags)."""
    chosen, group = where_group()
    tmp = tmp_path_factory.mktemp("operator-llm-verdicts")
    verdicts = tmp / "verdicts.toml"
    verdicts.write_text(f'["{witness_file.name}"]\nlabel = "valid"\nnote = "P: where keeps meta"\n')
    out = tmp / "out"
    with FakeOpenAIServer() as server:
        server.script(Reply(tool_calls=[("submit", REVIEW)]))
        env = cli_env(home, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test", TESTJACK_MODEL="fake-model")
        proc = subprocess.run(
            [sys.executable, "-m", "testjack_tui.cli", "audit", str(DEMO), "--agent", "operator",
             "--candidate", str(witness_file), "--candidate-path", "tests/test_tj_where_meta.py",
             "--requirement", REQUIREMENT, "--trial", chosen, "--reviewer", "openai",
             "--verdicts", str(verdicts), "--reuse-runs", lender, "--out", str(out)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        requests = list(server.requests)
    return {"chosen": chosen, "group": group, "proc": proc, "requests": requests, "out": out}


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
def test_operator_witness_reviewed_by_the_llm_is_shared_and_refutes_look_alikes(reviewed_and_judged):
    run = reviewed_and_judged
    chosen, group, proc, requests = run["chosen"], run["group"], run["proc"], run["requests"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    assert f"round 1: auditing {chosen}" in text  # the operator's pick, not a sampled trial
    assert "discriminates" in text and "reviewer:" in text and "is valid" in text
    # The reviewer (one LLM call) saw the operator's test, not the reference solution.
    # (The explainer, on the reviewer's profile, may ask too: one call per failure pattern.)
    reviews = [r for r in requests if "witness reviewer" in json.dumps(r)]
    assert len(reviews) == 1 and reviews[0] is requests[0] and "greenhouse sensors" in json.dumps(requests[0])
    summary = json.loads((run["out"] / "summary.json").read_text())
    assert set(summary["tasks"]) == {TASK}  # only the chosen trial's task
    hit = refuted(summary)
    assert set(group) <= hit, (group, hit, text[-2000:])
    assert not hit & sound_trials()
    witnesses = summary["tasks"][TASK]["witnesses"]
    assert len(witnesses) == 1
    w = witnesses[0]
    assert w["source_trial"] == chosen and w["requirement"] == REQUIREMENT
    assert w["path"] == "tests/test_tj_where_meta.py" and "greenhouse sensors" in w["source"]


def _read_until(fd: int, pattern: str, buffer: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while pattern not in "".join(buffer):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {pattern!r} in time:\n" + "".join(buffer)[-3000:])
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError("the command ended early:\n" + "".join(buffer)[-3000:])
            buffer.append(chunk.decode(errors="replace"))


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
def test_operator_writes_and_approves_on_a_terminal(home, reviewed_and_judged, witness_file, tmp_path):
    """The human is both author and judge: the verdict is asked on the terminal and approved.
    The same file at the same path as the headless audit's: its runs are taken from there
    (`--reuse-runs`), the question and the answer on the terminal are this session's own."""
    chosen, group = where_group()
    lender = json.loads((reviewed_and_judged["out"] / "summary.json").read_text())["session_id"]
    out = tmp_path / "out"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "testjack_tui.cli", "audit", str(DEMO), "--agent", "operator",
         "--candidate", str(witness_file), "--candidate-path", "tests/test_tj_where_meta.py",
         "--requirement", REQUIREMENT, "--trial", group[-1], "--headless", "--reuse-runs", lender,
         "--out", str(out)],
        cwd=ROOT, env=cli_env(home, COLUMNS="200"), stdin=slave, stdout=slave, stderr=slave,
        close_fds=True)
    os.close(slave)
    buffer: list[str] = []
    try:
        _read_until(master, "[y = valid, it counts", buffer, timeout=600)
        shown = "".join(buffer)
        assert "greenhouse sensors" in shown  # the test source is shown before the question
        os.write(master, b"y\n")
        proc.wait(timeout=600)
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 0.2)
                if not ready:
                    break
                chunk = os.read(master, 4096)
                if not chunk:
                    break
                buffer.append(chunk.decode(errors="replace"))
        except OSError:
            pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = "".join(buffer)
    assert proc.returncode == 0, text[-3000:]
    assert re.search(r"operator: \S+ counts", text), text[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    hit = refuted(summary)
    assert set(group) <= hit and not hit & sound_trials()
    assert summary["tasks"][TASK]["witnesses"][0]["source_trial"] == group[-1]


@pytest.mark.podman
@pytest.mark.timeout(3600)  # may set up the shared demo audit; slow under load
def test_verdicts_file_answers_the_operator_without_a_terminal(reviewed_and_judged):
    """CI: operator mode headless, the judgement written in advance in a TOML file (the shared
    session above: no --headless, no terminal, the verdict answered from the file)."""
    run = reviewed_and_judged
    proc, group = run["proc"], run["group"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"operator: \S+ counts", proc.stdout), proc.stdout[-3000:]
    summary = json.loads((run["out"] / "summary.json").read_text())
    hit = refuted(summary)
    assert set(group) <= hit and not hit & sound_trials()


def test_verdicts_file_errors_name_the_file_and_entry(tmp_path):
    from testjack_tui.commands.verdicts_file import load_verdicts
    from testjack_tui.engine.roles import OperatorVerdict

    good = tmp_path / "v.json"
    good.write_text(json.dumps({"tests/test_tj_a.py": "valid", "b.py": {"label": "invalid", "note": "off P"}}))
    assert load_verdicts(good) == {"tests/test_tj_a.py": OperatorVerdict("valid"),
                                   "b.py": OperatorVerdict("invalid", "off P")}
    whole = tmp_path / "whole.toml"
    whole.write_text('["a.py"]\nlabel = "valid"\nrequirement = "r"\nexplicit = true\nquote = "the words"\n')
    assert load_verdicts(whole)["a.py"] == OperatorVerdict("valid", "", "r", True, "the words")
    for text, where in (('["a.py"]\nlabel = "valid"\nexplicit = true\n', "a.py.quote: explicit = true needs"),
                        ('["a.py"]\nlabel = "valid"\nexplict = true\n', "a.py.explict: unknown field"),
                        ('["a.py"]\nlabel = "valid"\nexplicit = "yes"\n', "a.py.explicit: must be true or false")):
        whole.write_text(text)
        with pytest.raises(InputError, match=where):
            load_verdicts(whole)
    bad = tmp_path / "v.toml"
    bad.write_text('["x.py"]\nlabel = "maybe"\n')
    witness = tmp_path / "where.py"
    witness.write_text(WITNESS)
    result = runner.invoke(app, ["audit", str(DEMO), "--agent", "operator", "--candidate", str(witness),
                                 "--verdicts", str(bad)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "v.toml: x.py.label: must be one of valid, invalid, questionable" in result.output
    # A quote that is not P's words: refused before any world is built, naming the entry.
    bad.write_text('["x.py"]\nlabel = "valid"\nexplicit = true\nquote = "metadata is lost on purpose"\n')
    result = runner.invoke(app, ["audit", str(DEMO), "--agent", "operator", "--candidate", str(witness),
                                 "--task", TASK, "--verdicts", str(bad)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "v.toml: x.py.quote: not words of the task prompt (recordset-metadata)" in result.output


def test_scripted_agent_on_a_benchmark_without_recordings_fails_in_one_line(tmp_path):
    import shutil

    copy = tmp_path / "demo-without-scripts"
    shutil.copytree(DEMO, copy, ignore=shutil.ignore_patterns("agent-scripts"))
    result = runner.invoke(app, ["audit", str(copy), "--headless", "--auto-approve", "--agent", "scripted"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "agent-scripts" in result.output and "no recordings" in result.output


def test_the_operator_reviewer_marks_a_requirement_explicit_only_when_it_quotes_the_prompt():
    from testjack_tui.agents.operator import prompt_quote as quote_in_prompt

    prompt = (DEMO / "tasks" / TASK / "instruction.md").read_text()
    # Markup and spacing of the prompt do not matter; the words do.
    assert quote_in_prompt("the new record sets returned by `select` and `where`", prompt)
    assert quote_in_prompt('where(): "the new record sets returned by select and where"', prompt) \
        == "the new record sets returned by select and where"
    assert quote_in_prompt(REQUIREMENT, prompt) == ""  # a paraphrase is implicit
    assert quote_in_prompt('"a number"', prompt) == ""  # too short to say where a clause comes from
