"""How the podman tests share the workers (tests/lanes.py, tests/conftest.py `podman_lane`): a
session fixture's readers all go to that fixture's group (one build per worker); otherwise a file
runs in a group of its own only if it touches nothing another podman test shares or counts (no
session fixture of lane "podman", no sweep of dead owners' containers, no listing of every
container of ours); the queue runs lane "podman" first, the other groups longest first, the pure
tests last."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from conftest import PODMAN_FIXTURES, ROOT, SESSION_FIXTURES, files_with_readers, podman_lane
from lanes import DEFAULT_SECONDS, LANE_SECONDS, PINNED, SAFE_FILES, group_of, group_seconds, queue_position, simulated_wall

SHARED = ("swept_at_start", "sweep(", "APP_FILTER", "label=testjack.app=testjack-tui\"")


def test_safe_files_exist_and_read_no_shared_podman_state():
    session_fixtures = {name for name in PODMAN_FIXTURES if name not in ("podman_calls", "own_podman_service")}
    assert session_fixtures == set(SESSION_FIXTURES)
    pinned = [name for name, group in SESSION_FIXTURES.items() if group == PINNED]
    for name in sorted(SAFE_FILES):
        text = (ROOT / "tests" / name).read_text()
        found = [word for word in (*pinned, *SHARED) if word in text]
        assert found == [], (name, found)


def test_the_table_names_existing_files():
    assert [name for name in LANE_SECONDS if not (ROOT / "tests" / name).is_file()] == []


def _item(file: str, fixtures: list[str]) -> SimpleNamespace:
    return SimpleNamespace(path=Path(file), fixturenames=fixtures, get_closest_marker=lambda _: True, nodeid=file)


def test_a_reader_of_a_session_fixture_goes_to_its_group_a_safe_file_to_its_own(monkeypatch):
    monkeypatch.delenv("TESTJACK_TEST_PODMAN_LANES", raising=False)
    for fixture, group in SESSION_FIXTURES.items():
        for file in ("test_lang_go.py", "test_report_e2e.py"):  # a safe file and a lane-podman one
            assert podman_lane(_item(file, [fixture])) == group, (fixture, file)
    assert podman_lane(_item("test_lang_mocha.py", [])) == group_of("test_lang_mocha.py") == "podman-test_lang_mocha"
    assert podman_lane(_item("test_probes.py", [])) == PINNED
    monkeypatch.setenv("TESTJACK_TEST_PODMAN_LANES", "1")
    assert podman_lane(_item("test_lang_go.py", ["lang_audits"])) == PINNED
    assert podman_lane(_item("test_lang_mocha.py", [])) == PINNED


def test_a_file_with_a_reader_of_a_session_fixture_goes_there_whole(monkeypatch):
    # test_ray_backend: one test reads the demo audit, the others its module's Ray cluster; split
    # over two groups, the cluster would start on both workers.
    monkeypatch.delenv("TESTJACK_TEST_PODMAN_LANES", raising=False)
    items = [_item("test_ray_backend.py", ["cluster"]), _item("test_ray_backend.py", ["demo_lightweight_audit"]),
             _item("test_probes.py", []), _item("test_lang_go.py", ["lang_audits"]), _item("test_lang_go.py", [])]
    assert files_with_readers(items) == {"test_ray_backend.py": SESSION_FIXTURES["demo_lightweight_audit"]}
    # A safe file's other tests keep their own group (nothing of lane "podman" to move).
    assert podman_lane(items[4]) == group_of("test_lang_go.py") != PINNED


def test_the_queue_runs_the_pinned_lane_first_then_the_longest_groups_then_pure_tests():
    seconds = {"test_big.py": 300.0, "test_small.py": 20.0}
    assert 20 < DEFAULT_SECONDS < 300  # a file not in the table yet: between the two here
    groups = {"podman-big": group_seconds(["test_big.py"], seconds), "podman-small": group_seconds(["test_small.py"], seconds),
              "podman-new": group_seconds(["test_new.py"], seconds),
              "podman-two": group_seconds(["test_small.py", "test_new.py"], seconds)}
    order = sorted([None, *groups, PINNED], key=lambda g: queue_position(g, groups.get(g or "", 0.0)))
    assert order == [PINNED, "podman-big", "podman-two", "podman-new", "podman-small", None]


def test_collection_puts_the_queue_in_that_order():
    files = ["tests/test_agents_caps.py", "tests/test_lang_mocha.py", "tests/test_probes.py", "tests/test_runner_node_podman.py"]
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}).stdout
    seen = [line.split("::")[0] for line in out.splitlines() if "::" in line]
    firsts = list(dict.fromkeys(seen))  # each file once, in the order its first test comes
    # test_probes.py holds pure tests and lane "podman" ones: its podman tests lead, its pure ones
    # come last with test_agents_caps.py's.
    assert firsts[0] == "tests/test_probes.py"
    longer, shorter = sorted(["tests/test_lang_mocha.py", "tests/test_runner_node_podman.py"],
                             key=lambda f: -LANE_SECONDS.get(f.split("/")[1], DEFAULT_SECONDS))
    assert firsts[1:3] == [longer, shorter]
    assert seen.index("tests/test_agents_caps.py") > max(i for i, f in enumerate(seen) if f == shorter)


def test_the_simulated_wall_time_is_the_later_worker_groups_going_to_whoever_is_free():
    # w0 pinned 100; w1 80 then 50 (130); w0 30 (130); 10 to the first of the tie (140).
    assert simulated_wall(100.0, [10.0, 50.0, 80.0, 30.0]) == 140.0
    # Pure tests' seconds go to the worker that ended first.
    assert simulated_wall(100.0, [10.0, 50.0, 80.0, 30.0], pure=10) == 140.0
    assert simulated_wall(100.0, [10.0, 50.0, 80.0, 30.0], pure=30) == 150.0
