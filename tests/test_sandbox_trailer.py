"""Files in through the exec environment and reports out through a stdout trailer
(sandbox/trailer.py): the splitter on its own, then real test runs in podman."""
from __future__ import annotations

import asyncio
import base64
import json

import pytest

from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.output import OutputCollector
from testjack_tui.sandbox.selftest import tiny_task
from testjack_tui.sandbox.trailer import (INLINE_LIMIT, TrailerSplitter, encode_files, exit_code_of, inline_size,
                                         new_mark)


def _trailer(mark: str, reports: dict) -> bytes:
    body = {"reports": {p: base64.b64encode(d).decode() if d is not None else None
                        for p, d in reports.items()}}
    return mark.encode() + base64.b64encode(json.dumps(body).encode()) + mark.encode() + b"END\n"


def _split(chunks: list[bytes], mark: str) -> tuple[TrailerSplitter, str]:
    seen: list[str] = []
    splitter = TrailerSplitter(OutputCollector("t", seen.append, keep_log=False), mark)
    for chunk in chunks:
        splitter.add(chunk, None)
    splitter.close()
    head, tail = splitter.stdout.texts()
    assert "".join(seen) == head + tail  # the listener sees what is kept, nothing of the trailer
    return splitter, head + tail


@pytest.mark.parametrize("size", [1, 3, 7, 64, 100000])
def test_trailer_is_split_off_at_any_chunking(size):
    mark = new_mark()
    data = b"line one\nno newline at end" + _trailer(mark, {"/tmp/tj/r/junit.xml": b"<xml/>\x00\xff",
                                                           "/tmp/tj/r/progress.jsonl": None})
    splitter, text = _split([data[i:i + size] for i in range(0, len(data), size)], mark)
    assert text == "line one\nno newline at end"
    assert splitter.report["reports"] == {"/tmp/tj/r/junit.xml": b"<xml/>\x00\xff",
                                          "/tmp/tj/r/progress.jsonl": None}
    assert splitter.report["error"] is None


@pytest.mark.parametrize("code, status", [(0, 0), (1, 1), (-9, 137), (None, None), ("1", None), (True, None)])
def test_the_runners_exit_status_comes_with_the_trailer(code, status):
    """The wrapper's trailer carries the runner's exit status: a run as a container's main
    process reads it there instead of asking podman's `wait` (sandbox/main_process.run_main)."""
    mark = new_mark()
    body = json.dumps({"reports": {}, **({} if code is None else {"code": code})}).encode()
    splitter, _ = _split([mark.encode() + base64.b64encode(body) + mark.encode() + b"END\n"], mark)
    assert exit_code_of(splitter.report) == status


def test_output_after_the_trailer_is_kept_and_a_partial_mark_is_not_swallowed():
    mark = new_mark()
    data = b"before " + mark.encode()[:5] + b" after " + _trailer(mark, {}) + b"late output\n"
    splitter, text = _split([data[:9], data[9:20], data[20:]], mark)
    assert text == "before " + mark[:5] + " after late output\n"
    assert splitter.report["reports"] == {} and splitter.report["error"] is None


def test_missing_or_garbled_trailer_leaves_output_whole_and_no_report():
    mark = new_mark()
    splitter, text = _split([b"killed mid-run", mark.encode()[:3]], mark)
    assert text == "killed mid-run" + mark[:3] and splitter.report is None
    cut = mark.encode() + b"abc"  # a mark without END (the writer died): shown, not kept
    splitter, text = _split([b"x", cut], mark)
    assert text.endswith("abc") and splitter.report is None
    garbled = mark.encode() + b"not base64!" + mark.encode() + b"END\n"
    splitter, text = _split([garbled], mark)
    assert "not base64!" in text and splitter.report is None


def test_a_mark_followed_by_endless_output_is_not_buffered(monkeypatch):
    import testjack_tui.sandbox.trailer as trailer
    monkeypatch.setattr(trailer, "TRAILER_CAP", 1000)
    mark = new_mark()
    splitter, text = _split([b"a", mark.encode(), b"x" * 600, b"y" * 600, b"z"], mark)
    assert text == "a" + mark + "x" * 600 + "y" * 600 + "z" and splitter.report is None


