"""No-reference mode: when a task has no reference solution G, audit against G′.

G′ is an independent, minimal implementation of the task prompt P, written by the session's
implementer role from P, T0 and the original repository alone (never a trial). It must pass T0;
a version that does not is sent back with the failing test names and messages, at most
`k_repairs` times, and the task is then excluded with the reason. Everything after this step
treats G′ as G (the reference world is R[G′]), but G′ is a weaker oracle than the benchmark's
own solution: `Reference.independent` marks it, the verdicts and reports say so, and in an
interactive session every refutation resting on it waits for the operator even under
auto-approval. G′ is kept as a patch in the session folder for anyone to read.
"""
from __future__ import annotations

import asyncio
import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path, PurePath

from testjack_tui.model import Reference, Task
from testjack_tui.sandbox.api import WorldRef
from testjack_tui.errors import InputError
from testjack_tui.safe_paths import path_part

from .events import Log
from .repo_files import read_repo_files
from .roles import AuditContext, BudgetExceeded, Implementer
from .runner import RunResult
from .store import SessionStore

from .env import EngineEnv, ToolsFactory

META_KEY = "independent_reference:"  # + task id -> what happened (see ensure_reference)


@dataclass(frozen=True)
class IndependentReference:
    """What no-reference mode recorded for a task: G′ passed T0 (`ok`, its `patch`), or the
    `problem` that excluded the task."""

    ok: bool
    patch: str = ""
    problem: str = ""

    @classmethod
    def from_meta(cls, data: object, path: PurePath | str, key: str) -> IndependentReference | None:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise InputError(path, key, f"must be an object, got {type(data).__name__}")
        for name in ("patch", "problem"):
            if not isinstance(data.get(name) or "", str):
                raise InputError(path, f"{key}.{name}", f"must be text, got {data[name]!r}")
        return cls(bool(data.get("ok")), data.get("patch") or "", data.get("problem") or "")
FEEDBACK_CAP = 3000


def file_patch(path: str, old: str | None, new: str) -> str:
    """A git-style unified diff of one file (old None: a new file)."""
    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    head = f"diff --git a/{path} b/{path}\n"
    if old is None:
        head += "new file mode 100644\n"
    body = difflib.unified_diff(lines(old or ""), lines(new), "/dev/null" if old is None else f"a/{path}",
                                f"b/{path}", n=3)
    text = "".join(body)
    return head + text if text else ""


def patch_from_files(base: dict[str, str | None], files: dict[str, str]) -> str:
    return "".join(file_patch(path, base.get(path), files[path]) for path in sorted(files))


def _feedback(run: RunResult, ids: list[str]) -> str:
    lines = []
    for test_id in ids:
        outcome = run.outcomes.get(test_id) or {"status": "not_found"}
        if outcome.get("status") != "passed":
            message = " ".join(str(outcome.get("message") or "").split())[:300]
            lines.append(f"- {test_id}: {outcome.get('status')}" + (f": {message}" if message else ""))
    return "\n".join(lines)[:FEEDBACK_CAP] or "no T0 test produced a result"


async def ensure_reference(env: EngineEnv, task: Task, tools_factory: ToolsFactory | None) -> tuple[Task, str | None]:
    """(the task to audit, a reason to exclude it or None).

    A task with G, or a session that asked to ignore G (`no_reference`) but has no implementer,
    is returned as it is. Stored outcomes are reused, so a resumed session asks no agent twice.
    """
    ignore_g = env.cfg.no_reference
    if task.reference.present and not ignore_g:
        return task, None
    stripped = dataclasses.replace(task, reference=Reference())
    implementer = env.roles.implementer
    if implementer is None:
        return stripped, ("no reference solution G, and the session's task-analysis role cannot write "
                          "an independent implementation (no-reference mode needs an LLM or scripted role)")
    key = META_KEY + task.id
    stored = independent_reference(env.store, task.id)
    if stored and stored.ok:
        return _with(stripped, stored.patch), None
    if stored and stored.problem:
        return stripped, stored.problem

    if tools_factory is None:
        raise RuntimeError("the session has no tools factory (testjack_tui.compose.session_deps() gives one)")
    null = await env.sandbox.prepare(stripped, "null")
    tools = tools_factory(env, stripped, None, {"null": null}, None)
    ctx = AuditContext(session_id=env.session_id, task=stripped, trial=None, tools=tools, emit=env.emit,
                       ledger=env.budget, llm_cache=env.store)
    try:
        return await _write_and_check(env, task, stripped, implementer, ctx, null, key)
    except (BudgetExceeded, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - the task is excluded with the reason, the session goes on
        return stripped, f"no reference solution G, and no independent implementation G′ could be written: {exc}"
    finally:
        closer = getattr(tools, "aclose", None)
        if closer is not None:
            await closer()


async def _write_and_check(env: EngineEnv, task: Task, stripped: Task, implementer: Implementer, ctx: AuditContext,
                           null: WorldRef, key: str) -> tuple[Task, str | None]:
    ids = list(task.tests.ids)
    files, notes = await implementer.implement(ctx)
    attempts = 1
    while True:
        base = await read_repo_files(env.sandbox.unmetered, null, sorted(files), task.environment.workdir)
        patch = patch_from_files(base, files)
        candidate = _with(stripped, patch)
        problem = None
        if not patch:
            problem = "the independent implementation changes nothing"
        else:
            world = await env.sandbox.prepare(candidate, "reference")
            run = await env.runner.run(world, ids, {}, task_id=task.id)
            if all((run.outcomes.get(i) or {}).get("status") == "passed" for i in ids):
                record = {"ok": True, "patch": patch, "notes": notes, "attempts": attempts}
                env.store.set_meta(key, record)
                _keep(env, task.id, patch, notes)
                # A warning, not an info line: every verdict of this task rests on a weaker oracle.
                env.emit(Log(env.session_id, level="warning",
                             message=f"{task.id}: no reference solution; auditing against an independent "
                                     f"implementation G′ that passes T0 (attempt {attempts})"))
                return candidate, None
            problem = _feedback(run, ids)
        if attempts > env.cfg.k_repairs:
            reason = (f"no reference solution G, and the independent implementation G′ does not pass T0 "
                      f"after {attempts} attempts: {problem.splitlines()[0] if problem else ''}")
            env.store.set_meta(key, {"ok": False, "problem": reason, "attempts": attempts, "patch": patch})
            return stripped, reason
        revised = await implementer.revise(ctx, problem, attempts)
        if revised is None:
            reason = "no reference solution G, and the implementer gave up on G′"
            env.store.set_meta(key, {"ok": False, "problem": reason, "attempts": attempts, "patch": patch})
            return stripped, reason
        files, notes = revised
        attempts += 1


def _with(task: Task, patch: str) -> Task:
    return dataclasses.replace(task, reference=Reference(patch=patch, independent=True))


def _keep(env: EngineEnv, task_id: str, patch: str, notes: str) -> None:
    folder = Path(env.store.directory) / "independent-references"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{path_part(task_id)}.patch").write_text(patch, encoding="utf-8")
    if notes:
        (folder / f"{path_part(task_id)}.notes.md").write_text(notes + "\n", encoding="utf-8")


def independent_reference(store: SessionStore, task_id: str) -> IndependentReference | None:
    """What no-reference mode recorded for a task (None: the task used its own G)."""
    return IndependentReference.from_meta(store.get_meta(META_KEY + task_id), store.path, META_KEY + task_id)
