"""A test run inside a container (blocking): copy runner files and candidates in, optionally
restore tampered harness files, run all ids in one process, copy reports out, parse."""
from __future__ import annotations

from typing import Callable

from .api import ExecResult, TestRun, WorldRef
from .containers import get_dir, init_pid, put_files
from .execs import ExecHandle, run_exec
from .output import OutputCollector
from .prepare_script import RESTORE
from .runners import get_runner
from .worlds import read_restored


def restore_harness(client_factory: Callable, container, world: WorldRef,
                    handles: list[ExecHandle]) -> list[str]:
    """Put the reference versions of the harness files the trial touched back in place."""
    if not world.tampered:
        return []
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    result = run_exec(handle, ["bash", "-c", RESTORE, "restore", world.workdir], cwd="/", env={},
                      timeout=60, collector=OutputCollector("restore", keep_log=False))
    if result.exit_code != 0:
        from .errors import SandboxError
        raise SandboxError(f"{world.name}: restoring harness files failed: {result.output[-300:]}")
    return read_restored(result.stdout_head + result.stdout_tail)


def run_tests_in(client_factory: Callable, container, world: WorldRef, test_ids: list[str],
                 files: dict[str, str] | None, timeout: float | None, isolate_harness: bool,
                 handles: list[ExecHandle], on_output: Callable[[str], None] | None = None,
                 on_start: Callable[[str], None] | None = None) -> TestRun:
    runner = get_runner(world.framework)
    out_dir = runner.new_out_dir()
    test_ids = list(dict.fromkeys(test_ids))
    argv, env, run_files = runner.command(test_ids, workdir=world.workdir, out_dir=out_dir)
    support = dict(run_files)  # the runner's own files are in the snapshot already
    neutralised: list[str] = []
    if isolate_harness and world.tampered:
        # Restore first, then copy candidates in: a candidate may replace a restored file.
        put_files(container, support)
        neutralised = restore_harness(client_factory, container, world, handles)
        support = {}
    repo = world.workdir.rstrip("/")
    to_copy = {**support, **{f"{repo}/{p}": text for p, text in (files or {}).items()}}
    if to_copy:
        put_files(container, to_copy)
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    if on_start:
        on_start(" ".join(argv))
    collector = OutputCollector(f"tests-{world.name}", on_output)
    result: ExecResult = run_exec(handle, argv, cwd=world.workdir, env=env, timeout=timeout,
                                  collector=collector)
    # One copy-out of the run's report directory instead of one per report file.
    found = get_dir(container, out_dir)
    reports: dict[str, bytes | None] = {
        path: found.get(path[len(out_dir) + 1:]) for path in runner.report_paths(out_dir)}
    outcomes = runner.parse(test_ids, reports, result)
    return TestRun(world=world.name, test_ids=test_ids, outcomes=outcomes, exec=result,
                   files=dict(files or {}), neutralised=neutralised)
