"""How the podman tests share the two xdist workers (tests/conftest.py `podman_lane`).

The machine is CPU-bound while the suite runs, so the wall time is the total work over two
workers, as long as no worker idles at the end. Lane "podman" is one xdist group: every reader of
a session fixture (built once per worker, so once per session only if one worker runs them all)
and every test that reads podman state others change (a sweep of dead owners' containers, a
listing by our app label alone). Each file safe beside it (SAFE_FILES: its own benchmarks, worlds
found by content tag and built under a machine-wide lock, containers counted only by its own
session or pid label) is a group of its own, `podman-<file stem>`. xdist (`--dist loadgroup`)
hands a worker its next group when it is nearly done with the last; the queue is in collection
order (conftest turns xdist's reordering by test count off): lane "podman" first, then the safe
files longest first by LANE_SECONDS, then the pure tests, one test each, which fill the end. So
the workers end together whatever the table's figures, which only order the queue.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

# Files with their own benchmarks (worlds found by content tag, built under a machine-wide lock)
# whose containers are counted only by their own session or pid label: no session fixture, no
# sweep of dead owners' containers, no listing of every container of ours.
SAFE_FILES = frozenset({
    "test_lang_go.py", "test_lang_ts.py", "test_lang_rust.py", "test_lang_node.py", "test_lang_operator.py",
    "test_lang_mocha.py", "test_labelled_fmtkit_e2e.py", "test_labelled_benchmark_e2e.py",
    "test_hostile_channels_langs.py", "test_canaries_langs_podman.py",
    "test_repo_configs_podman.py", "test_repo_configs_js_podman.py", "test_repo_configs_build_podman.py",
    "test_runner_node_podman.py", "test_runner_django_podman.py", "test_official_audit_export.py",
    "test_operator_langs.py",
})

# Seconds of each file's podman tests (setup, call and teardown) in the last profiled run of the
# README's command; they only order the queue (longest first). A file not named here counts
# DEFAULT_SECONDS until the next profile. 2026-12-04 20:01-20:21 (`python tests/lane_totals.py LOG
# --table`; paste the next one here).
DEFAULT_SECONDS = 60.0
LANE_SECONDS: dict[str, float] = {
    "test_lang_operator.py": 205, "test_audit_cmd_e2e.py": 185, "test_demo_scripts.py": 132,
    "test_labelled_fmtkit_e2e.py": 71, "test_hostile_channels_langs.py": 68, "test_lang_go.py": 61,
    "test_repo_configs_podman.py": 58, "test_ray_backend.py": 58, "test_sandbox_worlds.py": 46,
    "test_demo_official.py": 41, "test_hostile_trials.py": 39, "test_labelled_benchmark_e2e.py": 36,
    "test_runner_node_podman.py": 33, "test_lang_node.py": 32, "test_canaries_langs_podman.py": 31,
    "test_official_audit_export.py": 30, "test_report_e2e.py": 30, "test_operator_judgement.py": 29,
    "test_runner_django_podman.py": 26, "test_lang_mocha.py": 26, "test_operator_cli.py": 26,
    "test_repo_configs_js_podman.py": 23, "test_tui_editor_syntax.py": 21, "test_lang_ts.py": 20,
    "test_official_flow.py": 19, "test_no_reference.py": 18, "test_tui_operator.py": 18,
    "test_sandbox_trailer.py": 18, "test_lang_rust.py": 17, "test_doctor.py": 14,
    "test_agents_sandbox.py": 13, "test_sandbox_main_process.py": 13, "test_void_audit_e2e.py": 13,
    "test_failure_kinds_podman.py": 13, "test_agents_demo.py": 9, "test_hostile_channels.py": 9,
    "test_hidden_names_podman.py": 9, "test_verify.py": 8, "test_export_harness_trial.py": 8,
    "test_canaries_live_podman.py": 7, "test_mutation.py": 7, "test_tui_demo_e2e.py": 7,
    "test_swebench_harness.py": 6, "test_repo_configs_build_podman.py": 6, "test_image_build_lock.py": 5,
    "test_image_tags.py": 4, "test_detectors_ghost_podman.py": 4, "test_operator_langs.py": 3,
    "test_tie_by_execution_podman.py": 2, "test_podman_build_retry.py": 2, "test_sandbox_image_ids.py": 1,
    "test_base_image_errors.py": 0, "test_agents_request_budget.py": 0, "test_agents_structured.py": 0,
}


PINNED = "podman"


def group_of(name: str) -> str:
    """The xdist group of a podman test in file NAME that reads no session fixture."""
    return f"{PINNED}-{name.removesuffix('.py')}" if name in SAFE_FILES else PINNED


def group_seconds(files: Iterable[str], seconds: Mapping[str, float] | None = None) -> float:
    """A group's seconds: its files' in the table (DEFAULT_SECONDS for one not there yet)."""
    table = LANE_SECONDS if seconds is None else seconds
    return sum(table.get(name, DEFAULT_SECONDS) for name in set(files))


def queue_position(group: str | None, seconds: float = 0.0) -> tuple[int, float]:
    """Where a test's group goes in the queue: lane "podman" first, the other groups longest
    first (SECONDS: the group's), the pure tests (no group) last."""
    if group is None:
        return (2, 0.0)
    if group == PINNED:
        return (0, 0.0)
    return (1, -seconds)


def simulated_wall(pinned: float, groups: Iterable[float], pure: float = 0.0, workers: int = 2) -> float:
    """The wall time of the queue: lane "podman" (PINNED seconds) first, then each group longest
    first to the worker free first; the pure tests' seconds then fill from whichever ends first."""
    ends = [0.0] * workers
    for load in [pinned, *sorted(groups, reverse=True)]:
        ends[ends.index(min(ends))] += load
    for _ in range(int(pure)):  # second by second, to whichever worker is free first
        ends[ends.index(min(ends))] += 1.0
    return max(ends)
