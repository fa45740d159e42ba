"""tests/lane_totals.py sums a `-n 2 -v --durations=0` log by worker, lane and file."""
from __future__ import annotations

from lane_totals import table, totals

LOG = """\
[gw0] [  1%] PASSED tests/test_a.py::test_one@podman 
[gw1] [  2%] PASSED tests/test_b.py::test_two[go]@podman-b 
[gw1] [  3%] ERROR tests/test_b.py::test_three@podman-b 
[gw0] [  4%] PASSED tests/test_c.py::test_pure 
============================= slowest durations ==============================
10.00s setup    tests/test_a.py::test_one@podman
2.50s call     tests/test_a.py::test_one@podman
5.50s call     tests/test_b.py::test_two[go]@podman-b
1.00s setup    tests/test_b.py::test_three
0.50s call     tests/test_c.py::test_pure
"""


def test_each_phase_counts_for_its_tests_worker_lane_and_file():
    by_worker, by_lane, by_file = totals(LOG)
    assert by_worker == {"gw0": 13.0, "gw1": 6.5}
    assert by_lane == {"podman": 12.5, "podman-b": 6.5, "-": 0.5}
    assert by_file == {("podman", "tests/test_a.py"): 12.5, ("podman-b", "tests/test_b.py"): 6.5,
                       ("-", "tests/test_c.py"): 0.5}


QUIET = """\
..........F.. [100%]
============================= slowest durations ==============================
10.00s setup    tests/test_a.py::test_one@podman
2.50s call     tests/test_a.py::test_one@podman
5.50s call     tests/test_b.py::test_two[go]@podman-b
0.50s call     tests/test_c.py::test_pure
0.25s call     tests/test_b.py::test_pure_too
1.00s call     tests/test_d.py::test_failed
2.00s call     tests/test_d.py::test_ids[node --test-x]@podman-b
=========================== short test summary info ============================
FAILED tests/test_d.py::test_failed@podman-b - AssertionError
"""


def test_without_worker_lines_the_lane_is_the_group_the_node_id_carries():
    by_worker, by_lane, by_file = totals(QUIET)
    assert by_worker == {}
    # test_d's durations line lacks its group (it failed): the summary line gives it.
    # A parametrized id may hold spaces: the whole id is read.
    assert by_lane == {"podman": 12.5, "podman-b": 8.5, "-": 0.75}
    assert by_file[("-", "tests/test_b.py")] == 0.25 and by_file[("podman-b", "tests/test_b.py")] == 5.5
    # The table for tests/lanes.py: podman seconds by file name, whichever lane, largest first.
    assert table(by_file) == {"test_a.py": 12, "test_b.py": 6, "test_d.py": 3}
    assert list(table(by_file)) == ["test_a.py", "test_b.py", "test_d.py"]


def test_a_pure_file_held_on_one_worker_by_its_own_group_stays_a_pure_test():
    log = QUIET.replace("0.50s call     tests/test_c.py::test_pure",
                        "0.50s call     tests/test_c.py::test_pure@pure-packaging")
    _, by_lane, by_file = totals(log)
    assert by_lane["-"] == 0.75 and "pure-packaging" not in by_lane
    assert by_file[("-", "tests/test_c.py")] == 0.5 and "test_c.py" not in table(by_file)
