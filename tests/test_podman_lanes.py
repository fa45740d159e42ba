"""How the podman tests share the workers (tests/lanes.py, tests/conftest.py `podman_lane`): a
file runs in a group of its own only if it touches nothing another podman test shares or counts
(no session fixture, no sweep of dead owners' containers, no listing of every container of
ours); the queue runs lane "podman" first, the safe files longest first, the pure tests last."""
from __future__ import annotations

import subprocess
import sys

from conftest import PODMAN_FIXTURES, ROOT, SESSION_FIXTURES
from lanes import DEFAULT_SECONDS, LANE_SECONDS, PINNED, SAFE_FILES, group_of, queue_position, simulated_wall

SHARED = ("swept_at_start", "sweep(", "APP_FILTER", "label=testjack.app=testjack-tui\"")


def test_safe_files_exist_and_read_no_shared_podman_state():
    session_fixtures = {name for name in PODMAN_FIXTURES if name not in ("podman_calls", "own_podman_service")}
    assert session_fixtures == SESSION_FIXTURES
    for name in sorted(SAFE_FILES):
        text = (ROOT / "tests" / name).read_text()
        found = [word for word in (*session_fixtures, *SHARED) if word in text]
        assert found == [], (name, found)


def test_the_table_names_existing_files():
    assert [name for name in LANE_SECONDS if not (ROOT / "tests" / name).is_file()] == []


def test_a_safe_file_is_a_group_of_its_own_unless_it_reads_a_session_fixture():
    assert group_of("test_lang_go.py", False) == "podman-test_lang_go"
    assert group_of("test_lang_go.py", True) == PINNED
    assert group_of("test_probes.py", False) == PINNED


def test_the_queue_runs_the_pinned_lane_first_then_the_longest_safe_files_then_pure_tests():
    seconds = {"test_big.py": 300.0, "test_small.py": 20.0}
    order = sorted([None, "podman-test_small", PINNED, "podman-test_new", "podman-test_big"],
                   key=lambda g: queue_position(g, seconds))
    # A file not in the table yet counts DEFAULT_SECONDS (between the two here).
    assert 20 < DEFAULT_SECONDS < 300
    assert order == [PINNED, "podman-test_big", "podman-test_new", "podman-test_small", None]


def test_collection_puts_the_queue_in_that_order():
    files = ["tests/test_agents_caps.py", "tests/test_lang_go.py", "tests/test_probes.py", "tests/test_lang_rust.py"]
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                         cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    seen = [line.split("::")[0] for line in out.splitlines() if "::" in line]
    firsts = list(dict.fromkeys(seen))  # each file once, in the order its first test comes
    # test_probes.py holds pure tests and lane "podman" ones: its podman tests lead, its pure ones
    # come last with test_agents_caps.py's.
    assert firsts[0] == "tests/test_probes.py"
    longer, shorter = sorted(["tests/test_lang_go.py", "tests/test_lang_rust.py"],
                             key=lambda f: -LANE_SECONDS.get(f.split("/")[1], DEFAULT_SECONDS))
    assert firsts[1:3] == [longer, shorter]
    assert seen[-1] in ("tests/test_agents_caps.py", "tests/test_probes.py")
    assert seen.index("tests/test_agents_caps.py") > max(i for i, f in enumerate(seen) if f == shorter)


def test_the_simulated_wall_time_is_the_later_worker_groups_going_to_whoever_is_free():
    seconds = {"pinned.py": 100.0, "big.py": 80.0, "mid.py": 50.0, "small.py": 30.0, "tiny.py": 10.0}
    safe = {"big.py", "mid.py", "small.py", "tiny.py"}
    # w0 pinned 100; w1 big 80 then mid (130); w0 small (130); tiny to the first of the tie (140).
    assert simulated_wall(seconds, safe=safe) == 140.0
    # Ten seconds of pure tests go to the worker that ended first.
    assert simulated_wall(seconds, pure=10, safe=safe) == 140.0
    assert simulated_wall(seconds, pure=30, safe=safe) == 150.0
