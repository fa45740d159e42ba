"""Planning an audit session, for both front ends.

    plan = plan_session(SessionOptions(config, interactive=True, headless=False))
    plan.benchmark, plan.selected, plan.roles       # then AuditSession.create(plan.config, ...)

The CLI's `audit` and the TUI's selection screen each gather the options their own way; the
rules that judge a combination of options (a step mode needs the TUI, a run nobody can ask needs
--auto-approve or a verdicts file, ...), the reading of --task / --trial and the roles a front
end holds itself are here, once, and run before any session exists: bad options are one line
and nothing is created.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from testjack_tui.engine.config import SessionConfig
from testjack_tui.engine.selection import select_trials
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Task, Trial

if TYPE_CHECKING:
    from testjack_tui.engine.roles import RoleSet


@dataclass
class SessionOptions:
    config: SessionConfig
    interactive: bool  # someone at a terminal who can be asked
    headless: bool  # progress lines instead of the TUI
    verdicts_file: bool = False  # the operator's approvals come from a --verdicts file
    # Every role built now (the CLI: a scripted role without recordings is one line before any
    # world is built); otherwise only when the operator takes one (the TUI's editor feeds its queue).
    all_roles: bool = True
    benchmark: Benchmark | None = None  # already loaded (the TUI); else read with `load`
    load: Callable[[str], Benchmark] | None = None  # default: benchmarks.load_benchmark


@dataclass
class SessionPlan:
    config: SessionConfig
    benchmark: Benchmark
    selected: list[tuple[Task, list[Trial]]]  # engine.selection.select_trials
    roles: RoleSet | None  # None: the session builds them (composition root)

    def trial_ids(self) -> set[str]:
        return {trial.id for _, trials in self.selected for trial in trials}


def check_options(options: SessionOptions) -> None:
    """The combinations of options no session can run with, each one line naming the option."""
    from testjack_tui.engine.samplers import SAMPLERS

    cfg = options.config
    cfg.validate()
    if cfg.sampler not in SAMPLERS.names():
        raise InputError("audit", "--sampler", f"unknown sampler {cfg.sampler!r} (known: {', '.join(SAMPLERS.names())})")
    if cfg.agents.get("reviewer") == "operator" and not options.interactive and not options.verdicts_file:
        raise InputError("audit", "--reviewer", "the operator reviewer asks on a terminal and there "
                         "is none: pass --reviewer scripted, openai or a profile name")
    if cfg.step and (options.headless or not options.interactive):
        raise InputError("audit", "--step", "step mode needs the TUI (leave out --headless)")
    if not cfg.auto_approve and not options.interactive and not options.verdicts_file:
        raise InputError("audit", "--auto-approve",
                         "no terminal to ask the operator about each verdict: pass --auto-approve")


def operator_roles(agents: dict[str, str], benchmark: Benchmark | None) -> RoleSet | None:
    """The roles built by the front end when the operator takes one, so its editor can reach the
    operator's queue; None otherwise (the session builds them)."""
    if "operator" not in agents.values() or benchmark is None:
        return None
    from testjack_tui.agents.factory import make_roles

    return make_roles(agents, benchmark)


def plan_session(options: SessionOptions) -> SessionPlan:
    """Options checked, benchmark read, trials selected and the front end's roles built, once."""
    check_options(options)
    cfg = options.config
    benchmark = options.benchmark
    if benchmark is None:
        if options.load is None:
            from testjack_tui.benchmarks import load_benchmark

            benchmark = load_benchmark(cfg.benchmark)
        else:
            benchmark = options.load(cfg.benchmark)
    selected = select_trials(cfg, benchmark)
    roles: Any
    if options.all_roles:
        from testjack_tui.agents.factory import make_roles, require_recordings

        require_recordings(cfg.agents, benchmark)
        roles = make_roles(cfg.agents, benchmark)
    else:
        roles = operator_roles(cfg.agents, benchmark)
    return SessionPlan(cfg, benchmark, selected, roles)


def describe_agents(agents: dict[str, str]) -> list[str]:
    """What each role's agent resolved to (endpoint, model, limits), as the start-up lines say
    it; nothing when every role is scripted or the operator."""
    if all(choice in ("scripted", "operator") for choice in agents.values()):
        return []
    from testjack_tui.agents.factory import describe_role, shared_reviewer_note
    from testjack_tui.config import load_config

    config = load_config()
    lines = ["agent " + describe_role(config, role, agents.get(role) or "scripted")
             for role in ("task_analysis", "audit", "reviewer")]
    note = shared_reviewer_note(config, agents)
    return lines + ([note] if note else [])