def test_inline_size_and_binary_safe_encoding():
    files = {"/a/b.bin": bytes(range(256)), "/a/c.py": "héllo"}
    assert inline_size(files) == len("/a/b.bin") + 256 + len("/a/c.py") + len("héllo".encode())
    decoded = {p: base64.b64decode(v) for p, v in json.loads(encode_files(files)).items()}
    assert decoded == {"/a/b.bin": bytes(range(256)), "/a/c.py": "héllo".encode()}


CHECK_BIN = ("import pathlib\n\ndef test_bin():\n"
             "    assert pathlib.Path('tests/data.bin').read_bytes() == bytes(range(256)) * 4\n"
             "    assert not [k for k in __import__('os').environ if k in ('TJ_FILES', 'TJ_WRAP')]\n")


@pytest.mark.podman
async def test_small_runs_need_no_archive_copies_and_large_ones_fall_back(tmp_path, monkeypatch):
    import testjack_tui.sandbox.testruns as testruns

    copies: list[str] = []
    real_put, real_get = testruns.put_files, testruns.get_dir
    monkeypatch.setattr(testruns, "put_files", lambda c, files, *a, **k: (copies.append("put"), real_put(c, files, *a, **k))[1])
    monkeypatch.setattr(testruns, "get_dir", lambda c, p, *a, **k: (copies.append("get"), real_get(c, p, *a, **k))[1])
    task = tiny_task(tmp_path)
    events = []
    async with Sandbox(listener=events.append, session="t-trailer") as sb:
        ref = await sb.prepare(task, "reference")
        small = {"tests/test_tj_bin.py": CHECK_BIN, "tests/data.bin": bytes(range(256)) * 4}
        run = await sb.run_tests(ref, ["tests/test_tj_bin.py"], files=small)
        assert run.status("tests/test_tj_bin.py::test_bin") == "passed", run.exec.output
        assert copies == []
        assert "TJ-REPORT" not in run.exec.output and "1 passed" in run.exec.output
        streamed = "".join(e.text for e in events if e.kind == "output")
        assert "1 passed" in streamed and "TJ-REPORT" not in streamed
        assert run.exec.argv[1].endswith("pytest_launch.py")  # the runner's command, as before

        pad = "#" * (INLINE_LIMIT // 2)
        big = {f"tests/test_tj_big{i}.py": f"def test_big():\n    assert {i} == {i}\n{pad}\n" for i in range(3)}
        big["tests/data.bin"] = bytes(range(256)) * 4
        big["tests/test_tj_bin.py"] = CHECK_BIN
        run = await sb.run_tests(ref, [p for p in big if p.endswith(".py")], files=big)
        assert copies == ["put", "get"]
        assert all(run.status(f"tests/test_tj_big{i}.py::test_big") == "passed" for i in range(3)), (run.outcomes, run.exec.output)
        assert run.status("tests/test_tj_bin.py::test_bin") == "passed"


HOOK = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    report.outcome = 'passed'\n")


@pytest.mark.podman
async def test_harness_restore_in_the_wrapper_also_when_the_run_times_out_or_is_large(tmp_path):
    from testjack_tui.sandbox.selftest import trial_for

    task = tiny_task(tmp_path)
    trial = trial_for(task, "hook", {"tests/conftest.py": HOOK})
    slow = {"tests/test_tj_s.py": "import time\nfrom calc import add\n\ndef test_w():\n"
                                  "    assert add(2, 2) == 4\n\ndef test_slow():\n    time.sleep(600)\n"}
    async with Sandbox(session="t-trailer-iso") as sb:
        world = await sb.prepare(task, "model", trial)
        assert world.tampered == ("tests/conftest.py",)
        # (15 s: under load the wrapper, the harness restore and pytest's start-up take a while)
        # The large run goes while the slow one waits for its timeout (a container each).
        big = {**slow, "tests/pad.txt": "#" * (INLINE_LIMIT + 1)}
        timed, large = await asyncio.gather(
            sb.run_tests(world, list(slow), files=slow, timeout=15, isolate_harness=True),
            sb.run_tests(world, ["tests/test_tj_s.py::test_w"], files=big, isolate_harness=True))
    assert timed.exec.timed_out and timed.neutralised == ["tests/conftest.py"]
    assert timed.status("tests/test_tj_s.py::test_w") == "failed"  # the hook did not fool it
    assert timed.status("tests/test_tj_s.py::test_slow") == "timed_out"
    assert large.neutralised == ["tests/conftest.py"]
    assert large.status("tests/test_tj_s.py::test_w") == "failed"
