"""A model with no price configured shows "unpriced", never "$0.0000": in the budget event the
header and progress lines read, the summary and the report."""
from __future__ import annotations

from rich.text import Text

from testjack_tui.config import Price
from testjack_tui.engine.budget import Budget, price_bound_from, usd_text
from testjack_tui.engine.config import BudgetLimits
from testjack_tui.engine.store import SessionStore
from testjack_tui.engine.summary import build_summary


class Config:
    def price(self, model):
        return {"paid": Price(1000.0, 1000.0), "free": Price(0.0, 0.0)}.get(model)


def budget(tmp_path) -> Budget:
    return Budget(SessionStore(tmp_path / "s.db"), BudgetLimits(usd=5.0), "s", price_bound=price_bound_from(Config()))


def test_spend_reads_unpriced_when_no_call_had_a_price():
    assert usd_text(0.0) == "$0.0000" and usd_text(0.0123, digits=2) == "$0.01"
    assert usd_text(0.0, ["local"]) == "unpriced"
    assert usd_text(0.5, ["local"], 2) == "$0.50 + unpriced"


def test_the_budget_names_unpriced_models_and_keeps_them_across_processes(tmp_path):
    b = budget(tmp_path)
    b.record("audit", "free", 100, 10, 0.0, False)  # priced at zero: a real $0
    assert b.snapshot().unpriced == ()
    b.record("audit", "local", 100, 10, 0.0, False)  # no price configured
    b.record("reviewer", "local", 100, 10, 0.0, False)
    event = b.snapshot()
    assert event.unpriced == ("local",)
    from testjack_tui.commands.audit_cmd import budget_text
    assert budget_text(event).startswith("unpriced/$5.00, tokens 330/")  # the progress line
    again = Budget(SessionStore(tmp_path / "s.db"), BudgetLimits(), "s", price_bound=price_bound_from(Config()))
    assert again.snapshot().unpriced == ("local",)
    usage = build_summary(SessionStore(tmp_path / "s.db")).usage
    assert usage.unpriced == ["local"]
    assert usd_text(usage.usd, usage.unpriced) == "unpriced"


def test_a_priced_spend_stays_in_dollars(tmp_path):
    b = budget(tmp_path)
    b.record("audit", "paid", 100, 10, 0.11, False)
    assert b.snapshot().unpriced == ()
    from testjack_tui.commands.audit_cmd import budget_text
    assert budget_text(b.snapshot()).startswith("$0.1100/$5.00")


def test_the_header_gauge_says_unpriced():
    from testjack_tui.tui.widgets.budget import gauge

    shown = gauge("USD", 0.0, 5.0, lambda v: f"{v:.2f}", shown=usd_text(0.0, ["local"], 2).lstrip("$"))
    assert isinstance(shown, Text) and shown.plain.endswith("unpriced/5.00")
    assert gauge("USD", 1.0, None, lambda v: f"{v:.2f}").plain == "USD 1.00/∞"


def test_the_sessions_list_says_unpriced():
    import asyncio
    import json

    from test_engine_loop import build
    from typer.testing import CliRunner

    from testjack_tui.cli import app

    session, _, _ = build()
    asyncio.run(session.run())
    session.budget.record("audit", "local-model", 100, 10, 0.0, False)  # no pricing configured
    runner = CliRunner()
    [item] = [i for i in json.loads(runner.invoke(app, ["sessions", "--json"]).output) if i["id"] == session.id]
    assert item["unpriced"] == ["local-model"]
    row = next(line for line in runner.invoke(app, ["sessions"]).output.splitlines() if line.startswith(session.id))
    assert " unpriced " in row and "0.0000" not in row
