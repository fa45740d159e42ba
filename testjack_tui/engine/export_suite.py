"""The strengthened suite of one task, as an export plans and checks it (`TaskExport`, its
`WitnessFile`s) and the test patch it ships: T0's patch followed by one new-file diff per witness.

Below both `export` (plans, writes) and `export_official` (round-trips through the benchmark's
grader), which each read and fill these records.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from testjack_tui.model import Task


@dataclass
class WitnessFile:
    witness_id: str
    path: str  # repo path in the exported suite (renamed if two witnesses share a path)
    source: str
    node_ids: list[str]  # grader ids of its tests (from its reference run), or [path]
    requirement: str
    refutes: list[str]
    # Who let it count: {"by", "decision" (approved | overruled | judged | auto), "reviewer_label",
    # "note", "at"}; a maintainer merging the suite should know an operator overrode the reviewer.
    decision: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskExport:
    task_id: str
    files: list[WitnessFile] = field(default_factory=list)
    fail_to_pass: list[str] = field(default_factory=list)  # T0's plus new
    pass_to_pass: list[str] = field(default_factory=list)
    new_fail_to_pass: list[str] = field(default_factory=list)
    new_pass_to_pass: list[str] = field(default_factory=list)
    refuted: list[str] = field(default_factory=list)  # trials the suite must fail on
    test_patch: str = ""
    check: dict[str, Any] | None = None  # set by check_export
    # Not part of the strengthened suite, written beside it and marked as such:
    # validated task-analysis tests (T1: pass on G), and witnesses of underspecified requirements
    # (ambiguous: most models read P otherwise) with the suggested prompt clarification.
    task_analysis: list[dict[str, Any]] = field(default_factory=list)
    underspecified: list[dict[str, Any]] = field(default_factory=list)
    # Every decision a person took (or that waits for one) on the task's candidates, counted or
    # not: {candidate_id, trial_id, reviewer_label, decision, label, counts, note, operator?}.
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def split_new_ids(self, task: Task, null: dict[str, str], fails: Callable[[str], bool]) -> None:
        """The new ids whose status without G (`null`) `fails` are fail-to-pass, the others
        pass-to-pass; the suite's lists are T0's followed by them."""
        self.new_fail_to_pass = [n for n, status in null.items() if fails(status)]
        self.new_pass_to_pass = [n for n in null if n not in self.new_fail_to_pass]
        self.fail_to_pass = list(task.tests.fail_to_pass) + self.new_fail_to_pass
        self.pass_to_pass = list(task.tests.pass_to_pass) + self.new_pass_to_pass


def new_file_diff(path: str, source: str) -> str:
    text = source if source.endswith("\n") else source + "\n"
    lines = text.splitlines()
    body = "".join("+" + line + "\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}")


def merged_test_patch(original: str, files: list[WitnessFile]) -> str:
    out = original if not original or original.endswith("\n") else original + "\n"
    return out + "".join(new_file_diff(f.path, f.source) for f in files)
