"""Files stay inside their benchmark (issue 27.5): every file a loader reads resolves inside the
benchmark folder or is refused in one line naming it; every numeric field is range-checked in
one line; `--out` that is a file, a symlink or under /proc is one line. Each case breaks a
fresh copy of a valid benchmark (Harbor or SWE-bench layout) in one place, runs the real CLI
in-process and checks: exactly one line names the file and the field, no traceback, and no file
outside the benchmark was opened (an audit hook records every open and scandir). No containers.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from test_report import SID, session  # noqa: F401  (the shared session fixture)
from testjack_tui.cli import app

from conftest import ROOT

HARBOR = ROOT / "tests" / "fixtures" / "harbor"
SWEBENCH = ROOT / "tests" / "fixtures" / "swebench"
JOB = "jobs/job-0001"
TRIAL = f"{JOB}/slugify-unicode__a1"
TASK = "tasks/slugify-unicode"
CANARY = "TJ-CANARY-OUTSIDE-THE-BENCHMARK"
SECRET_PATCH = f"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+{CANARY}\n"

# -- what the process opens ----------------------------------------------------------------------
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event in ("open", "os.scandir", "os.listdir") and args:
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)):
            _OPENED.append(os.path.realpath(os.fsdecode(target)))


sys.addaudithook(_audit)


def run_recording(args: list[str]) -> tuple[object, list[str]]:
    global _OPENED
    _OPENED = []
    try:
        result = CliRunner().invoke(app, args)
    finally:
        opened, _OPENED = _OPENED, None
    return result, opened


# -- the cases ----------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    layout: str  # harbor | swebench
    mutate: Callable[[Path, Path], None]
    path: str  # where the one line points, relative to the benchmark copy ("" = the manifest)
    field: str | None
    words: str
    fatal: bool = False  # the whole benchmark is refused (exit 2) rather than one entry skipped


def _link(src: Path, target: Path) -> None:
    if src.is_dir() and not src.is_symlink():
        shutil.rmtree(src)
    elif src.exists() or src.is_symlink():
        src.unlink()
    src.parent.mkdir(parents=True, exist_ok=True)
    src.symlink_to(target)


def _edit_toml(rel: str, old: str, new: str) -> Callable[[Path, Path], None]:
    def mutate(bench: Path, _outside: Path) -> None:
        path = bench / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1))
    return mutate


def _reward(raw: str) -> Callable[[Path, Path], None]:
    def mutate(bench: Path, _outside: Path) -> None:
        path = bench / TRIAL / "result.json"
        text = path.read_text()
        assert '"reward": 1.0' in text
        path.write_text(text.replace('"reward": 1.0', f'"reward": {raw}'))
    return mutate


def _manifest(extra: str, layout: str = "harbor") -> Callable[[Path, Path], None]:
    def mutate(bench: Path, _outside: Path) -> None:
        path = bench / "benchmark.toml"
        lines = [line for line in path.read_text().splitlines()
                 if not any(line.startswith(k + " ") for k in _keys(extra))]
        # top-level keys go before any [[table]]
        head = [i for i, line in enumerate(lines) if line.startswith("[")]
        at = head[0] if head else len(lines)
        path.write_text("\n".join(lines[:at] + [extra] + lines[at:]) + "\n")
    return mutate


def _keys(extra: str) -> list[str]:
    return [line.split("=")[0].strip() for line in extra.splitlines() if "=" in line]


def _copy_of(src: Path, rel: str) -> Callable[[Path, Path], None]:
    """`rel` inside the benchmark becomes a symlink to a copy of `src` outside it."""
    def mutate(bench: Path, outside: Path) -> None:
        target = outside / Path(rel).name
        shutil.copytree(src, target, symlinks=True)
        _link(bench / rel, target)
    return mutate


def _to_secret(rel: str, secret: str = "secret.patch") -> Callable[[Path, Path], None]:
    return lambda bench, outside: _link(bench / rel, outside / secret)


def _to(rel: str, target: str) -> Callable[[Path, Path], None]:
    return lambda bench, _outside: _link(bench / rel, Path(target))


def _write(rel: str, text: str) -> Callable[[Path, Path], None]:
    return lambda bench, _outside: (bench / rel).write_text(text)


def _row_edit(key: str, value: str) -> Callable[[Path, Path], None]:
    def mutate(bench: Path, _outside: Path) -> None:
        path = bench / "dataset.jsonl"
        lines = path.read_text().splitlines()
        row = json.loads(lines[0])
        row[key] = "@@VALUE@@"
        lines[0] = json.dumps(row).replace('"@@VALUE@@"', value)
        path.write_text("\n".join(lines) + "\n")
    return mutate


REPORT = "logs/run_evaluation/run1/org__model-a/acme__calc-101/report.json"
HUGE = "1" + "0" * 400  # 10**400: a JSON integer no float holds

CASES = [
    # the five of the issue (the --out ones are below)
    Case("instruction-to-etc-passwd", "harbor", _to(f"{TASK}/instruction.md", "/etc/passwd"),
         f"{TASK}/instruction.md", None, "leaving the benchmark folder"),
    Case("task-folder-symlink-out", "harbor", _copy_of(HARBOR / TASK, "tasks/evil-task"),
         "tasks/evil-task", None, "leaving the benchmark folder"),
    Case("reward-10-to-the-400", "harbor", _reward(HUGE), f"{TRIAL}/result.json",
         "verifier_result.rewards.reward", "out of range"),
    Case("timeout-inf", "harbor", _edit_toml(f"{TASK}/task.toml", "timeout_sec = 300.0", "timeout_sec = inf"),
         f"{TASK}/task.toml", "verifier.timeout_sec", "not a finite number"),
    Case("jobs-proc", "harbor", _manifest('jobs = ["/proc"]'), "", "jobs", "leaving the benchmark folder",
         fatal=True),
    # our own: Harbor layout
    Case("job-folder-symlink-out", "harbor", _copy_of(HARBOR / JOB, "jobs/job-evil"),
         "jobs/job-evil", None, "leaving the benchmark folder"),
    Case("trial-folder-symlink-out", "harbor", _copy_of(HARBOR / TRIAL, f"{JOB}/evil-trial"),
         f"{JOB}/evil-trial", None, "leaving the benchmark folder"),
    Case("result-json-symlink-out", "harbor", _to_secret(f"{TRIAL}/result.json", "secret.json"),
         f"{TRIAL}/result.json", None, "leaving the benchmark folder"),
    Case("solution-patch-symlink-out", "harbor", _to_secret(f"{TASK}/solution/solution.patch"),
         f"{TASK}/solution/solution.patch", None, "leaving the benchmark folder"),
    Case("config-json-to-proc", "harbor", _to(f"{TASK}/tests/config.json", "/proc/self/environ"),
         f"{TASK}/tests/config.json", None, "leaving the benchmark folder"),
    Case("test-patch-symlink-out", "harbor", _to_secret(f"{TASK}/tests/test.patch"),
         f"{TASK}/tests/test.patch", None, "leaving the benchmark folder"),
    Case("tests-folder-symlink-out", "harbor", _copy_of(HARBOR / TASK / "tests", f"{TASK}/tests"),
         f"{TASK}/tests/config.json", None, "leaving the benchmark folder"),
    Case("task-toml-symlink-out", "harbor", _to_secret(f"{TASK}/task.toml", "secret.toml"),
         f"{TASK}/task.toml", None, "leaving the benchmark folder"),
    Case("timeout-nan", "harbor", _edit_toml(f"{TASK}/task.toml", "timeout_sec = 300.0", "timeout_sec = nan"),
         f"{TASK}/task.toml", "verifier.timeout_sec", "not a finite number"),
    Case("timeout-negative", "harbor", _edit_toml(f"{TASK}/task.toml", "timeout_sec = 300.0", "timeout_sec = -5"),
         f"{TASK}/task.toml", "verifier.timeout_sec", "out of range"),
    Case("agent-timeout-a-billion", "harbor", _edit_toml(f"{TASK}/task.toml", "timeout_sec = 1800.0",
                                                          "timeout_sec = 1e9"),
         f"{TASK}/task.toml", "agent.timeout_sec", "out of range"),
    Case("memory-mb-inf", "harbor", _edit_toml("tasks/task-parse-duration/task.toml", "memory_mb = 1024",
                                                "memory_mb = inf"),
         "tasks/task-parse-duration/task.toml", "environment.memory_mb", "not a finite number"),
    Case("memory-size-overflows", "harbor", _edit_toml(f"{TASK}/task.toml", 'memory = "2G"', 'memory = "1e999G"'),
         f"{TASK}/task.toml", "environment.memory", "not a size"),
    Case("cpus-negative", "harbor", _edit_toml(f"{TASK}/task.toml", "cpus = 1", "cpus = -1"),
         f"{TASK}/task.toml", "environment.cpus", "out of range"),
    Case("reward-json-inf", "harbor", _reward("1e999"), f"{TRIAL}/result.json",
         "verifier_result.rewards.reward", "not a finite number"),
    Case("reward-seven", "harbor", _reward("7"), f"{TRIAL}/result.json",
         "verifier_result.rewards.reward", "out of range"),
    Case("reward-5000-digits", "harbor", _reward("9" * 5000), f"{TRIAL}/result.json", None, "invalid JSON"),
    Case("manifest-threshold-nan", "harbor", _manifest("pass_threshold = nan"), "", "pass_threshold",
         "not a finite number", fatal=True),
    Case("manifest-tasks-dotdot", "harbor", _manifest('tasks = "../outside"'), "", "tasks",
         "leaving the benchmark folder", fatal=True),
    Case("manifest-image-context-root", "harbor", _edit_toml("benchmark.toml", 'context = "environment"',
                                                             'context = "/"'),
         "", "images[0].context", "leaving the benchmark folder", fatal=True),
    Case("manifest-labels-etc", "harbor", _manifest('labels = "/etc/passwd"'), "", "labels",
         "leaving the benchmark folder", fatal=True),
    # our own: SWE-bench layout
    Case("swe-dataset-etc-passwd", "swebench", _manifest('dataset = "/etc/passwd"'), "", "dataset",
         "leaving the benchmark folder", fatal=True),
    Case("swe-predictions-dotdot", "swebench", _manifest('predictions = ["../outside/secret.json"]'), "",
         "predictions", "leaving the benchmark folder", fatal=True),
    Case("swe-results-proc", "swebench", _manifest('results = ["/proc/self/status"]'), "",
         "results[0].file", "leaving the benchmark folder", fatal=True),
    Case("swe-report-symlink-out", "swebench", _to_secret(REPORT, "secret.json"), REPORT, None,
         "leaving the benchmark folder"),
    Case("swe-f2p-5000-digits", "swebench", _row_edit("FAIL_TO_PASS", json.dumps("[" + "9" * 5000 + "]")),
         "dataset.jsonl:1", "FAIL_TO_PASS", "not a list of test ids"),
    Case("swe-row-5000-digit-number", "swebench", _row_edit("version", "9" * 5000), "dataset.jsonl:1", None,
         "invalid JSON"),
]


@pytest.fixture
def outside(tmp_path) -> Path:
    """Files outside the benchmark a hostile one points at; none may be read."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.patch").write_text(SECRET_PATCH)
    (folder / "secret.json").write_text(json.dumps({"task_name": "slugify-unicode", "secret": CANARY}))
    (folder / "secret.toml").write_text(f'[metadata]\nsecret = "{CANARY}"\n')
    return folder


