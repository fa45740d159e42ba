"""Report files and the strengthened-suite export, for both front ends.

    files = write_reports(session_id, out_dir, formats=("md", "json"))
    summary = await run_export(session_id, "harbor", out_dir, check=True)

`run_export` is what `testjack-tui export` and the TUI's export dialog both run: plan the
export from the session's store, check it in real containers (the suite applies on T0, passes
on the reference and fails on every refuted trial) unless `check` is False, and write it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testjack_tui.errors import InputError
from testjack_tui.safe_paths import output_folder

if TYPE_CHECKING:
    from testjack_tui.engine.export_suite import TaskExport

FORMAT_HELP = {"harbor": "<task>/tests/ with test.patch and config.json, as Harbor reads them",
               "swebench": "<task>.json and dataset.jsonl rows (test_patch, FAIL_TO_PASS, PASS_TO_PASS)",
               "git": "the witness files committed on a new branch of your clone of the task repository"}
TARGETS = tuple(FORMAT_HELP)  # what a front end offers: the two suite formats and a git branch


def _session_benchmark(session_id: str) -> str:
    from testjack_tui.engine.store import SessionStore, db_path

    path = db_path(session_id)
    if not path.exists():
        raise InputError(path, None, f"no session {session_id!r} (see `testjack-tui sessions`)")
    store = SessionStore(path)
    try:
        config = store.get_meta("config", {}) or {}
    finally:
        store.close()
    return str(config.get("benchmark", ""))


def write_reports(session_id: str, out: Path, formats: tuple[str, ...] = ("md",), benchmark: Any = None) -> list[Path]:
    """Per-trial report.json + report.md and the session report in each format; the files written."""
    from testjack_tui.engine.report import build_report
    from testjack_tui.engine.report_render import write_report

    report = build_report(session_id, benchmark)
    written: list[Path] = []
    for fmt in formats:
        files = write_report(report, Path(out), fmt)
        written += files if not written else files[-1:]  # per-trial files once
    return written


async def run_export(session_id: str, fmt: str, out: Path, check: bool, benchmark: Any = None,
                     sandbox_factory: Any = None) -> dict[str, Any]:
    """Plan, optionally check in containers, and write the export; returns a summary dict
    (also written as `export.json`): per task the witness files, the ids added, the trials it
    must fail on, whether the check passed and its problems."""
    from testjack_tui.engine.export import (EXPORT_FORMATS, check_export, plan_export, write_harbor,
                                            write_swebench)

    if fmt not in EXPORT_FORMATS and fmt != "git":
        raise InputError("export", "format", f"unknown format {fmt!r} (use one of {', '.join(TARGETS)})")
    output_folder(out, "--git" if fmt == "git" else "--out")  # both front ends: one line, nothing written
    bench_ref = _session_benchmark(session_id)
    if benchmark is None:
        from testjack_tui.benchmarks import load_benchmark

        benchmark = load_benchmark(bench_ref)
    exports = plan_export(session_id, benchmark.tasks)
    trials = {t.id: t for t in benchmark.trials}
    if check and exports:
        if sandbox_factory is None:
            from testjack_tui.sandbox.core import Sandbox as sandbox_factory

        async with sandbox_factory(session=f"export-{session_id}") as sb:
            for exp in exports:
                await check_export(sb, benchmark.tasks[exp.task_id], exp, trials)
    out = Path(out)
    branch = None
    if fmt == "git":
        branch = commit_to_branch(out, exports, session_id)
        summary = _summary(session_id, fmt, out, check, exports)
        summary["branch"] = branch
        return summary
    out.mkdir(parents=True, exist_ok=True)
    if not exports:  # nothing to write: no empty dataset, no suite "checked" on nothing
        summary = _summary(session_id, fmt, out, check, exports)
        (out / "export.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary
    if fmt == "harbor":
        for exp in exports:
            write_harbor(exp, benchmark.tasks.get(exp.task_id), out)
    else:
        write_swebench(exports, benchmark.tasks, out)
    summary = _summary(session_id, fmt, out, check, exports)
    (out / "export.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _summary(session_id: str, fmt: str, out: Path, check: bool, exports: list[TaskExport]) -> dict[str, Any]:
    return {"session_id": session_id, "format": fmt, "out": str(out), "checked": bool(check and exports),
            "nothing_to_export": not exports, "tasks": {
        exp.task_id: {"witnesses": len(exp.files), "added_f2p": exp.new_fail_to_pass,
                      "added_p2p": exp.new_pass_to_pass, "refuted": exp.refuted,
                      "ok": None if exp.check is None else exp.check.ok,
                      "problems": [] if exp.check is None else exp.check.problems,
                      "notes": [] if exp.check is None else exp.check.notes or [],
                      "decisions": {f.witness_id: f.decision for f in exp.files}}
        for exp in exports}}


def commit_to_branch(repo_dir: Path, exports: list[TaskExport], session_id: str) -> str:
    """Write every exported witness file into a clone of the task repository and commit them on
    a new branch `testjack/<session>` (from the current HEAD; the working tree must be clean).
    Returns the branch name. What a maintainer reviews and merges."""
    import git

    try:
        repo = git.Repo(repo_dir)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise InputError(repo_dir, None, "not a git repository (export to a branch needs your clone "
                                         "of the task repository)") from None
    root = repo.working_tree_dir
    if root is None:
        raise InputError(repo_dir, None, "a bare repository has no working tree to commit the witnesses in")
    if repo.is_dirty(untracked_files=False):
        raise InputError(repo_dir, None, "the working tree has uncommitted changes; commit or stash them first")
    files = [f for exp in exports for f in exp.files]
    if not files:
        raise InputError("export", "witnesses", "nothing to export: no confirmed witness refutes a trial")
    branch = f"testjack/{session_id}"
    if branch in [h.name for h in repo.heads]:
        raise InputError(repo_dir, "branch", f"branch {branch} already exists")
    previous = repo.active_branch.name if not repo.head.is_detached else repo.head.commit.hexsha
    repo.git.checkout("-b", branch)
    try:
        for f in files:
            target = Path(root) / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.source)
            repo.index.add([f.path])
        lines = [f"TestJack witnesses from session {session_id}", ""]
        for exp in exports:
            for f in exp.files:
                decided = f.decision.get("decision", "auto")
                lines.append(f"- {f.path}: {f.requirement} (refutes {', '.join(f.refutes)}; {decided})")
        repo.index.commit("\n".join(lines))
    finally:
        repo.git.checkout(previous)
    return branch


def export_lines(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(level, line) per task for a front end to print: "ok" | "warning" | "error"."""
    out = []
    for task_id, info in summary["tasks"].items():
        status = ("checked ok" if info.get("ok") else
                  "not checked" if info.get("ok") is None else "CHECK FAILED")
        overruled = [w for w, d in (info.get("decisions") or {}).items() if d.get("decision") == "overruled"]
        line = (f"{task_id}: {info['witnesses']} witness file(s), +{len(info['added_f2p'])} f2p, "
                f"+{len(info['added_p2p'])} p2p; {status}")
        if overruled:
            line += f"; {len(overruled)} counted by the operator's overrule"
        out.append(("ok" if info.get("ok") else "warning" if info.get("ok") is None else "error", line))
        for problem in info.get("problems", []):
            out.append(("error", f"  problem: {problem}"))
        for note in info.get("notes", []):
            out.append(("warning", f"  note: {note}"))
    if not summary["tasks"]:
        out.append(("warning", "nothing to export: no confirmed witness refutes a trial"))
    return out
