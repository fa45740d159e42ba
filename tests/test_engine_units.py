"""Small pure parts of the engine: samplers, candidate naming, feedback, statuses, store, config."""
from __future__ import annotations

import pytest

from engine_fakes import cand, make_task, make_trial
from testjack_tui.engine.config import BudgetLimits, SessionConfig
from testjack_tui.engine.control import Control
from testjack_tui.engine.oracle import CandidateBook, feedback_for
from testjack_tui.engine.runner import RunResult, combined_status, run_key
from testjack_tui.engine.sampling import UNIFORM, SamplerContext, SamplerState, UniformSampler
from testjack_tui.errors import InputError


def trials(n):
    return [make_trial("t", f"tr{i}", "m") for i in range(n)]


def test_uniform_sampler_is_seeded_per_task_and_ignores_load_order():
    task = make_task("t")
    picks_a = [UniformSampler(task, 0).pick(trials(6), SamplerState(1)).id for _ in range(1)]
    s1, s2 = UniformSampler(task, 0), UniformSampler(task, 0)
    seq1 = [s1.pick(trials(6), SamplerState(i)).id for i in range(5)]
    seq2 = [s2.pick(list(reversed(trials(6))), SamplerState(i)).id for i in range(5)]
    assert seq1 == seq2 and picks_a[0] == seq1[0]
    other = UniformSampler(make_task("u"), 0)
    seqs = {tuple(UniformSampler(task, seed).pick(trials(6), SamplerState(1)).id for _ in range(1))
            for seed in range(20)}
    assert len(seqs) > 1 and other.rng.random() != UniformSampler(task, 0).rng.random()


def test_sampler_registry():
    class First:
        name = "first"

        def __init__(self, task, seed, context):
            self.context = context

        def pick(self, active, state):
            return sorted(active, key=lambda t: t.id)[0]

    samplers = UNIFORM.with_("first-test", First, "always the first trial")
    assert samplers.names() == ["first-test", "uniform"] and UNIFORM.names() == ["uniform"]  # a new set
    sampler = samplers.make("first-test", make_task("t"), 0, SamplerContext(trials(3)))
    assert sampler.pick(trials(3), SamplerState(1)).id == "tr0"
    with pytest.raises(InputError, match="sampler"):
        samplers.make("nope", make_task("t"), 0, SamplerContext([]))


def test_candidate_book_keeps_agent_ids_and_renames_clashing_paths():
    book = CandidateBook("t")
    a = book.qualify(cand("t", "x", 1, "alias", path="tests/test_tj.py"), "x")
    b = book.qualify(cand("t", "y", 1, "quote", path="tests/test_tj.py"), "y")
    assert a.id == "t:x:1.v1" and a.path == "tests/test_tj.py"
    assert b.path == "tests/test_tj_y_1.py"  # derived from its id, not a counter
    # A repair keeps its chain's path; the author still sees the path it chose.
    r = book.qualify(cand("t", "y", 1, "quote", version=2, path="tests/test_tj.py"), "y", parent=b)
    assert r.path == "tests/test_tj_y_1.py" and r.parent == b.id and r.attempt == 2
    assert book.as_authored(r).path == "tests/test_tj.py"
    # Foreign ids are qualified with the task and scope.
    from testjack_tui.engine.roles import Candidate
    c = book.qualify(Candidate("c1", "tests/test_o.py", "x", "req", "operator"), "tr9")
    assert c.id == "t:tr9:c1"


def _run(outcomes, head="out", tail=""):
    return RunResult("k", "w", None, [], {k: {"status": s, "message": m} for k, (s, m) in outcomes.items()},
                     head=head, tail=tail)


def test_statuses_and_feedback():
    run = _run({"tests/test_a.py::test_1": ("passed", ""),
                "tests/test_a.py::test_2": ("failed", "Traceback\n  src/lib.py:10 secret_code()\nAssertionError: 1 != 2"),
                "tests/test_b.py::test_1": ("passed", "")})
    assert run.status_of("tests/test_a.py") == "failed"
    assert run.status_of("tests/test_b.py") == "passed"
    assert run.status_of("tests/test_c.py") == "not_found"
    assert combined_status({}) == "not_found"
    c = cand("t", None, 1, "alias", path="tests/test_a.py")
    blind = feedback_for(run, c, sanitize=True)
    assert "AssertionError: 1 != 2" in blind and "secret_code" not in blind
    full = feedback_for(run, c, sanitize=False)
    assert "secret_code" in full
    # pytest's assertion lines are what a solution-blind author needs to repair its test.
    run = _run({"tests/test_a.py::test_2": ("failed", "    def test_2():\n>       assert merge(a) == [1, 2]\n"
                                                      "E       assert [1] == [1, 2]\n"
                                                      "E         Right contains one more item: 2\n"
                                                      "src/lib.py:10: in merge\n    secret_code()\n"
                                                      "tests/test_a.py:7: AssertionError")})
    blind = feedback_for(run, c, sanitize=True)
    assert "assert [1] == [1, 2] / Right contains one more item: 2" in blind and "secret_code" not in blind


def test_run_key_depends_on_everything_that_changes_a_run():
    base = run_key("w", ["a"], {"f": "x"}, True)
    assert base == run_key("w", ["a"], {"f": "x"}, True)
    assert len({base, run_key("w2", ["a"], {"f": "x"}, True), run_key("w", ["b"], {"f": "x"}, True),
                run_key("w", ["a"], {"f": "y"}, True), run_key("w", ["a"], {"f": "x"}, False)}) == 5


def test_config_roundtrip_and_validation():
    cfg = SessionConfig(benchmark="b", tasks=["x"], budget=BudgetLimits(usd=1.5, test_runs=3), seed=4)
    again = SessionConfig.from_dict(cfg.to_dict())
    assert again == cfg
    with pytest.raises(InputError, match="mode"):
        SessionConfig(benchmark="b", mode="fast").validate()
    with pytest.raises(InputError, match="budget.usd"):
        SessionConfig(benchmark="b", budget=BudgetLimits(usd=-1)).validate()


async def test_control_step_tokens_and_run_to_end():
    import asyncio

    seen = []
    control = Control("s", step=True, emit=seen.append)
    waiter = asyncio.ensure_future(control.gate("round 1"))
    await asyncio.sleep(0.01)
    assert not waiter.done() and control.waiting == 1
    control.step_next()
    await asyncio.wait_for(waiter, 1)
    second = asyncio.ensure_future(control.gate("round 2"))
    await asyncio.sleep(0.01)
    assert not second.done()
    control.run_to_end()
    await asyncio.wait_for(second, 1)
    await control.gate("round 3")  # no longer stepping: passes at once
    from testjack_tui.engine.events import Paused, Released

    # Each gate that held the loop says so when it starts waiting and when it lets go.
    assert [p.waiting_for for p in seen if isinstance(p, Paused)] == ["round 1", "round 2"]
    assert [p.waiting_for for p in seen if isinstance(p, Released)] == ["round 1", "round 2"]