def _forbidden(path: str, outside: Path) -> bool:
    return any(path == str(p) or path.startswith(str(p) + os.sep)
               for p in (outside.resolve(), Path("/etc"), Path("/proc")))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_bad_input_is_one_line_and_nothing_outside_is_read(case, tmp_path, outside):
    bench = tmp_path / "bench"
    shutil.copytree(HARBOR if case.layout == "harbor" else SWEBENCH, bench, symlinks=True)
    case.mutate(bench, outside)
    result, opened = run_recording(["list", str(bench), "--json"])
    out = result.stdout + result.stderr
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    named = bench / "benchmark.toml" if not case.path else bench / case.path
    if case.fatal:
        assert result.exit_code == 2, out
        assert result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith(f"error: {named}: {case.field}: "), line
    else:
        assert result.exit_code == 0, out
        lines = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
        prefix = f"warning: skipped {named}: " + (f"{case.field}: " if case.field else "")
        mine = [line for line in lines if line.startswith(prefix)]
        assert len(mine) == 1, (prefix, lines)
        line = mine[0]
        listed = json.loads(result.stdout)
        assert len(listed["skipped"]) == len(lines)
    assert case.words in line, line
    assert CANARY not in out
    assert any(p.startswith(str(bench.resolve()) + os.sep) for p in opened)  # the hook sees reads
    leaks = [p for p in opened if _forbidden(p, outside)]
    assert leaks == [], leaks


