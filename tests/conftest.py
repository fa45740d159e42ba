"""Shared fixtures. Every test gets its own TESTJACK_HOME so config, data and sessions never
touch the user's real directories."""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest
from lanes import PINNED, group_of, group_seconds, queue_position  # tests/ is on sys.path (rootdir conftest), as for podman_count

# Fixture benchmarks carry their own repositories with their own tests (some deliberately
# flaky or failing): they are data for our tests, never part of this suite.
collect_ignore_glob = ["fixtures/*"]

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "benchmarks" / "demo"


@pytest.fixture(scope="session", autouse=True)
def shared_podman_service(tmp_path_factory):
    """One podman API service for the whole test session, as a configured socket
    (TESTJACK_PODMAN_SOCKET): every Sandbox() and every CLI child of the session uses it instead of
    starting a private one. Ours, it serves the local storage: podman CLI calls stay local, as with
    a private service (not remote, as CONTAINER_HOST would make them). Tests of our private service
    itself take it away (`own_podman_service`). A socket the caller configured is used as it is."""
    import shutil

    from testjack_tui.sandbox.service import PodmanService, configured_socket

    if configured_socket() or shutil.which("podman") is None:
        yield None
        return
    # The service's containers.conf is written under TESTJACK_HOME: a home of the session's own.
    home = os.environ.get("TESTJACK_HOME")
    os.environ["TESTJACK_HOME"] = str(tmp_path_factory.mktemp("tj-service-home"))
    try:
        service = PodmanService().start()
    finally:
        if home is None:
            os.environ.pop("TESTJACK_HOME")
        else:
            os.environ["TESTJACK_HOME"] = home
    os.environ["TESTJACK_PODMAN_SOCKET"] = service.url or ""
    try:
        yield service
    finally:
        os.environ.pop("TESTJACK_PODMAN_SOCKET", None)
        service.stop()


