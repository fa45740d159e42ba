"""What an audit's container runs were, read from its session store (read-only): the runs by kind
(T0, validation on R[G] or on the trial, the flaky control's re-runs, replays, ...), the runs
copied from the same test's earlier run on the same world (engine/oracle.taken_run: no
container), and how often one test ran on one world. The demo audits' tests bound these counts;
`python tests/run_kinds.py SESSION_DB` prints them."""
from __future__ import annotations

import json
import posixpath
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunKinds:
    kinds: Counter[str] = field(default_factory=Counter)  # kind -> runs made (or lent), copies apart
    copied: Counter[str] = field(default_factory=Counter)  # kind -> copies of an earlier run
    # (world kind, re-run of the flaky control?, world, test) -> runs made that included the test
    # (a test: folder, source, ids)
    per_test: Counter[tuple[str, bool, str, tuple[str, str, str]]] = field(default_factory=Counter)

    @property
    def runs(self) -> int:
        return sum(self.kinds.values())

    def most_per_test(self, world_kind: str, rerun: bool = False) -> int:
        """The most runs one test made on one world of this kind: first runs (validation,
        replay), or the flaky control's re-runs."""
        return max((n for (kind, again, _, _), n in self.per_test.items() if kind == world_kind and again == rerun),
                   default=0)


def run_kinds(db: Path | str) -> RunKinds:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        world_kind = {r["name"]: r["kind"] for r in con.execute("SELECT name, kind FROM worlds")}
        validations = con.execute("SELECT * FROM validations").fetchall()
        on_reference = {v["reference_run"] for v in validations if v["reference_run"]}
        on_trial = {v["model_run"] for v in validations if v["model_run"]}
        discriminated = {(v["candidate_id"], v["trial_id"]) for v in validations
                         if v["outcome"] in ("discriminates", "flaky")}
        candidates = {r["id"]: r for r in con.execute("SELECT id, path, source, test_ids FROM candidates")}
        out = RunKinds()
        for r in con.execute("SELECT * FROM runs"):
            ids = json.loads(r["candidate_ids"] or "[]")
            kind = world_kind.get(r["world"], "?")
            if not ids:
                name = "t0 (harness restored)" if r["isolate"] else "t0"
            elif r["key"] in on_reference:
                name = "validation on R[G]"
            elif r["key"] in on_trial:
                name = "validation on the trial"
            elif kind == "reference":
                name = "flaky control re-run on R[G]"
            elif kind == "null":
                name = "task analysis on the null world"
            elif kind == "model" and len(ids) == 1 and (ids[0], r["trial_id"]) in discriminated:
                name = "flaky control re-run on the trial"
            else:
                name = "replay"
            if r["same_as"]:
                out.copied[name] += 1
                continue
            out.kinds[name] += 1
            for cid in ids:
                c = candidates.get(cid)
                if c is not None:
                    test = (posixpath.dirname(c["path"]), c["source"], _relative(c["path"], c["test_ids"]))
                    out.per_test[(kind, name.startswith("flaky"), r["world"], test)] += 1
        return out
    finally:
        con.close()


def validation_problems(db: Path | str) -> list[str]:
    """What breaks "one validation run on R[G] per test of a task, and every candidate shows its
    own": a candidate without a validation; a task with more own reference runs than tests (or
    fewer); a validation taken from another candidate's run that is not that candidate's test, or
    whose copied run is missing or not a copy of that candidate's."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        candidates = {r["id"]: r for r in con.execute("SELECT * FROM candidates")}
        runs = {r["key"]: r for r in con.execute("SELECT key, same_as, candidate_ids FROM runs")}
        validations = con.execute("SELECT * FROM validations ORDER BY at").fetchall()
    finally:
        con.close()
    problems = [f"{cid}: no validation" for cid in sorted(set(candidates) - {v["candidate_id"] for v in validations})]
    tests: dict[str, set[tuple[str, str, str]]] = {}
    own: dict[str, set[str]] = {}
    first_of: dict[str, dict[str, str]] = {}  # candidate -> trial -> its reference run
    for v in validations:
        c = candidates[v["candidate_id"]]
        test = (posixpath.dirname(c["path"]), c["source"], _relative(c["path"], c["test_ids"]))
        tests.setdefault(v["task_id"], set()).add(test)
        first_of.setdefault(c["id"], {})[v["trial_id"] or ""] = v["reference_run"]
        row = runs.get(v["reference_run"] or "")
        if row is None:
            problems.append(f"{c['id']}: its reference run {v['reference_run']} is not stored")
        elif not v["reference_of"]:
            if row["same_as"]:
                problems.append(f"{c['id']}: its reference run is a copy but names no candidate")
            own.setdefault(v["task_id"], set()).add(c["id"])
        else:
            twin = candidates.get(v["reference_of"])
            if twin is None or twin["source"] != c["source"] or twin["task_id"] != c["task_id"]:
                problems.append(f"{c['id']}: took the reference run of {v['reference_of']}, not the same test")
            elif row["same_as"] not in first_of.get(twin["id"], {}).values():
                problems.append(f"{c['id']}: its reference run copies {row['same_as']}, not {twin['id']}'s")
            elif json.loads(row["candidate_ids"]) != [c["id"]]:
                problems.append(f"{c['id']}: its copied reference run is stored for {row['candidate_ids']}")
    for task_id, found in sorted(tests.items()):
        if len(own.get(task_id, ())) != len(found):
            problems.append(f"{task_id}: {len(own.get(task_id, ()))} own runs on R[G] for {len(found)} tests")
    return problems


def one_run_per_test(home: Path | str, session_id: str, label: str) -> RunKinds:
    """The session's runs by kind, after the checks both demo audits share: every validation has
    its own runs, and a test ran once per world (and once per re-run number of the flaky
    control)."""
    import os

    from testjack_tui.engine.oracle import REFERENCE_RUNS
    from testjack_tui.engine.store import db_path

    before = os.environ.get("TESTJACK_HOME")
    os.environ["TESTJACK_HOME"] = str(home)
    try:
        db = db_path(session_id)
    finally:
        if before is None:
            del os.environ["TESTJACK_HOME"]
        else:
            os.environ["TESTJACK_HOME"] = before
    assert validation_problems(db) == []
    found = run_kinds(db)
    print(f"{label}: {found.runs} runs {dict(found.kinds)}; copied {dict(found.copied)}")
    assert found.most_per_test("reference") == found.most_per_test("model") == 1
    assert found.most_per_test("reference", rerun=True) == REFERENCE_RUNS - 1
    assert found.most_per_test("model", rerun=True) == 1
    return found


def _relative(path: str, test_ids: str | None) -> str:
    ids = json.loads(test_ids or "[]") or [path]
    return json.dumps([t[len(path):] if t.startswith(path) else t for t in ids])


if __name__ == "__main__":
    found = run_kinds(sys.argv[1])
    print(json.dumps({"runs": found.runs, "by kind": dict(sorted(found.kinds.items())),
                      "copied (no container)": dict(sorted(found.copied.items())),
                      "most first runs of one test on R[G]": found.most_per_test("reference"),
                      "on one trial's world": found.most_per_test("model"),
                      "most control re-runs of one test on R[G]": found.most_per_test("reference", True),
                      "on one trial's world ": found.most_per_test("model", True)}, indent=1))
