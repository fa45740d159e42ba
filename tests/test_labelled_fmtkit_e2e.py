"""The fmtkit labelled benchmark (tests/fixtures/fmtkit-labelled, see its README) is what real runs
say it is: the sampler measurements that read its labels (tests/perf/sampling_sim.py) rest on
them. `verify` reproduces every recorded verdict by running T0, and each
witness, run the way the engine replays witnesses (a fresh container of the trial's world, the
harness restored), fails on exactly the trials labelled with its mode and passes on the
reference solution. labels.json is read here only.
"""
from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import sys

import pytest

from conftest import ROOT
from lang_e2e import cli

BENCH = ROOT / "tests" / "fixtures" / "fmtkit-labelled"


@functools.lru_cache(maxsize=1)
def generator():
    """The fixture's generate.py, as a module (it lives with the data, not on a package path)."""
    spec = importlib.util.spec_from_file_location("fmtkit_generate", BENCH / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def labels() -> dict[str, dict]:
    return json.loads((BENCH / "labels.json").read_text())["trials"]


def test_the_committed_fixture_is_what_its_generator_writes(tmp_path):
    gen = generator()
    gen.build(tmp_path)
    want, have = gen.generated_files(tmp_path), gen.generated_files(BENCH)
    assert sorted(want) == sorted(have)
    assert [k for k in want if want[k] != have[k]] == []


def test_every_task_has_many_trials_by_several_models_and_a_witness_per_mode():
    truth = labels()
    for task in ("slugify-titles", "parse-sizes", "compare-versions"):
        mine = {tid: e for tid, e in truth.items() if e["task"] == task}
        passing = {tid: e for tid, e in mine.items() if e["label"] != "officially_failing"}
        assert len(mine) == 30 and len(passing) == 28
        assert len({e["model"] for e in passing.values()}) == 4
        modes = {m for e in passing.values() if e["mode_group"] != "sound"
                 for m in [e["mode_group"], *e.get("also", [])]}
        witnessed = {generator().witness_mode(p) for p in (BENCH / "witnesses" / task).glob("test_tj_*.py")}
        assert modes == witnessed and len(modes) == 4
        assert 8 <= sum(e["mode_group"] != "sound" for e in passing.values()) <= 14


@pytest.mark.podman
@pytest.mark.timeout(1500)
def test_verify_reproduces_every_recorded_verdict(tmp_path):
    proc = cli("verify", str(BENCH), "--json", home=tmp_path, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tasks = {t["task_id"]: t for t in json.loads(proc.stdout)["tasks"]}
    assert sorted(tasks) == ["compare-versions", "parse-sizes", "slugify-titles"]
    truth = labels()
    for task in tasks.values():
        assert task["well_formed"] and not task["vacuous"], (task["task_id"], task["problems"], task["vacuous"])
        assert len(task["trials"]) == 30
        for trial in task["trials"]:
            failing = truth[trial["trial_id"]]["label"] == "officially_failing"
            assert trial["reproducible"] and trial["reproduced_pass"] is (not failing), trial
    # A trial whose patch is byte for byte an earlier one's of its task took that trial's world
    # and T0 run: 93 runs of T0 here, not 96.
    from testjack_tui.benchmarks import load_benchmark

    bench, want = load_benchmark(BENCH), {}
    for task_id in tasks:
        first: dict[str, str] = {}
        for t in bench.trials_of(task_id):
            want[t.id] = "" if first.setdefault(t.patch, t.id) == t.id else first[t.patch]
    assert {t["trial_id"]: t["same_patch_as"] for task in tasks.values() for t in task["trials"]} == want
    assert sum(1 for v in want.values() if v) == 3


async def _witness_runs() -> dict[str, dict[str, set[str]]]:
    """task -> world ("reference" or a passing trial id) -> modes of the witnesses failing there."""
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.model import Trial
    from testjack_tui.sandbox import Sandbox, TestRun

    gen = generator()
    bench = load_benchmark(BENCH)
    out: dict[str, dict[str, set[str]]] = {}
    async with Sandbox(session="fmtkit-labels") as sb:
        for task_id, task in sorted(bench.tasks.items()):
            paths = sorted((BENCH / "witnesses" / task_id).glob("test_tj_*.py"))
            files = {f"tests/{p.name}": p.read_text() for p in paths}
            mode_of = {f"tests/{p.name}": gen.witness_mode(p) for p in paths}
            trials = bench.passing(task_id)
            # Trials whose patches are byte for byte the same have the same world: one run (in the
            # world of the first of them, as verify shares them) answers for all of them.
            first: dict[str, Trial] = {}
            for t in trials:
                first.setdefault(t.patch, t)
            worlds = await asyncio.gather(sb.prepare(task, "reference"),
                                          *(sb.prepare(task, "model", t) for t in first.values()))
            runs = await asyncio.gather(*(sb.run_tests(w, list(files), files, timeout=120, isolate_harness=True)
                                          for w in worlds))
            ran: dict[str | None, TestRun] = dict(zip([None, *first], runs))
            out[task_id] = {}
            for name, run in [("reference", ran[None]), *((t.id, ran[t.patch]) for t in trials)]:
                failing = set()
                for path, mode in mode_of.items():
                    statuses = [o.status for tid, o in run.outcomes.items() if tid.split("::")[0] == path]
                    if not statuses or any(s != "passed" for s in statuses):
                        failing.add(mode)
                out[task_id][name] = failing
    return out


@pytest.mark.podman
@pytest.mark.timeout(1500)
def test_each_witness_fails_on_exactly_the_trials_labelled_with_its_mode():
    truth = labels()
    results = asyncio.run(_witness_runs())
    wrong = []
    for task_id, worlds in results.items():
        assert worlds.pop("reference") == set(), task_id  # every witness passes on G
        assert len(worlds) == 28
        for trial_id, failing in worlds.items():
            entry = truth[trial_id]
            want = set() if entry["mode_group"] == "sound" else {entry["mode_group"], *entry.get("also", [])}
            if failing != want:
                wrong.append((trial_id, sorted(failing), sorted(want)))
    assert wrong == []
