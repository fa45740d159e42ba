"""Per-test outcomes from a pytest JUnit XML report, keyed by pytest node id.

pytest writes `classname` = the node id's path with "/" -> "." and ".py" dropped, plus the
classes, joined by "."; and `name` = the function name with its parameters. We map requested
ids forward exactly (the same mangling pytest does) and map other test cases (from a file or
class id) back using the xunit1 `file` attribute or the requested files.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from ..api import TestOutcome, TestStatus
from ..test_ids import junit_to_pytest, mangle, module_of
from .base import trim


def _nodeid(classname: str, name: str, file_attr: str, known_files: list[str]) -> str:
    return junit_to_pytest(f"{classname}.{name}" if classname else name,
                           ([file_attr] if file_attr else []) + known_files)


def parse_junit(xml: bytes, test_ids: list[str]) -> tuple[dict[str, TestOutcome], dict[str, str]]:
    """(outcomes by node id, collection errors by file path)."""
    root = ET.fromstring(xml)
    forward = {mangle(i): i for i in test_ids if "::" in i}
    known_files = sorted({i.split("::")[0] for i in test_ids if i.split("::")[0].endswith(".py")},
                         key=len, reverse=True)
    outcomes: dict[str, TestOutcome] = {}
    collection_errors: dict[str, str] = {}
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        status: TestStatus = "passed"
        message = ""
        for child in case:
            tag = child.tag
            text = (child.get("message") or "") + ("\n" + child.text if child.text else "")
            if tag == "failure":
                status, message = "failed", text
                break
            if tag == "error":
                status, message = "error", text
            elif tag == "skipped" and status == "passed":
                status, message = "skipped", text
        if not classname and status == "error":
            # A collection error: name is the module's dotted path.
            path = next((f for f in known_files if module_of(f) == name), name.replace(".", "/") + ".py")
            collection_errors[path] = trim(message)
            continue
        nodeid = forward.get((classname, name)) or _nodeid(classname, name, case.get("file", ""),
                                                          known_files)
        try:
            duration = float(case.get("time") or 0.0)
        except ValueError:
            duration = 0.0
        outcomes[nodeid] = TestOutcome(id=nodeid, status=status, message=trim(message.strip()),
                                       duration=duration)
    return outcomes, collection_errors