def test_a_task_whose_instruction_is_etc_passwd_never_becomes_p(tmp_path):
    from testjack_tui.benchmarks import load_benchmark

    bench = tmp_path / "bench"
    shutil.copytree(HARBOR, bench)
    _link(bench / TASK / "instruction.md", Path("/etc/passwd"))
    loaded = load_benchmark(bench)
    assert "slugify-unicode" not in loaded.tasks
    assert all("root:" not in t.instruction for t in loaded.tasks.values())
    # its trials have no task to belong to: each is one more line, none is loaded
    assert not any(t.task_id == "slugify-unicode" for t in loaded.trials)


def test_a_symlink_inside_the_benchmark_is_still_fine(tmp_path):
    """Containment is about where a file resolves, not about links as such."""
    from testjack_tui.benchmarks import load_benchmark

    bench = tmp_path / "bench"
    shutil.copytree(HARBOR, bench)
    (bench / "shared").mkdir()
    shutil.move(str(bench / TASK / "instruction.md"), bench / "shared" / "instruction.md")
    (bench / TASK / "instruction.md").symlink_to(bench / "shared" / "instruction.md")
    loaded = load_benchmark(bench)
    assert "slugify-unicode" in loaded.tasks and loaded.skipped == []


# -- --out ---------------------------------------------------------------------------------------
OUT_CASES = {
    "an-existing-file": (lambda tmp: _touch(tmp / "taken.txt"), "exists and is not a folder"),
    "a-symlink": (lambda tmp: _symlink(tmp / "link", tmp), "is a symlink"),
    "proc-self": (lambda tmp: Path("/proc/self"), "is a symlink"),
    "under-proc": (lambda tmp: Path("/proc/self/fd/out"), "resolves under /proc"),
    "under-sys": (lambda tmp: Path("/sys/kernel/out"), "resolves under /sys"),
}


