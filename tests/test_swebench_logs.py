"""Golden logs: real test logs (tests/fixtures/swebench_logs, provenance in its README) read by
the SWE-bench harness's parsers as the harness reads them (testjack_tui/swebench_harness.py,
pinned to an upstream commit)."""
from __future__ import annotations

from pathlib import Path

import pytest

from testjack_tui import swebench_harness as harness
from testjack_tui.swebench_harness import PARSERS, parse_log

LOGS = Path(__file__).parent / "fixtures" / "swebench_logs"
T = "tests/test_ops.py::"


def log(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


# pytest -rA: the short summary names every test but the skipped ones, which it only counts.
SUMMARY = {T + "test_add": "PASSED", T + "test_read[/tmp/data/a.csv]": "PASSED",
           T + "test_read[rel/b.csv]": "PASSED", T + "test_known": "XFAIL",
           T + "test_query": "ERROR", T + "test_sub": "FAILED"}
# pytest -v / -vv: one `id STATUS` line per test, skipped ones included.
VERBOSE = {T + "test_add": "PASSED", T + "test_sub": "FAILED", T + "test_query": "ERROR",
           T + "test_windows_paths": "SKIPPED", T + "test_slow[1]": "SKIPPED", T + "test_slow[2]": "SKIPPED",
           T + "test_known": "XFAIL", T + "test_read[/tmp/data/a.csv]": "PASSED", T + "test_read[rel/b.csv]": "PASSED"}
# The later parser reads any line holding a status word: the banners of the traceback section
# give two keys that name no test (the harness's own reading; no F2P/P2P id looks like them).
BANNERS = {"=" * 36: "ERRORS", "_" * 25: "ERROR"}


def test_skip_summary_lines_name_no_test():
    """`SKIPPED [N] path:line: reason` counts N skips; upstream no longer records `[N]` as an id.
    A wrapped `PASSED [100%]` still counts (two Verified PASS_TO_PASS lists expect it)."""
    for parser in ("pytest", "pytest_options", "pytest_v2", "matplotlib"):
        got = PARSERS[parser](log("pytest_rA.log"))
        assert "[1]" not in got and "[2]" not in got, parser
    assert harness.parse_pytest("SKIPPED [3] t/test_x.py:9: slow\nPASSED [100%]\n") == {"[100%]": "PASSED"}
    assert harness.parse_pytest("SKIPPED t/test_x.py::test_a - slow\n") == {"t/test_x.py::test_a": "SKIPPED"}


@pytest.mark.parametrize("parser, expected", [
    ("pytest", SUMMARY),
    ("matplotlib", SUMMARY),
    # path-like parameters shortened to their last part (requests, pydicom, pylint)
    ("pytest_options", {**{k: v for k, v in SUMMARY.items() if "a.csv" not in k}, T + "test_read[/a.csv]": "PASSED"}),
    ("pytest_v2", {**BANNERS, **SUMMARY}),
    # seaborn reads FAILED and PASSED only
    ("seaborn", {k: v for k, v in SUMMARY.items() if v in ("PASSED", "FAILED")}),
])
def test_pytest_rA_log(parser, expected):
    assert PARSERS[parser](log("pytest_rA.log")) == expected


def test_pytest_verbose_logs_of_the_older_commands():
    """astropy 0.1-1.3 (`-rA -vv`, classic style, no tracebacks) and scikit-learn 0.20-0.22
    (`pytest -v`, progress column) are read by the later parser from their `id STATUS` lines."""
    assert harness.test_command("astropy/astropy", "1.3", ["a/t.py"]) == (
        "pytest -rA -vv -o console_output_style=classic --tb=no a/t.py", "pytest_v2")
    assert harness.test_command("scikit-learn/scikit-learn", "0.20", ["s/t.py"]) == ("pytest -v s/t.py", "pytest_v2")
    assert PARSERS["pytest_v2"](log("pytest_vv.log")) == VERBOSE
    assert PARSERS["pytest_v2"](log("pytest_v.log")) == {**VERBOSE, **BANNERS}
    statuses = parse_log("pytest_v2", log("pytest_v.log"))
    assert statuses[T + "test_known"] == "passed" and statuses[T + "test_slow[1]"] == "skipped"


def test_django_log_from_the_harness_repository():
    """A test with a docstring prints it on its own line, and that line ends in `... ok`: the
    harness keys the test by the docstring's first line (Verified's lists carry those strings),
    so three tests sharing one first line are one key."""
    assert parse_log("django", log("django_16950.log")) == {
        "#24377 - Inlines with a model field default should ignore that default": "passed",
        "#24377 - If we're adding a new object, a parent's auto-generated pk": "passed",
        "#24958 - Variant of test_inlineformset_factory_nulls_default_pks for": "passed",
        "If form data is provided, a parent's auto-generated alternate key is": "passed"}


def test_every_harness_command_of_today():
    """sphinx has a command (tox, pytest -rA inside), and today's astropy and scikit-learn run
    plain `pytest -rA`."""
    assert harness.test_command("sphinx-doc/sphinx", "7.1", ["tests/test_ext.py", "tests/roots/x.txt"]) == (
        "tox --current-env -epy39 -v -- tests/test_ext.py", "pytest_v2")
    assert harness.test_command("astropy/astropy", "5.2", ["a/t.py"])[0] == "pytest -rA a/t.py"
    assert harness.test_command("scikit-learn/scikit-learn", "1.3", ["s/t.py"])[0] == "pytest -rA s/t.py"
