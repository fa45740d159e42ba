"""The podman work counter (tests/podman_count.py, `TESTJACK_TEST_COUNT_PODMAN`): a container is
charged to the test running at its creation, by Sandbox session, and only when its owner is in
this process's tree."""
from __future__ import annotations

import os
import subprocess
import sys

from podman_count import PodmanCounter, _ancestors, _epoch, _session_name, by_file


def test_each_container_goes_to_the_test_running_when_it_was_created():
    counter = PodmanCounter()
    counter.starts = [(100.0, "tests/test_a.py::test_one"), (200.0, "tests/test_a.py::test_two"),
                      (300.0, "tests/test_b.py::test_three")]
    counter.created = [(50.0, "verify-1a2b3c4d"), (150.0, "tj-20261203-174310-6f580-895d88e5"),
                       (160.0, "tj-20261203-174310-6f580-895d88e5"), (250.0, "demo-scripts-0a1b2c3d"),
                       (301.0, "lang-export-grade-deadbeef")]
    counts = counter.stop()
    assert counts == {"(session start)": {"verify": 1}, "tests/test_a.py::test_one": {"audit": 2},
                      "tests/test_a.py::test_two": {"demo-scripts": 1},
                      "tests/test_b.py::test_three": {"lang-export-grade": 1}}
    assert by_file(counts) == {"(session start)": 1, "tests/test_a.py": 3, "tests/test_b.py": 1}


def test_podman_event_times_and_owners():
    assert _epoch("1970-01-01T00:01:40.123456789Z") == 100.123456
    assert _session_name("tj-20261203-175146-c74a84-0f1e2d3c") == "audit"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert os.getpid() in _ancestors(child.pid)  # a CLI child of the tests is ours
    finally:
        child.kill()
        child.wait()
    assert os.getpid() not in _ancestors(1)


def test_a_creation_podman_reports_twice_counts_once():
    import io
    import json
    import types

    def event(cid: str, t: str) -> str:
        return json.dumps({"ID": cid, "Time": f"1970-01-01T00:02:{t}Z", "Attributes": {
            "testjack.pid": str(os.getpid()), "testjack.session": "verify-1a2b3c4d"}}) + "\n"

    counter = PodmanCounter()
    counter.starts = [(100.0, "tests/test_a.py::test_one")]
    # The same container's create event twice (as podman's event log gives it), then another.
    counter._proc = types.SimpleNamespace(stdout=io.StringIO(event("c1", "00.1") + event("c1", "00.1")
                                                             + event("c2", "01.5")))
    counter._read()
    counter._proc = None
    assert counter.stop() == {"tests/test_a.py::test_one": {"verify": 2}}