def _touch(path: Path) -> Path:
    path.write_text("keep me")
    return path


def _symlink(path: Path, target: Path) -> Path:
    path.symlink_to(target)
    return path


@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("which", sorted(OUT_CASES))
def test_out_that_is_not_a_folder_of_ours_is_one_line(command, which, tmp_path, session):  # noqa: F811
    make, words = OUT_CASES[which]
    out = make(tmp_path)
    before = out.read_text() if out.is_file() else None
    result = CliRunner().invoke(app, [command, SID, "--out", str(out)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {out}: --out: ") and words in line, line
    assert "Traceback" not in result.output
    if before is not None:
        assert out.read_text() == before  # the file is left as it was


def test_audit_out_and_a_verdicts_file_that_never_ends_are_one_line(tmp_path):
    taken = _touch(tmp_path / "summary-here")
    result = CliRunner().invoke(app, ["audit", str(HARBOR), "--headless", "--auto-approve", "--out", str(taken)])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {taken}: --out: exists"), result.output
    result = CliRunner().invoke(app, ["audit", str(HARBOR), "--headless", "--verdicts", "/dev/zero"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line == "error: /dev/zero: the verdicts file is not a regular file"
    deep = tmp_path / "verdicts.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    result = CliRunner().invoke(app, ["audit", str(HARBOR), "--headless", "--verdicts", str(deep)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output


# -- the config file -----------------------------------------------------------------------------
CONFIG_CASES = [
    ("[profiles.local]\ntimeout = inf\n", "profiles.local.timeout", "not a finite number"),
    ("[profiles.local]\nmax_retries = 1e400\n", "profiles.local.max_retries", "not a finite number"),
    ("[profiles.local]\ntemperature = nan\n", "profiles.local.temperature", "not a finite number"),
    ("[profiles.local]\nmax_tokens = -3\n", "profiles.local.max_tokens", "out of range"),
    ('[pricing."m"]\ninput_per_mtok = nan\noutput_per_mtok = 1\n', 'pricing."m".input_per_mtok',
     "not a finite number"),
    (b"[profiles.local]\nmodel = \"\xff\xfe\"\n", None, "cannot read"),
]


@pytest.mark.parametrize(("content", "field", "words"), CONFIG_CASES,
                         ids=[c[1] or "not-utf8" for c in CONFIG_CASES])
def test_a_bad_config_file_is_one_line(content, field, words, tmp_path, monkeypatch):
    from testjack_tui.config import config_path

    monkeypatch.setenv("TESTJACK_HOME", str(tmp_path / "home"))
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = CliRunner().invoke(app, ["verify", str(HARBOR)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {path}: " + (f"{field}: " if field else "")) and words in line, line
    assert "Traceback" not in result.output
