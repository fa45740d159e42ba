"""A test run inside a container (blocking): optionally restore tampered harness files, put
the candidates in, run all ids in one process, read the reports back, parse.

Small candidate sets travel with the exec and the reports come back on its stdout
(sandbox/trailer.py); otherwise they are copied in and out with put/get archive."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Callable

from podman.domain.containers import Container

from .api import ExecResult, TestOutcome, TestRun, WorldRef
from .canaries import Canaries, CanaryCheck, judge, make_canaries, removal_script, void
from .channels import ChannelCheck, judge_channels, own_budget, own_request
from .containers import ClientFactory, get_dir, init_pid, put_files
from .execs import ExecHandle, Killable, as_user, run_exec
from .hidden_names import HiddenNames, hide
from .own_exec import mark_canaries
from .own_run import DRIVER, DRIVER_PATH, FAKETIME_LIB, MAX_OWN, OWN_TIMEOUT
from .output import Collector, OutputCollector
from .prepare_script import RESTORE
from .runners import get_runner
from .runners.base import LaunchedRunner, Runner
from .runners.pytest_runner import RESTORED_LOG
from .trailer import INLINE_LIMIT, TrailerSplitter, encode_files, inline_size, new_mark
from .worlds import read_restored
from .trial_user import ROOT_USER, TRIAL_HOME, TRIAL_NAME


def restore_harness(client_factory: ClientFactory, container: Container, world: WorldRef,
                    handles: list[Killable]) -> list[str]:
    """Put the reference versions of the harness files the trial touched back in place."""
    if not world.tampered:
        return []
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    result = run_exec(handle, ["bash", "-c", RESTORE, "restore", world.workdir], cwd="/", env={},
                      timeout=60, collector=OutputCollector("restore", keep_log=False),
                      user=ROOT_USER if world.user else None)
    if result.exit_code != 0:
        from .errors import SandboxError
        raise SandboxError(f"{world.name}: restoring harness files failed: {result.output[-300:]}")
    return read_restored(result.stdout_head + result.stdout_tail)


@dataclass
class RunPlan:
    """What a test run sends into its container, worked out before the container exists."""

    world: WorldRef
    runner: Runner
    out_dir: str
    test_ids: list[str]  # as asked, deduplicated
    run_ids: list[str]  # as run: hidden names, canaries added
    files: dict[str, str]  # the caller's candidate files
    hidden: HiddenNames
    canary: Canaries | None
    argv: list[str]
    env: dict[str, str]
    support: dict[str, str]  # the runner's own files for this run (absolute paths)
    candidates: dict[str, str]  # the candidate and canary files (absolute paths)
    restore: bool  # restore the tampered harness files first
    own: dict[str, Any] | None = None  # our own runs of the witness tests (sandbox/own_run.py)

    def inline_ok(self) -> bool:
        """Whether the inputs can travel with the command and the reports come back on its
        stdout (sandbox/trailer.py)."""
        return (getattr(self.runner, "inline_command", None) is not None
                and inline_size({**self.support, **self.candidates}) <= INLINE_LIMIT)

    def inline(self, cpu_seconds: int | None, timeout: float | None = None) -> tuple[list[str], dict[str, str], str]:
        """argv, env and trailer mark of the wrapper that writes the inputs, runs the tests (as
        the world's trial user) and writes the reports to stdout."""
        mark = new_mark()
        restore_argv = ["bash", "-c", RESTORE, "restore", self.world.workdir] if self.restore else None
        argv, env = self.runner.inline_command(  # type: ignore[attr-defined]  # inline_ok checked
            self.argv, self.env, encode_files({**self.support, **self.candidates}), mark, self.out_dir,
            restore=restore_argv, cpu_seconds=cpu_seconds, workdir=self.world.workdir,
            user=self.world.user, **({"own": own_budget(self.own, timeout)} if self.own else {}))
        return argv, env, mark


class InlineRefused(Exception):
    """The wrapper could not write the inputs (e.g. the image's user may not write there)."""


def plan_run(world: WorldRef, test_ids: list[str], files: dict[str, str] | None,
             isolate_harness: bool, rename: bool = True) -> RunPlan:
    runner = get_runner(world.framework)
    if isinstance(runner, LaunchedRunner):
        runner.build_flags = world.build_flags
    out_dir = runner.new_out_dir()
    test_ids = list(dict.fromkeys(test_ids))
    # Candidate test files and their tests run under fresh random names (the trial's code cannot
    # single out a witness by its file or function name); ids and messages are mapped back
    # afterwards (sandbox/hidden_names.py). Not in a live container (an agent's session), where
    # the agent expects its file where it put it.
    style = runner.names if rename else None
    hidden, run_files = hide(files or {}, style, test_ids) if style else (HiddenNames(), dict(files or {}))
    run_ids = [hidden.run_id(i) for i in test_ids]
    canary = None
    if world.kind == "model" and runner.canaries:
        own = getattr(runner, "make_canaries", None)  # a runner that also says how they are requested
        canary = own(run_ids, list(run_files)) if own else make_canaries(run_ids, list(run_files),
                                                                          runner.canaries)
        run_files.update(canary.files)
        run_ids += canary.ids
    argv, env, support_files = runner.command(run_ids, workdir=world.workdir, out_dir=out_dir)
    own = None
    if getattr(runner, "own_run", False) and files and (isolate_harness or world.kind != "model"):
        # A witness or candidate run (the reference's runs are not isolated: nothing to restore
        # there): its tests get our own run and the environment-varied replay too, on both
        # worlds, so a witness that depends on the environment itself never passes the reference.
        own = own_request(_own_targets(run_ids[:len(test_ids)]), canary, DRIVER_PATH, FAKETIME_LIB,
                          OWN_TIMEOUT, MAX_OWN)
        support_files = {**support_files, DRIVER_PATH: DRIVER}
    elif getattr(runner, "own_plan", None) and files and (isolate_harness or world.kind != "model"):
        # Every other runner: each witness test in a fresh process of its own runner, and the
        # varied replay of those (sandbox/own_exec.py).
        mine = mark_canaries(runner.own_plan(run_ids[:len(test_ids)], run_files, canary), canary)  # type: ignore[attr-defined]
        own = mine.request() if mine.tests else None
    repo = world.workdir.rstrip("/")
    return RunPlan(world=world, runner=runner, out_dir=out_dir, test_ids=test_ids, run_ids=run_ids,
                   files=dict(files or {}), hidden=hidden, canary=canary, argv=argv, env=env,
                   support=dict(support_files),  # the runner's own files are in the snapshot already
                   candidates={f"{repo}/{p}": text for p, text in run_files.items()},
                   restore=isolate_harness and bool(world.tampered), own=own)


def _own_targets(run_ids: list[str]) -> list[tuple[str, list[str] | None]]:
    """(file, test names or None for all its tests) of the ids our own driver can run: Python
    files and functions, not parametrized cases."""
    out: dict[str, list[str] | None] = {}
    for test_id in run_ids:
        path, _, name = test_id.partition("::")
        if not path.endswith(".py") or "[" in name:
            continue
        if not name:
            out[path] = None
        elif out.get(path, []) is not None:
            out.setdefault(path, []).append(name)  # type: ignore[union-attr]
    return list(out.items())


def run_tests_in(client_factory: ClientFactory, container: Container, world: WorldRef, test_ids: list[str],
                 files: dict[str, str] | None, timeout: float | None, isolate_harness: bool,
                 handles: list[Killable], on_output: Callable[[str], None] | None = None,
                 on_start: Callable[[str], None] | None = None, rename: bool = True,
                 cpu_seconds: int | None = None) -> TestRun:
    """A test run as an exec in a running container (a live world, or a runner without the
    inline wrapper); the inputs go in with the exec when they fit, else by archive."""
    plan = plan_run(world, test_ids, files, isolate_harness, rename)
    live = not rename and plan.canary is not None  # an agent's live world keeps no canary
    try:
        run = run_plan_in(client_factory, container, plan, timeout, handles, on_output, on_start, cpu_seconds)
    except BaseException:
        if live:
            with contextlib.suppress(Exception):  # the run's own error is the one to report
                remove_canaries(client_factory, container, plan, handles)
        raise
    if live:
        remove_canaries(client_factory, container, plan, handles)
    return run


def remove_canaries(client_factory: ClientFactory, container: Container, plan: RunPlan,
                    handles: list[Killable]) -> None:
    """Take the run's canaries out of a container that outlives the run (an agent's live world,
    `rename=False`): the agent explores that world, and must find there only what the trial and
    its own files put in it. A fresh container goes with its canaries."""
    assert plan.canary is not None
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    run_exec(handle, ["sh", "-c", removal_script(plan.canary)], cwd=plan.world.workdir, env={},
             timeout=120, collector=OutputCollector("canaries", keep_log=False),
             user=ROOT_USER if plan.world.user else None)


def run_plan_in(client_factory: ClientFactory, container: Container, plan: RunPlan, timeout: float | None,
                handles: list[Killable], on_output: Callable[[str], None] | None = None,
                on_start: Callable[[str], None] | None = None,
                cpu_seconds: int | None = None) -> TestRun:
    world = plan.world
    restore = plan.restore
    support = plan.support
    if on_start:
        on_start(" ".join(plan.argv))
    # Small inputs go in with the exec (the harness restore too) and the reports come back on
    # its stdout: no archive round trips and no extra exec. Large inputs, or a runner without
    # that ability, take the archive path.
    inline = plan.inline_ok()
    report = None
    neutralised: list[str] | None = None
    if inline:
        run_argv, run_env, mark = plan.inline(cpu_seconds, timeout)
        splitter = TrailerSplitter(OutputCollector(f"tests-{world.name}", on_output), mark)
        # The wrapper runs as root (it drops to the trial user for the tests, sandbox/runners/
        # run_wrapper.WRAPPER): the tests can neither signal nor read it.
        result = _run(client_factory, container, handles, run_argv, world.workdir, run_env, timeout,
                      splitter, user=ROOT_USER if world.user else None)
        try:
            report, neutralised = read_trailer(plan, splitter)
        except InlineRefused:
            # The wrapper could not write the files (e.g. the image runs as a user who may not
            # write there): copy them in the way that always works and run again.
            report, inline = None, False
        if neutralised is not None:
            restore = False
    if not inline:
        if restore:
            # Restore first, then copy candidates in: a candidate may replace a restored file.
            put_files(container, support)
            neutralised = restore_harness(client_factory, container, world, handles)
            support = {}
        # Copied in as the trial user's files (out_dir too): the tests run as that user here.
        owner = int(world.user.split(":")[0]) if world.user else 0
        put_files(container, {**support, **plan.candidates}, owner=owner, dirs=(plan.out_dir,))
        collector = OutputCollector(f"tests-{world.name}", on_output)
        run_argv, user = plan.argv, None
        if world.user:
            run_argv, user = as_user(plan.argv, world.user, TRIAL_HOME, TRIAL_NAME), ROOT_USER
        result = _run(client_factory, container, handles, run_argv, world.workdir, plan.env, timeout,
                      collector, user=user)
    return finish_run(plan, container, result, report, neutralised, inline)


def read_trailer(plan: RunPlan, splitter: TrailerSplitter) -> tuple[dict[str, Any] | None, list[str] | None]:
    """The inline wrapper's report and the harness files it restored (None when it sent none).
    Raises SandboxError when the restore failed, InlineRefused when the inputs could not be
    written."""
    report = splitter.report
    if report is not None and report.get("restore_failed") is not None:
        from .errors import SandboxError
        raise SandboxError(f"{plan.world.name}: restoring harness files failed: "
                           f"{report['restore_failed'][-300:]}")
    if report is not None and report.get("error"):
        raise InlineRefused(report["error"])
    # Restored by the wrapper. (Without a trailer its output is read from disk in finish_run.)
    neutralised = read_restored(report.get("restored") or "") if plan.restore and report is not None else None
    return report, neutralised


def finish_run(plan: RunPlan, container: Container, result: ExecResult, report: dict[str, Any] | None,
               neutralised: list[str] | None, inline: bool) -> TestRun:
    """Read the reports (from the trailer, else out of the container), parse them, judge the
    canaries and map hidden names back."""
    runner = plan.runner
    out_dir = plan.out_dir
    result.argv = list(plan.argv)
    if report is not None:
        found = report["reports"]
        reports: dict[str, bytes | None] = {path: found.get(path) for path in runner.report_paths(out_dir)}
    else:
        # One copy-out of the run's report directory instead of one per report file.
        found = get_dir(container, out_dir)
        reports = {path: found.get(path[len(out_dir) + 1:]) for path in runner.report_paths(out_dir)}
        if neutralised is None and plan.restore:
            neutralised = read_restored((found.get(RESTORED_LOG) or b"").decode(errors="replace"))
    outcomes = runner.parse(plan.run_ids, reports, result)
    check = None
    observed: dict[str, TestOutcome] = {}
    canary = plan.canary
    agree = getattr(runner, "agreement", None)
    channels = judge_channels(outcomes, canary, report, result, agree(reports, result) if agree else [],
                              witness_run=plan.restore or plan.own is not None)
    if canary is not None:
        observed = {i: outcomes.pop(i) for i in dict.fromkeys([*canary.ids, *canary.expected])
                    if i in outcomes}
        # Keys a runner adds for the canaries' tests in a scheme of its own (Django's harness ids
        # name the module) go too: the canaries' random names never reach the run's outcomes.
        stems = tuple(PurePosixPath(p).stem for p in canary.files)
        outcomes = {k: v for k, v in outcomes.items() if not any(s in k for s in stems)}
        channel_cut = inline and report is None and not result.timed_out
        check = with_channels(judge(canary, observed, result.timed_out, channel_cut), channels)
        outcomes = void({**outcomes, **channels.varied}, check)
    else:
        outcomes.update(channels.varied)
    outcomes = plan.hidden.restore(outcomes)
    table = plan.hidden.restore_keys(channels.table)
    return TestRun(world=plan.world.name, test_ids=plan.test_ids, outcomes=outcomes, exec=result,
                   files=plan.files, neutralised=neutralised or [],
                   canaries=check.verdict if check else "",
                   tampering=[plan.hidden.swap_text(p) for p in check.problems]
                   if check and check.verdict != "ok" else [], channels=table,
                   canary_counts=_counts(observed) if canary is not None else {})


def _counts(outcomes: dict[str, TestOutcome]) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in outcomes.values():
        out[o.status] = out.get(o.status, 0) + 1
    return out


def with_channels(check: CanaryCheck, channels: ChannelCheck) -> CanaryCheck:
    """The canaries' verdict with the channels' evidence added: proof makes it "tampered",
    doubt at least "unverifiable" (sandbox/channels.py)."""
    if channels.proven:
        problems = check.problems if check.verdict == "tampered" else []
        return CanaryCheck("tampered", problems + channels.proven, check.observed)
    if channels.doubts and check.verdict != "tampered":
        return CanaryCheck("unverifiable", channels.doubts + check.problems, check.observed)
    return check


def _run(client_factory: ClientFactory, container: Container, handles: list[Killable], argv: list[str],
         workdir: str, env: dict[str, str], timeout: float | None, collector: Collector,
         user: str | None = None) -> ExecResult:
    handle = ExecHandle(client_factory, container.id, init_pid(container))
    handles.append(handle)
    return run_exec(handle, argv, cwd=workdir, env=env, timeout=timeout, collector=collector,
                    user=user)
