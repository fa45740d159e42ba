"""Reading a benchmark's own test reports the way its grader reads them.

DeepSWE's shared grader (`tests/grader.py grade`) reads the reports `tests/config.json` names
under `grade.reports`, in order, with one parser per `grade.format`:

- `junit`: every `<testcase>`; the id is `classname + "." + name` (just `name` without a
  classname); a `<failure>` or `<error>` child fails it, a `<skipped>` child skips it;
- `ctrf`: every entry of `results.tests`; the id is `suite + "." + name` when
  `grade.node_id = "suite.name"` and the test has a suite (the first one, if a list), else
  `name`; status `passed` passes, `skipped`/`pending`/`other` skip, anything else fails.

Ids and names are whitespace-stripped. The same id seen twice (within or across reports)
merges worst-status-wins (passed < skipped < failed). An id in no report counts as failed for
the reward; we keep it apart as *missing from report*, which says nothing about the code.
The reward itself is what the verifier wrote: `/logs/verifier/reward.json` (`reward`) or
`reward.txt`.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Iterable

from .api import TestStatus

RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 2}
MESSAGE_CAP = 2000
MISSING = "missing from report"


def _merge(into: dict[str, tuple[TestStatus, str]], test_id: str, status: TestStatus, message: str) -> None:
    current = into.get(test_id)
    if current is None or RANK[status] > RANK[current[0]]:
        into[test_id] = (status, "" if status == "passed" else message[:MESSAGE_CAP])
    elif RANK[status] == RANK[current[0]] and status != "passed" and not current[1] and message:
        into[test_id] = (current[0], message[:MESSAGE_CAP])


def parse_junit_report(data: bytes) -> dict[str, tuple[TestStatus, str]]:
    """JUnit XML -> {classname.name: (status, message)}; an unreadable report gives {}."""
    out: dict[str, tuple[TestStatus, str]] = {}
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return out
    for case in root.iter("testcase"):
        classname = (case.get("classname") or "").strip()
        name = (case.get("name") or "").strip()
        if not name:
            continue
        status: TestStatus = "passed"
        message = ""
        for child in case:
            tag = child.tag.rsplit("}", 1)[-1]
            if tag in ("failure", "error"):
                status = "failed" if tag == "failure" else "error"
                message = "\n".join(p for p in ((child.get("message") or "").strip(),
                                                (child.text or "").strip()) if p)
                break
            if tag == "skipped":
                status = "skipped"
                message = (child.get("message") or "").strip()
        _merge(out, f"{classname}.{name}" if classname else name, status, message)
    return out


def parse_ctrf_report(data: bytes, node_id: str = "name") -> dict[str, tuple[TestStatus, str]]:
    """CTRF JSON -> {id: (status, message)} with ids per `grade.node_id`."""
    out: dict[str, tuple[TestStatus, str]] = {}
    try:
        doc = json.loads(data)
        tests = (doc.get("results") or {}).get("tests") or []
    except (ValueError, AttributeError):
        return out
    if not isinstance(tests, list):
        return out
    for test in tests:
        if not isinstance(test, dict):
            continue
        name = str(test.get("name") or "").strip()
        if not name:
            continue
        suite = test.get("suite")
        if isinstance(suite, list):
            suite = str(suite[0]).strip() if suite else ""
        elif isinstance(suite, str):
            suite = suite.strip()
        else:
            suite = ""
        test_id = f"{suite}.{name}" if node_id == "suite.name" and suite else name
        raw = str(test.get("status") or "").strip().lower()
        status: TestStatus = ("passed" if raw == "passed" else
                              "skipped" if raw in ("skipped", "pending", "other") else "failed")
        message = "" if status == "passed" else str(test.get("message") or test.get("trace") or "").strip()
        _merge(out, test_id, status, message)
    return out


def read_reports(reports: Iterable[bytes | None], fmt: str, node_id: str = "name"
                 ) -> dict[str, tuple[TestStatus, str]]:
    """All reports of one run, merged worst-status-wins (missing reports add nothing)."""
    merged: dict[str, tuple[TestStatus, str]] = {}
    for data in reports:
        if not data:
            continue
        parsed = parse_junit_report(data) if fmt == "junit" else parse_ctrf_report(data, node_id)
        for test_id, (status, message) in parsed.items():
            _merge(merged, test_id, status, message)
    return merged


def read_reward(reward_json: bytes | None, reward_txt: bytes | None) -> float | None:
    """The verifier's reward: reward.json's `reward` first, then reward.txt; None if neither."""
    if reward_json:
        try:
            value = json.loads(reward_json)
            value = value.get("reward") if isinstance(value, dict) else value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        except ValueError:
            pass
    if reward_txt:
        try:
            return float(reward_txt.decode(errors="replace").strip().splitlines()[0])
        except (ValueError, IndexError):
            return None
    return None
