"""The second podman lane (tests/conftest.py `PODMAN_LANE_B`) holds only files that exist and touch
nothing another podman test shares or counts: no session fixture of the first lane, no sweep of
dead owners' containers, no listing of every container of ours. Which of those safe files it holds
is worked out from their seconds (tests/lanes.py): longest first, each to the lighter lane."""
from __future__ import annotations

from conftest import PODMAN_FIXTURES, PODMAN_LANE_B, ROOT, SESSION_FIXTURES
from lanes import DEFAULT_SECONDS, LANE_B_SAFE, LANE_SECONDS, lane_b, lane_seconds

SHARED = ("swept_at_start", "sweep(", "APP_FILTER", "label=testjack.app=testjack-tui\"")


def test_lane_b_files_exist_and_read_no_shared_podman_state():
    session_fixtures = {name for name in PODMAN_FIXTURES if name not in ("podman_calls", "own_podman_service")}
    assert session_fixtures == SESSION_FIXTURES
    assert PODMAN_LANE_B == lane_b() and PODMAN_LANE_B <= LANE_B_SAFE
    for name in sorted(LANE_B_SAFE):
        text = (ROOT / "tests" / name).read_text()
        found = [word for word in (*session_fixtures, *SHARED) if word in text]
        assert found == [], (name, found)


def test_the_table_names_existing_files():
    assert [name for name in LANE_SECONDS if not (ROOT / "tests" / name).is_file()] == []


def test_safe_files_go_longest_first_to_the_lighter_lane():
    seconds = {"pinned.py": 100.0, "big.py": 80.0, "mid.py": 50.0, "small.py": 30.0, "tiny.py": 10.0}
    safe = {"big.py", "mid.py", "small.py", "tiny.py"}
    # b 0 < 100: big (b 80); 80 < 100: mid (b 130); 130 >= 100: small to a (130); 130 >= 130: tiny
    # to a (140).
    assert lane_b(seconds, safe) == {"big.py", "mid.py"}
    assert lane_seconds(seconds, safe) == {"podman": 140.0, "podman-b": 130.0}
    # A safe file not in the table yet counts DEFAULT_SECONDS: here it outweighs big.py.
    assert DEFAULT_SECONDS > 10
    assert lane_b({"pinned.py": DEFAULT_SECONDS, "big.py": 10.0}, {"big.py", "new.py"}) == {"new.py"}
    # A tie goes to lane "podman": with nothing pinned, the largest stays there, the others meet it.
    assert lane_b({"a.py": 10.0, "b.py": 5.0, "c.py": 4.0}, {"a.py", "b.py", "c.py"}) == {"b.py", "c.py"}
