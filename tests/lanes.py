"""Which podman files run on lane "podman-b" (tests/conftest.py `podman_lane`): worked out from
each file's seconds, so the two podman lanes end together however files grow, shrink or share.

The wall time of the README's command is its slower worker. Each podman lane is one xdist group
(one worker at a time); the pure tests fill whichever worker is free, so they even out what the
lanes leave uneven, but only up to their own total. A file may go to lane "podman-b" only if it is
safe beside lane "podman" (LANE_B_SAFE, checked by tests/test_podman_lanes.py); every other podman
file, and every reader of a session fixture, stays on lane "podman". Which safe files go to b:
longest first, each to the lighter lane, lane "podman" starting with the seconds of the files it
must keep. After a profiled run (`-v --durations=0`), `python tests/lane_totals.py LOG --table`
prints LANE_SECONDS anew from the run's own totals, and the balance it gives.
"""
from __future__ import annotations

from collections.abc import Mapping, Set

# Files with their own benchmarks (worlds found by content tag, built under a machine-wide lock)
# whose containers are counted only by their own session or pid label: no session fixture, no
# sweep of dead owners' containers, no listing of every container of ours.
LANE_B_SAFE = frozenset({
    "test_lang_go.py", "test_lang_ts.py", "test_lang_rust.py", "test_lang_node.py", "test_lang_operator.py",
    "test_lang_mocha.py", "test_labelled_fmtkit_e2e.py", "test_labelled_benchmark_e2e.py",
    "test_hostile_channels_langs.py", "test_canaries_langs_podman.py",
    "test_repo_configs_podman.py", "test_repo_configs_js_podman.py", "test_repo_configs_build_podman.py",
    "test_runner_node_podman.py", "test_runner_django_podman.py", "test_official_audit_export.py",
    "test_operator_langs.py",
})

# Seconds of each file's podman tests (setup, call and teardown) in the last profiled run of the
# README's command. A safe file not named here counts DEFAULT_SECONDS until the next profile; a
# file of lane "podman" not named here counts nothing, so name them all.
# 2026-12-04 03:41-04:19 (/tmp/prof.log, load 13-23 with five other suites running): a run stopped
# at 37 min, so the files it finished are measured (first block) and the rest estimated (second
# block: twice the rows of the README's night table, which ran on a quiet machine, else 60).
# Paste the next full run's `python tests/lane_totals.py LOG --table` over both blocks.
DEFAULT_SECONDS = 60.0
LANE_SECONDS: dict[str, float] = {
    # measured
    "test_demo_scripts.py": 1205, "test_lang_operator.py": 932, "test_lang_node.py": 311,
    "test_audit_cmd_e2e.py": 305, "test_lang_go.py": 285, "test_hostile_trials.py": 220,
    "test_canaries_langs_podman.py": 213, "test_labelled_fmtkit_e2e.py": 157, "test_hostile_channels.py": 120,
    "test_hostile_channels_langs.py": 117, "test_hidden_names_podman.py": 92, "test_failure_kinds_podman.py": 81,
    "test_demo_official.py": 56, "test_export_harness_trial.py": 30, "test_doctor.py": 28,
    "test_agents_sandbox.py": 23, "test_canaries_live_podman.py": 15, "test_detectors_ghost_podman.py": 14,
    "test_agents_demo.py": 12, "test_image_build_lock.py": 4, "test_base_image_errors.py": 0,
    "test_agents_request_budget.py": 0, "test_agents_structured.py": 0,
    # estimated
    "test_labelled_benchmark_e2e.py": 330, "test_lang_ts.py": 260, "test_ray_backend.py": 130,
    "test_official_flow.py": 120, "test_lang_mocha.py": 105, "test_lang_rust.py": 95, "test_operator_cli.py": 90,
    "test_tui_demo_e2e.py": 75, "test_report_e2e.py": 70, "test_tui_operator.py": 70, "test_operator_langs.py": 30,
    "test_mutation.py": 60, "test_no_reference.py": 60, "test_operator_judgement.py": 60, "test_probes.py": 60,
    "test_sandbox_image_ids.py": 60, "test_sandbox_main_process.py": 60, "test_sandbox_trailer.py": 60,
    "test_sandbox_worlds.py": 60, "test_swebench_harness.py": 60, "test_tie_by_execution_podman.py": 60,
    "test_tui_editor_syntax.py": 60, "test_verify.py": 60, "test_void_audit_e2e.py": 60,
    "test_official_audit_export.py": 60, "test_repo_configs_podman.py": 60, "test_repo_configs_js_podman.py": 60,
    "test_repo_configs_build_podman.py": 60, "test_runner_node_podman.py": 60, "test_runner_django_podman.py": 60,
}


def lane_b(seconds: Mapping[str, float] | None = None, safe: Set[str] = LANE_B_SAFE) -> frozenset[str]:
    """The safe files that go to lane "podman-b": longest first, each to the lighter lane."""
    seconds = LANE_SECONDS if seconds is None else seconds
    pinned = sum(s for name, s in seconds.items() if name not in safe)
    totals = {"podman": pinned, "podman-b": 0.0}
    chosen: set[str] = set()
    for name in sorted(safe, key=lambda n: (-seconds.get(n, DEFAULT_SECONDS), n)):
        lane = "podman-b" if totals["podman-b"] < totals["podman"] else "podman"
        totals[lane] += seconds.get(name, DEFAULT_SECONDS)
        if lane == "podman-b":
            chosen.add(name)
    return frozenset(chosen)


def lane_seconds(seconds: Mapping[str, float] | None = None, safe: Set[str] = LANE_B_SAFE) -> dict[str, float]:
    """The two lanes' seconds under `lane_b` (files not in `seconds` counted as nothing)."""
    seconds = LANE_SECONDS if seconds is None else seconds
    b = lane_b(seconds, safe)
    return {"podman": sum(s for n, s in seconds.items() if n not in b),
            "podman-b": sum(s for n, s in seconds.items() if n in b)}
