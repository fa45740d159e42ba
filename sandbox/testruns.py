"""A test run inside a container (blocking): copy runner files and candidates in, optionally
restore tampered harness files, run all ids in one process, copy reports out, parse."""
from __future__ import annotations

from typing import Callable

from .api import ExecResult, TestRun, WorldRef
from .containers import get_file, init_pid, put_files
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
    put_files(container, {**runner.support_files(), **run_files})
    neutralised = restore_harness(client_factory, container, world, handles) if isolate_harness else []
    if files:
        put_files(container, files, base=world.workdir)
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    if on_start:
        on_start(" ".join(argv))
    collector = OutputCollector(f"tests-{world.name}", on_output)
    result: ExecResult = run_exec(handle, argv, cwd=world.workdir, env=env, timeout=timeout,
                                  collector=collector)
    reports: dict[str, bytes | None] = {}
    for path in runner.report_paths(out_dir):
        try:
            reports[path] = get_file(container, path)
        except (FileNotFoundError, IsADirectoryError):
            reports[path] = None
    outcomes = runner.parse(test_ids, reports, result)
    return TestRun(world=world.name, test_ids=test_ids, outcomes=outcomes, exec=result,
                   files=dict(files or {}), neutralised=neutralised)
