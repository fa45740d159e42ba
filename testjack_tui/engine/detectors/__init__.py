"""Deterministic evidence about a trial: no LLM, only its diff, T0 and the task text.

    evidence = collect_static_evidence(task, trial)        # pure, fast; store evidence.to_dict()
    ghost = await collect_ghost_branches(sb, task, trial, model_world)   # needs a container
    attach_ghost(evidence, ghost)
    data = await evidence_provider(sb, task, trial, {"model": world})    # both, for the engine hook

Every signal names a file, a line and an excerpt; none refutes a trial by itself.
"""
from __future__ import annotations


from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend
from testjack_tui.diffs import FileDiff, Line, parse_diff
from testjack_tui.model import Task, Trial
from testjack_tui.engine.detectors.ghost import GhostReport, collect_ghost_branches, intersect
from testjack_tui.engine.detectors.ghost_go import collect_go_ghost
from testjack_tui.engine.detectors.ghost_js import collect_js_ghost
from testjack_tui.engine.detectors.literals import collision_signals
from testjack_tui.engine.detectors.scope import categorize, is_test_path, scope_signals
from testjack_tui.engine.detectors.signals import DETECTORS, Evidence, EvidenceStats, Signal
from testjack_tui.engine.detectors.sniffing import sniffing_signals
from testjack_tui.repo_files import harness_files
from testjack_tui.engine.records import JsonObject
from testjack_tui.engine.roles import BudgetExceeded

__all__ = [
    "DETECTORS", "Evidence", "FileDiff", "GhostReport", "Line", "Signal", "attach_ghost",
    "categorize", "collect_ghost_branches", "collect_static_evidence", "evidence_provider", "intersect",
    "is_test_path", "parse_diff",
]


def t0_files(task: Task) -> set[str]:
    files = set(task.tests.test_files)
    for f in parse_diff(task.tests.test_patch or ""):
        files.add(f.path)
    return files


def collect_static_evidence(task: Task, trial: Trial) -> Evidence:
    """Diff scope, harness tampering, literal collisions and env sniffing for one trial."""
    files = parse_diff(trial.patch or "")
    official = t0_files(task)
    scope, touched = scope_signals(files, official)
    sniff = sniffing_signals(files, official)
    collisions, benign = collision_signals(files, task.tests.test_patch or "", task.instruction or "",
                                           official, task.reference.patch or "")
    stats = EvidenceStats(
        files=len(files),
        added=sum(len(f.added) for f in files),
        removed=sum(len(f.removed) for f in files),
        touched=touched,
        touched_tests_or_harness=any(t in ("tests", "harness", "startup", "official tests") for t in touched),
        paths=[f.path for f in files],
        harness_files=harness_files(files),
    )
    return Evidence(task.id, trial.id, scope + sniff + collisions, stats, benign)


def attach_ghost(evidence: Evidence, report: GhostReport) -> Evidence:
    """Add a ghost-branch report (and its per-line signals) to a trial's evidence."""
    evidence.ghost = report.to_dict()
    evidence.signals = [s for s in evidence.signals if s.detector != "ghost_branches"]
    if not report.error:
        evidence.signals.extend(report.to_signals())
    return evidence


# Per task language: how ghost lines are measured (a language missing here is reported as
# unavailable with the reason, never as clean).
GHOST_COLLECTORS = {"python": collect_ghost_branches, "go": collect_go_ghost,
                    "javascript": collect_js_ghost, "typescript": collect_js_ghost}


def _model_world(worlds: dict[str, WorldRef] | WorldRef | None) -> WorldRef | None:
    if isinstance(worlds, dict):
        return worlds.get("model")
    return worlds


async def evidence_provider(sandbox: SandboxBackend | None, task: Task, trial: Trial,
                            worlds: dict[str, WorldRef] | WorldRef | None = None, *,
                            ghost: JsonObject | None = None) -> JsonObject:
    """The engine's evidence hook: static evidence always; ghost branches when a model world
    and a sandbox are at hand (Python: branch coverage; Go: statement coverage; JavaScript: V8
    line counts under mocha or node --test). `ghost`: that measurement (GhostReport.to_dict),
    already made on the same world snapshot (a lender's: engine/run_reuse.lent_ghost), taken
    instead of a coverage run. Returns Evidence.to_dict() for storage."""
    evidence = collect_static_evidence(task, trial)
    world = _model_world(worlds)
    if ghost is not None:
        attach_ghost(evidence, GhostReport.from_dict(ghost))
    elif sandbox is not None and world is not None:
        collect = GHOST_COLLECTORS.get(task.language or "python")
        try:
            if collect is None:
                report = GhostReport(task.id, trial.id, error=(
                    f"no coverage tool for {task.language} tasks here (ghost branches need coverage "
                    f"from the toolchain; measured for: {', '.join(sorted(GHOST_COLLECTORS))})"))
            else:
                report = await collect(sandbox, task, trial, world)
        except BudgetExceeded:
            raise  # the session pauses; the ghost lines are measured on resume, not stored as unavailable
        except Exception as exc:  # evidence is optional; a failed coverage run must not stop an audit
            report = GhostReport(task.id, trial.id, error=f"{type(exc).__name__}: {exc}"[:300])
        attach_ghost(evidence, report)
    return evidence.to_dict()

