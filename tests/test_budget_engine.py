"""Budget: limits are checked before every spend, a session at a limit pauses cleanly (never
overspends, never crashes) and resumes with a raised limit to the same result."""
from __future__ import annotations

import pytest

from engine_fakes import FakeAudit
from test_engine_loop import build, states
from testjack_tui.engine.budget import Budget
from testjack_tui.engine.config import BudgetLimits
from testjack_tui.engine.events import BudgetChanged, Paused
from testjack_tui.engine.roles import BudgetExceeded
from testjack_tui.engine.session import AuditSession
from testjack_tui.engine.store import SessionStore
from testjack_tui.engine.summary import outcome_view


def make_budget(tmp_path, **limits) -> Budget:
    return Budget(SessionStore(tmp_path / "s.db"), BudgetLimits(**limits), "s")


def test_llm_limits_are_checked_before_the_call(tmp_path):
    budget = make_budget(tmp_path, usd=0.01, tokens=1000)
    budget.check("audit", "m", max_tokens=500)
    budget.record("audit", "m", 300, 200, 0.004, False)
    with pytest.raises(BudgetExceeded) as exc:
        budget.check("audit", "m", max_tokens=600)  # 500 used + up to 600 more > 1000
    assert exc.value.limit == "tokens"
    budget.check("audit", "m", max_tokens=400)
    budget.record("audit", "m", 100, 100, 0.007, True)
    with pytest.raises(BudgetExceeded) as exc:
        budget.check("audit", "m")
    assert exc.value.limit in ("usd", "tokens")
    snap = budget.snapshot()
    assert snap.usd == pytest.approx(0.011) and snap.tokens == 700 and snap.estimated is True


def test_price_bound_prevents_a_call_that_could_overspend(tmp_path):
    budget = make_budget(tmp_path, usd=1.0)
    budget.price_bound = lambda model, max_tokens, prompt_tokens: 0.6
    budget.record("audit", "m", 10, 10, 0.5, False)
    with pytest.raises(BudgetExceeded):
        budget.check("audit", "m", max_tokens=100)


def test_the_config_pricing_bounds_the_next_call(tmp_path):
    """With the pricing table, the largest prompt so far plus max_tokens bounds the next call."""
    from testjack_tui.config import Price
    from testjack_tui.engine.budget import price_bound_from

    class Config:
        def price(self, model):
            return Price(input_per_mtok=1000.0, output_per_mtok=1000.0) if model == "m" else None

    budget = make_budget(tmp_path, usd=1.0)
    budget.price_bound = price_bound_from(Config())
    budget.record("audit", "m", 400, 10, 0.41, False)
    budget.check("audit", "m", max_tokens=100)  # 0.41 + (400 + 100) / 1000 = 0.91: allowed
    with pytest.raises(BudgetExceeded):
        budget.check("audit", "m", max_tokens=300)  # 0.41 + 0.7 > 1.0
    budget.check("audit", "unpriced", max_tokens=10_000)  # unknown price: only the spent total counts


def test_test_runs_are_reserved_exactly(tmp_path):
    budget = make_budget(tmp_path, test_runs=3)
    budget.reserve_test_runs(2)
    budget.reserve_test_runs(1)
    with pytest.raises(BudgetExceeded):
        budget.reserve_test_runs(1)
    assert budget.test_runs == 3
    budget.raise_limits(test_runs=None)
    budget.reserve_test_runs(5)


def test_wall_time_is_summed_across_runs(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    store.set_meta("elapsed_seconds", 10.0)
    budget = Budget(store, BudgetLimits(seconds=10.0), "s")
    with pytest.raises(BudgetExceeded) as exc:
        budget.reserve_test_runs(1)
    assert exc.value.limit == "seconds"


def test_usage_survives_a_new_process(tmp_path):
    budget = make_budget(tmp_path, usd=1.0)
    budget.record("audit", "m", 1, 1, 0.25, False)
    again = Budget(SessionStore(tmp_path / "s.db"), BudgetLimits(usd=1.0), "s")
    assert again.usd == pytest.approx(0.25) and again.tokens == 2


async def test_session_pauses_at_test_run_limit_and_resumes_to_the_same_result():
    reference, ref_sandbox, _ = build({"seed": 1})
    assert await reference.run() == "finished"
    total_runs = len(ref_sandbox.runs())

    session, sandbox, _ = build({"seed": 1, "budget": BudgetLimits(test_runs=total_runs // 2)})
    events = []
    session.subscribe(events.append)
    assert await session.run() == "paused"
    assert len(sandbox.runs()) <= total_runs // 2, "never more runs than the limit"
    pauses = [e for e in events if isinstance(e, Paused)]
    assert pauses and pauses[0].reason == "budget: test_runs" and pauses[0].waiting_for == "raised limit"
    assert session.state == "paused"
    assert any(isinstance(e, BudgetChanged) and e.test_runs_limit == total_runs // 2 for e in events)

    # Resume in "another process": a new session object on the same database, raised limit.
    again = AuditSession.open(session.id, session.deps)
    again.raise_limits(test_runs=total_runs * 2)
    assert await again.run() == "finished"
    assert outcome_view(again.summary()) == outcome_view(reference.summary())
    assert len(sandbox.runs()) == total_runs, "no stored run is executed twice"


class SpendingAudit(FakeAudit):
    """Pays for each audit through the engine's ledger, like an LLM role does."""

    async def audit(self, ctx):
        ctx.ledger.check("audit", "m", max_tokens=100)
        outcome = await super().audit(ctx)
        ctx.ledger.record("audit", "m", 50, 50, 0.10, False, task_id=ctx.task.id, trial_id=ctx.trial.id)
        return outcome


async def test_session_pauses_at_usd_limit_without_overspending():
    session, _, roles = build({"seed": 2, "budget": BudgetLimits(usd=0.25)})
    spending = SpendingAudit(roles.audit.chains)
    roles.audit = spending
    assert await session.run() == "paused"
    assert len(spending.audits) == 3  # 0.30 spent: the third call started at 0.20 < 0.25
    assert session.store.ledger_totals().usd == pytest.approx(0.30)
    session.raise_limits(usd=10.0)
    assert await session.run() == "finished"
    trials_audited = [e.trial_id for e in session.store.ledger()]
    assert len(trials_audited) == len(set(trials_audited)), "no audit paid for twice"
    assert states(session.summary())["a3"] == "clean"
