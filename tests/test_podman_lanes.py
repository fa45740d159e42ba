"""The second podman lane (tests/conftest.py `PODMAN_LANE_B`) holds only files that exist and touch
nothing another podman test shares or counts: no session fixture of the first lane, no sweep of
dead owners' containers, no listing of every container of ours. A session fixture's readers all
go to its own lane (one build per worker)."""
from __future__ import annotations

from conftest import PODMAN_FIXTURES, PODMAN_LANE_B, ROOT, SESSION_FIXTURES

SHARED = ("swept_at_start", "sweep(", "APP_FILTER", "label=testjack.app=testjack-tui\"")


def test_lane_b_files_exist_and_read_no_shared_podman_state():
    session_fixtures = {name for name in PODMAN_FIXTURES if name not in ("podman_calls", "own_podman_service")}
    assert session_fixtures == set(SESSION_FIXTURES)
    first_lane = [name for name, lane in SESSION_FIXTURES.items() if lane == "podman"]
    for name in sorted(PODMAN_LANE_B):
        text = (ROOT / "tests" / name).read_text()
        found = [word for word in (*first_lane, *SHARED) if word in text]
        assert found == [], (name, found)


def test_every_reader_of_a_session_fixture_goes_to_that_fixtures_lane(monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    from conftest import podman_lane

    monkeypatch.delenv("TESTJACK_TEST_PODMAN_LANES", raising=False)
    assert set(SESSION_FIXTURES.values()) <= {"podman", "podman-b"}
    for fixture, lane in SESSION_FIXTURES.items():
        for file in ("test_lang_go.py", "test_report_e2e.py"):  # a lane-b file and a first-lane one
            item = SimpleNamespace(path=Path(file), fixturenames=[fixture], get_closest_marker=lambda _: True,
                                   nodeid=file)
            assert podman_lane(item) == lane, (fixture, file)
    monkeypatch.setenv("TESTJACK_TEST_PODMAN_LANES", "1")
    item = SimpleNamespace(path=Path("test_lang_go.py"), fixturenames=["lang_audits"],
                           get_closest_marker=lambda _: True, nodeid="x")
    assert podman_lane(item) == "podman"
