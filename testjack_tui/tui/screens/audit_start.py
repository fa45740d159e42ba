"""How the TUI starts an audit session (from the selection screen, through
`services.sessions.plan_session`) or opens a stored one (a finished one on its report, any other
resumed), and the trials the Audit screen shows before the first event."""
from __future__ import annotations

from typing import Any

from testjack_tui.tui import live_views as lv
from testjack_tui.tui.screens.audit import AuditScreen


def trial_views(benchmark: Any, tasks: list[str] | None, trials: list[str] | None) -> list[lv.TrialView]:
    """The trials the session will consider, so the table is full before the first event."""
    if benchmark is None:
        return []
    out = []
    for t in benchmark.trials:
        if not t.official_pass or (tasks and t.task_id not in tasks) or (trials and t.id not in trials):
            continue
        out.append(lv.TrialView(t.task_id, t.id, model=t.model, agent=t.agent))
    return out


def start_new_session(app: Any, kwargs: dict[str, Any], benchmark: Any) -> None:
    from testjack_tui.compose import session_deps
    from testjack_tui.engine.session import AuditSession, BudgetLimits, SessionConfig
    from testjack_tui.services.sessions import SessionOptions, plan_session

    kwargs = dict(kwargs)
    kwargs["budget"] = BudgetLimits(**kwargs["budget"])
    # someone is at the TUI: asked about verdicts, step mode allowed; roles only for the operator
    plan = plan_session(SessionOptions(SessionConfig(**kwargs), interactive=True, headless=False,
                                       all_roles=False, benchmark=benchmark))
    session = AuditSession.create(plan.config, session_deps(benchmark=plan.benchmark, roles=plan.roles,
                                                            operator=True))
    chosen = plan.trial_ids()
    views = [v for v in trial_views(plan.benchmark, None, None) if v.trial_id in chosen]
    app.push_screen(AuditScreen(session, plan.benchmark, views, roles=plan.roles))


def stored_trial_views(store: Any) -> list[lv.TrialView]:
    """The session's passing trials with model and agent, from its own record (the corpus it
    stored when it started): a reopened session shows them before the benchmark is read."""
    from testjack_tui.engine.corpus import read_corpus

    corpus = read_corpus(store.all_meta(), store.path)
    return [lv.TrialView(task_id, t.id, model=t.model or "", agent=t.agent or "")
            for task_id, trials in sorted(corpus.tasks.items()) for t in trials if t.official_pass]


def open_existing_session(app: Any, session_id: str, info: dict[str, Any] | None = None) -> None:
    """A finished session opens on its report; anything else resumes on the Audit screen."""
    from testjack_tui.compose import session_deps
    from testjack_tui.engine.session import AuditSession

    session = AuditSession.open(session_id, session_deps(operator=True))
    if session.state == "finished":
        from testjack_tui.tui.screens.report import ReportScreen
        app.push_screen(ReportScreen(session))
        return
    from testjack_tui.benchmarks import load_benchmark

    # Loaded once here: the run needs it, and the prompt and diff views show it.
    benchmark = load_benchmark(session.config.benchmark)
    from testjack_tui.services.sessions import operator_roles

    roles = operator_roles(session.config.agents, benchmark)
    session = AuditSession.open(session_id, session_deps(benchmark=benchmark, roles=roles, operator=True))
    # A session created by `audit` and opened here has not stored its corpus yet: the
    # benchmark's passing trials fill the table, so queued tasks show their rows from the start.
    views = stored_trial_views(session.store) or trial_views(benchmark, session.config.tasks,
                                                             session.config.trials)
    app.push_screen(AuditScreen(session, benchmark, views, resumed=True, roles=roles))
