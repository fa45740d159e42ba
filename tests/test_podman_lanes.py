"""The second podman lane (tests/conftest.py `PODMAN_LANE_B`) holds only files that exist and touch
nothing another podman test shares or counts: no session fixture of the first lane, no sweep of
dead owners' containers, no listing of every container of ours."""
from __future__ import annotations

from conftest import PODMAN_FIXTURES, PODMAN_LANE_B, ROOT, SESSION_FIXTURES

SHARED = ("swept_at_start", "sweep(", "APP_FILTER", "label=testjack.app=testjack-tui\"")


def test_lane_b_files_exist_and_read_no_shared_podman_state():
    session_fixtures = {name for name in PODMAN_FIXTURES if name not in ("podman_calls", "own_podman_service")}
    assert session_fixtures == SESSION_FIXTURES
    for name in sorted(PODMAN_LANE_B):
        text = (ROOT / "tests" / name).read_text()
        found = [word for word in (*session_fixtures, *SHARED) if word in text]
        assert found == [], (name, found)
