"""The strengthened suite of one task, as an export plans and checks it (`TaskExport`, its
`WitnessFile`s) and the test patch it ships: T0's patch followed by one new-file diff per witness.

Below both `export` (plans, writes) and `export_official` (round-trips through the benchmark's
grader), which each read and fill these records.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

from testjack_tui.model import Task

from .records import JsonObject
from .records_runs import GraderReport


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
    decision: JsonObject = field(default_factory=dict)


@dataclass
class ExportCheck:
    """What running the strengthened suite in real worlds showed (export.check_export); filled
    as the check goes. Written as `testjack_check.json` in this key order, the optional parts
    only by the flows that have them."""

    applies: bool | None = None  # the witness files apply on top of T0
    passes_on_reference: bool | None = None
    fails_on_refuted: dict[str, list[str]] = field(default_factory=dict)  # trial -> failing ids
    null: dict[str, str] = field(default_factory=dict)  # new id -> its status without G
    problems: list[str] = field(default_factory=list)
    flow: str | None = None  # "official": judged by the task's own evaluator
    rewards: dict[str, float | None] | None = None  # world -> the evaluator's reward
    ids_from: str | None = None  # "grader": the new ids as the task's own grader reported them
    notes: list[str] | None = None  # facts about trials that are not problems of the suite
    ok: bool = False

    def note(self, text: str) -> None:
        self.notes = [*(self.notes or []), text]

    def to_json(self) -> JsonObject:
        out: JsonObject = {"applies": self.applies, "passes_on_reference": self.passes_on_reference,
                           "fails_on_refuted": self.fails_on_refuted, "null": self.null,
                           "problems": self.problems}
        optional = {"flow": self.flow, "rewards": self.rewards, "ids_from": self.ids_from, "notes": self.notes}
        out.update({k: v for k, v in optional.items() if v is not None})
        out["ok"] = self.ok
        return out


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
    check: ExportCheck | None = None  # set by check_export
    # Not part of the strengthened suite, written beside it and marked as such:
    # validated task-analysis tests (T1: pass on G), and witnesses of underspecified requirements
    # (ambiguous: most models read P otherwise) with the suggested prompt clarification.
    task_analysis: list[JsonObject] = field(default_factory=list)
    underspecified: list[JsonObject] = field(default_factory=list)
    # Every decision a person took (or that waits for one) on the task's candidates, counted or
    # not: {candidate_id, trial_id, reviewer_label, decision, label, counts, note, operator?}.
    decisions: list[JsonObject] = field(default_factory=list)
    # The session's runs of the task's own test.sh (run key -> what its grader reported): the
    # check takes its run of the unchanged task on G from here when it is the same run.
    graded: dict[str, GraderReport] = field(default_factory=dict, repr=False)

    def to_dict(self) -> JsonObject:
        data = asdict(self)
        data.pop("graded")
        data["check"] = self.check.to_json() if self.check is not None else None
        return data

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