@pytest.fixture
def own_podman_service(monkeypatch):
    """For tests of the service a Sandbox starts and stops on its own: no shared socket."""
    for name in ("CONTAINER_HOST", "TESTJACK_PODMAN_SOCKET"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def testjack_home(tmp_path, monkeypatch):
    home = tmp_path / "tj-home"
    monkeypatch.setenv("TESTJACK_HOME", str(home))
    return home


def kill_when(argv: list[str], env: dict, trigger, deadline_s: float = 900) -> tuple[str, int]:
    """Run `python -m testjack_tui.cli ARGV`, kill -9 it at the first output line for which
    `trigger(line, seen_so_far)` holds; (its output up to then, its pid). Fails if it ends first."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "testjack_tui.cli", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[str] = []
    deadline = time.time() + deadline_s
    try:
        for line in proc.stdout:
            seen.append(line)
            if trigger(line, "".join(seen)):
                break
            assert time.time() < deadline, "".join(seen)[-2000:]
        else:
            pytest.fail("the command ended before the point to kill it:\n" + "".join(seen)[-3000:])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    return "".join(seen), proc.pid


@pytest.fixture
def podman_calls(tmp_path, monkeypatch):
    """Counts the podman CLI commands this process and its children run: a `podman` first on
    PATH that notes its arguments and runs the real one. Returns a function giving the calls so
    far (one argument string each), the long-lived `system service` excepted."""
    import shutil

    real = shutil.which("podman")
    assert real, "podman is not installed"
    shim, log = tmp_path / "podman-shim", tmp_path / "podman-calls.log"
    shim.mkdir()
    (shim / "podman").write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n")
    (shim / "podman").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")

    def calls() -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        return [line for line in lines if not line.startswith("system service")]
    return calls


def _on_requests(monkeypatch, answer) -> None:
    """Every request this process sends to the podman service from here on goes through
    `answer(request)` first: the response it gives, or (None) the real service's. A later call
    replaces an earlier one's answer."""
    import requests

    send = getattr(requests.Session.send, "real", requests.Session.send)

    def through(self, request, **kwargs):
        answered = answer(request)  # a Response is falsy when it is an error: compare with None
        return send(self, request, **kwargs) if answered is None else answered
    through.real = send  # type: ignore[attr-defined]
    monkeypatch.setattr(requests.Session, "send", through)


@pytest.fixture
def refuse_copies(monkeypatch):
    """refuse_copies(times): the service answers the first `times` copies into a container
    (PUT .../archive) from then on as podman 4.3 sometimes does on its own, with a 500 and its
    broken pipe; every other request goes to the real service. Returns the copies asked for."""
    import requests

    def refuse(times: int) -> list[str]:
        asked: list[str] = []

        def flaky(request):
            if request.method != "PUT" or not request.url.split("?", 1)[0].endswith("/archive"):
                return None
            asked.append(request.url)
            if len(asked) > times:
                return None
            refused = requests.Response()
            refused.status_code, refused.request, refused.url = 500, request, request.url
            refused._content = (b'{"cause":"broken pipe","message":"passing bulk input to subprocess: '
                                b'write |1: broken pipe","response":500}')
            return refused
        _on_requests(monkeypatch, flaky)
        return asked
    return refuse


@pytest.fixture
def podman_requests(monkeypatch) -> list[str]:
    """Every request this process sends to the podman service from here on ("METHOD path", no
    query), each passed on unchanged: what a run costs podman, in requests."""
    seen: list[str] = []
    _on_requests(monkeypatch, lambda request: seen.append(f"{request.method} {request.url.split('?', 1)[0]}"))
    return seen


# --- The shared demo audits -------------------------------------------------------------------
# A whole demo audit costs minutes; the demo is audited whole once per test session, in one
# TESTJACK_HOME, through the CLI as a user runs it. First the default lightweight loop (seed 0):
# test_audit_cmd_e2e reads it and compares its one-task re-runs with it. Then the per-trial audit
# (every passing trial on its own, `--sampler cluster`, seed 0) with `--reuse-runs` on that
# session: it takes every run the lightweight loop already made (same world snapshot, tests and
# files: the run's key) and the ghost lines of each trial it audited (T0 under coverage on the
# same snapshot: engine/run_reuse.lent_ghost), runs only the rest, and ends as a per-trial audit of its own would
# (tests/test_reuse_runs.py); test_report_e2e, test_probes and test_demo_scripts read it. Under
# xdist the fixtures are per worker; the `podman` group (below) keeps every reader on one worker,
# so each runs once per session.
SHARED_STARTED: list[str] = []  # what the shared session fixtures ran, in this process
DEMO_LIGHTWEIGHT_ARGS = ("--seed", "0")
DEMO_PER_TRIAL_ARGS = ("--mode", "per-trial", "--sampler", "cluster", "--seed", "0")


def _demo_audit(home: Path, out: Path, args: tuple[str, ...]) -> dict:
    """`audit DEMO --headless --auto-approve ARGS --out OUT` in HOME: {"home", "session_id",
    "summary" (summary.json), "stdout"}."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "testjack_tui.cli", "audit", str(DEMO), "--headless",
                           "--auto-approve", *args, "--out", str(out)],
                          cwd=ROOT, env=dict(os.environ, TESTJACK_HOME=str(home)), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    return {"home": home, "session_id": summary["session_id"], "summary": summary, "stdout": proc.stdout}


@pytest.fixture(scope="session")
def demo_lightweight_audit(tmp_path_factory) -> dict:
    """The lightweight demo audit (the default loop, seed 0), in the home both demo audits share."""
    assert "lightweight" not in SHARED_STARTED, "the shared lightweight demo audit runs once per session"
    SHARED_STARTED.append("lightweight")
    return _demo_audit(tmp_path_factory.mktemp("tj-demo-home"), tmp_path_factory.mktemp("tj-demo-lightweight"),
                       DEMO_LIGHTWEIGHT_ARGS)


@pytest.fixture(scope="session")
def demo_per_trial_audit(demo_lightweight_audit, tmp_path_factory) -> dict:
    """The per-trial demo audit, reusing the lightweight one's runs: {"home", "session_id",
    "summary" (summary.json), "stdout", "lender" (the lightweight session's id)}."""
    assert "per-trial" not in SHARED_STARTED, "the shared demo audit runs once per session"
    SHARED_STARTED.append("per-trial")
    lender = demo_lightweight_audit["session_id"]
    audit = _demo_audit(demo_lightweight_audit["home"], tmp_path_factory.mktemp("tj-demo-per-trial"),
                        (*DEMO_PER_TRIAL_ARGS, "--reuse-runs", lender))
    return {**audit, "lender": lender}


# --- The shared verify of the DeepSWE-layout fixture ------------------------------------------
# test_official_flow reads every task's verification; test_ray_backend compares a Ray verify of
# one task with the local one: both read this one local `verify_benchmark` of every task (the
# verify of a task is the same whether run alone or with the others: one Sandbox, one result each).
DEEPSWE = ROOT / "tests" / "fixtures" / "deepswe"


@pytest.fixture(scope="session")
def deepswe_verified(tmp_path_factory):
    """The local verify of tests/fixtures/deepswe: (benchmark, {task id: TaskVerification})."""
    import asyncio

    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.services.verification import verify_benchmark

    assert "deepswe-verify" not in SHARED_STARTED, "the shared deepswe verify runs once per session"
    SHARED_STARTED.append("deepswe-verify")
    bench = load_benchmark(DEEPSWE)
    with pytest.MonkeyPatch.context() as mp:  # outlives every test's own TESTJACK_HOME
        mp.setenv("TESTJACK_HOME", str(tmp_path_factory.mktemp("tj-deepswe-verify-home")))
        results = asyncio.run(verify_benchmark(bench, list(bench.tasks.values())))
    return bench, {r.task_id: r for r in results}


# --- The shared scripted audit of each language fixture -------------------------------------
# A scripted audit of one language fixture (tests/fixtures/golang, typescript, rust, nodetest)
# costs 50-70 containers. Its language module (test_lang_go.py, ...) reads it (verdicts, report,
# export) and test_lang_operator.py adds an operator's witness to it (`audit --agent operator
# --reuse-runs SESSION`: T0's runs read from it, only the witness runs): each fixture's audit
# runs once per session, on first use, in a TESTJACK_HOME of its own that its readers share.
LANG_FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def lang_audits(tmp_path_factory):
    """fixture folder name -> its scripted audit, run at the first ask: {"home", "session_id",
    "summary" (summary.json, with the audit's progress lines under `_stdout`)}."""
    from lang_e2e import scripted_audit

    done: dict[str, dict] = {}

    def audit(name: str) -> dict:
        if name not in done:
            assert f"lang-{name}" not in SHARED_STARTED, f"the scripted audit of {name} runs once per session"
            SHARED_STARTED.append(f"lang-{name}")
            home = tmp_path_factory.mktemp(f"tj-lang-{name}-home")
            summary = scripted_audit(LANG_FIXTURES / name, home, tmp_path_factory.mktemp(f"lang-{name}-audit"))
            done[name] = {"home": home, "session_id": summary["session_id"], "summary": summary}
        return done[name]
    return audit


# --- The shared lightweight audit of the shipkit labelled benchmark ----------------------------
# test_labelled_benchmark_e2e's per-trial audit and test_operator_judgement's first operator audit
# both need T0 on every world of tests/fixtures/shipkit-labelled (its flaky tests found by running
# it twice on the null and reference worlds): both take those runs (`--reuse-runs`, same keys)
# from this one lightweight operator audit with the fixture's labelled witnesses, run at the first
# reader, in a TESTJACK_HOME its readers share.
SHIPKIT = ROOT / "tests" / "fixtures" / "shipkit-labelled"
SHIPKIT_WITNESSES = (  # the labelled witnesses and the requirement each is handed in with
    ("test_tj_negative_weight.py", "rate must reject a weight that is zero or negative with ValueError"),
    ("test_tj_express_everywhere.py", "Express delivery doubles the price"),
    ("test_tj_bulky_express.py", "The surcharge is added after the express doubling, so it is never doubled"))


def shipkit_audit(home: Path, mode: str, *extra: str) -> str:
    """`audit SHIPKIT --agent operator --mode MODE` with the labelled witnesses and their verdicts
    file, in HOME: the session's id."""
    import re
    import subprocess
    import sys

    witnesses = SHIPKIT / "witnesses"
    args = ["audit", str(SHIPKIT), "--agent", "operator", "--mode", mode,
            "--verdicts", str(witnesses / "verdicts.toml"), *extra]
    for name, requirement in SHIPKIT_WITNESSES:
        args += ["--candidate", str(witnesses / name), "--requirement", requirement]
    proc = subprocess.run([sys.executable, "-m", "testjack_tui.cli", *args], cwd=ROOT,
                          env=dict(os.environ, TESTJACK_HOME=str(home)), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", proc.stdout)
    assert match, proc.stdout[-2000:]
    return match.group(1)


@pytest.fixture(scope="session")
def shipkit_lightweight(tmp_path_factory) -> dict:
    """The lightweight operator audit of shipkit-labelled (`--rounds 2`): {"home", "session_id"}."""
    assert "shipkit" not in SHARED_STARTED, "the shared shipkit audit runs once per session"
    SHARED_STARTED.append("shipkit")
    home = tmp_path_factory.mktemp("tj-shipkit-home")
    return {"home": home, "session_id": shipkit_audit(home, "lightweight", "--rounds", "2")}


# --- Parallel runs (pytest-xdist; the README's test command: `-n 2 --dist loadgroup`) ---------
# A test counts as a podman test by its `podman` mark or by a fixture that needs podman. A session
# fixture is built once per worker, so every reader of one goes to that fixture's group
# (SESSION_FIXTURES): the two demo audits' and deepswe's readers are group "podman-demo" (they
# count only their own sessions' and pids' containers), the language audits' "podman-lang", the
# shipkit audit's "podman-shipkit". Lane
# "podman" (one xdist group, so one worker at a time) keeps every test reading podman state
# others change; each file safe beside
# it (tests/lanes.py SAFE_FILES) is a group of its own; the queue runs lane "podman" first, the
# other groups longest first, the pure tests last (tests/lanes.py says why).
# TESTJACK_TEST_PODMAN_LANES=1 puts every podman test in lane "podman".
SESSION_FIXTURES = {  # built once, read by several files: fixture -> the group of its readers
    "demo_lightweight_audit": "podman-demo", "demo_per_trial_audit": "podman-demo",
    "deepswe_verified": "podman-demo",  # test_ray_backend reads it and the lightweight demo audit
    "lang_audits": "podman-lang",
    # test_labelled_benchmark_e2e and test_operator_judgement (which leaves lane "podman" for it)
    "shipkit_lightweight": "podman-shipkit"}
PODMAN_FIXTURES = {"podman_calls", "own_podman_service", *SESSION_FIXTURES}


def podman_lane(item) -> str | None:
    """The xdist group of a test: "podman", "podman-<file stem>", or None for a pure test."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if not (item.get_closest_marker("podman") or PODMAN_FIXTURES & fixtures):
        return None
    if os.environ.get("TESTJACK_TEST_PODMAN_LANES", "2") == "1":
        return PINNED
    shared = {SESSION_FIXTURES[name] for name in SESSION_FIXTURES.keys() & fixtures}
    assert len(shared) <= 1, f"{item.nodeid} reads session fixtures of two groups: {sorted(shared)}"
    return shared.pop() if shared else group_of(item.path.name)


def files_with_readers(items) -> dict[str, str]:
    """file name -> the group of its session fixture's readers, for a file not safe on its own
    (group_of: lane "podman") holding some: its other podman tests go there too, so a module
    fixture (a Ray cluster, an audit several tests read) is built on one worker, once."""
    found: dict[str, str] = {}
    for item in items:
        lane = podman_lane(item)
        if lane and lane != PINNED and group_of(item.path.name) == PINNED:
            found.setdefault(item.path.name, lane)
    return found


def pytest_configure(config):
    # The queue order is ours (below): xdist's own reordering would put groups by test count.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    groups, files = {}, defaultdict(set)
    whole = files_with_readers(items)
    for item in items:
        if lane := podman_lane(item):
            lane = whole.get(item.path.name, lane) if lane == PINNED else lane
            item.add_marker(pytest.mark.xdist_group(lane))
            files[lane].add(item.path.name)
        groups[item.nodeid] = lane
    seconds = {lane: group_seconds(names) for lane, names in files.items()}
    # Stable: a group keeps its files' order, a file its tests'.
    items.sort(key=lambda item: queue_position(groups[item.nodeid], seconds.get(groups[item.nodeid], 0.0)))


# --- Counting podman work (tests/podman_count.py) ----------------------------------------------
# `TESTJACK_TEST_COUNT_PODMAN=FILE` counts the containers each test file has created (with xdist,
# each worker counts its own tree) and ends the run with the totals per file, also written to
# FILE as JSON: what sharing a world or a session saves, in counts.
COUNT_FILE = os.environ.get("TESTJACK_TEST_COUNT_PODMAN")
if COUNT_FILE:  # the counter reads podman's event log, which our containers.conf leaves off
    os.environ.setdefault("TESTJACK_PODMAN_EVENTS", "file")
_COUNTER: list = []


def pytest_sessionstart(session):
    import shutil

    if COUNT_FILE and shutil.which("podman"):
        from podman_count import PodmanCounter

        _COUNTER.append(PodmanCounter())
        _COUNTER[0].start()


def pytest_runtest_logstart(nodeid, location):
    if _COUNTER:
        _COUNTER[0].test_started(nodeid)


def pytest_sessionfinish(session):
    if _COUNTER:
        import json

        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(f"{COUNT_FILE}.{worker}").write_text(json.dumps(_COUNTER.pop().stop(), indent=1))


def pytest_terminal_summary(terminalreporter):
    if not COUNT_FILE or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import json

    from podman_count import by_file

    tests: dict[str, int] = {}
    for part in sorted(Path(COUNT_FILE).parent.glob(Path(COUNT_FILE).name + ".*")):
        tests.update(json.loads(part.read_text()))
        part.unlink()
    files = by_file(tests)
    Path(COUNT_FILE).write_text(json.dumps({"files": files, "tests": tests}, indent=1, sort_keys=True))
    terminalreporter.write_sep("=", f"containers created, by file ({sum(files.values())} in all)")
    for name, n in sorted(files.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{n:6d}  {name}")


# --- The heap a worker keeps frozen (TestJackApp.settle_heap) ---------------------------------
# The app freezes the heap once a screen has painted and thaws it only when a screen it froze has
# left. A test's app ends with its screens up, so in a worker every finished test's app stays
# frozen (~40,000 objects, ~6 MB each): once the worker has grown by THAW_AFTER bytes since the
# last thaw, the frozen part is thawed and collected: one collection for many tests instead of one
# per Audit screen. (Its resident size is read, not the frozen count: gc.get_freeze_count walks
# the frozen list, ~50 ms at a million objects.)
THAW_AFTER = 150 << 20
_THAWED_AT = [0]


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def pytest_runtest_teardown(item, nextitem):
    import gc

    if not os.path.exists("/proc/self/statm"):
        return
    resident = _resident_bytes()
    if not _THAWED_AT[0]:  # the worker's size after its first test (collection, imports) is the start
        _THAWED_AT[0] = resident
    elif resident - _THAWED_AT[0] > THAW_AFTER:
        gc.unfreeze()
        gc.collect()
        _THAWED_AT[0] = _resident_bytes()
