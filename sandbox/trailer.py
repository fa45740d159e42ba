"""Files in and reports out through the test exec itself (no archive round trips).

A fresh container per test run made every run pay for a put_archive (candidate files in) and a
get_archive (JUnit report out), about 100 ms each. Instead, small inputs travel in the exec's
environment (base64 JSON, binary-safe) and the reports come back as a trailer the in-container
wrapper writes to stdout after the test process: `<mark><base64 JSON>\\n<mark>END\\n`, where the
mark carries a random nonce per run. `TrailerSplitter` sits between the exec stream and the
output collector and diverts the trailer, so the caller's output (head/tail, log, listener)
is exactly the test process's output. When no complete trailer arrives (timeout, crash,
os._exit, memory kill) the caller falls back to copying the report directory out.
"""
from __future__ import annotations

import base64
import binascii
import json
import secrets

from pathlib import Path
from typing import Any

from .output import HeadTail, OutputCollector

INLINE_LIMIT = 64 * 1024  # total bytes of files passed through the environment; above: put_archive
TRAILER_CAP = 96 * 1024 * 1024  # a mark followed by endless output is given up on, not buffered


def new_mark() -> str:
    return f"\x1eTJ-REPORT-{secrets.token_hex(8)}:"


def encode_files(files: dict[str, str | bytes]) -> str:
    return json.dumps({path: base64.b64encode(data.encode() if isinstance(data, str) else data).decode()
                       for path, data in files.items()})


def inline_size(files: dict[str, str | bytes]) -> int:
    return sum(len(p) + len(d.encode() if isinstance(d, str) else d) for p, d in files.items())


def exit_code_of(report: dict[str, Any] | None) -> int | None:
    """The wrapper's own exit status, from the code its trailer reports for the test process
    (a signal's death as 128 + the signal, as the wrapper exits)."""
    code = (report or {}).get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    return 128 - code if code < 0 else code


class TrailerSplitter:
    """Quacks like OutputCollector for run_exec; stdout bytes from the mark to its END line are
    kept aside (`payload`), everything else goes to the wrapped collector unchanged."""

    def __init__(self, collector: OutputCollector, mark: str):
        self.collector = collector
        self.mark = mark.encode()
        self.end = self.mark + b"END\n"
        self._pending = b""  # stdout not yet forwarded: may hold the start of the mark
        self._trailer: bytearray | None = None
        self._done = False
        self.payload: bytes | None = None
        self.report: dict[str, Any] | None = None  # decoded at close()

    # run_exec reads these after close()
    @property
    def stdout(self) -> HeadTail:
        return self.collector.stdout

    @property
    def stderr(self) -> HeadTail:
        return self.collector.stderr

    @property
    def log_path(self) -> Path | None:
        return self.collector.log_path

    def add(self, stdout: bytes | None, stderr: bytes | None) -> None:
        if stdout:
            self._add_stdout(stdout)
        if stderr:
            self.collector.add(None, stderr)

    def _add_stdout(self, data: bytes) -> None:
        if self._done:
            self.collector.add(data, None)
            return
        if self._trailer is not None:
            self._trailer += data
            self._check_end()
            if self._trailer is not None and len(self._trailer) > TRAILER_CAP:
                self._give_up()
            return
        buf = self._pending + data
        at = buf.find(self.mark)
        if at >= 0:
            self._forward(buf[:at])
            self._pending = b""
            self._trailer = bytearray(buf[at:])
            self._check_end()
            return
        # Hold back a tail that could be the beginning of the mark split over two chunks.
        keep = len(self.mark) - 1
        cut = len(buf)
        for size in range(min(keep, len(buf)), 0, -1):
            if self.mark.startswith(buf[-size:]):
                cut = len(buf) - size
                break
        self._forward(buf[:cut])
        self._pending = buf[cut:]

    def _check_end(self) -> None:
        assert self._trailer is not None
        at = self._trailer.find(self.end)
        if at < 0:
            return
        body = bytes(self._trailer[len(self.mark):at])
        rest = bytes(self._trailer[at + len(self.end):])
        self._trailer = None
        self._done = True
        self.payload = body
        if rest:
            self.collector.add(rest, None)

    def _give_up(self) -> None:
        """Not a report of ours after all: show what was held and pass the rest straight on."""
        held = bytes(self._trailer or b"")
        self._trailer = None
        self._done = True
        self._forward(held)

    def _forward(self, data: bytes) -> None:
        if data:
            self.collector.add(data, None)

    def close(self) -> None:
        if self._pending:
            self._forward(self._pending)
            self._pending = b""
        if self._trailer is not None:  # a mark without its END: not ours to keep, show it
            self._forward(bytes(self._trailer))
            self._trailer = None
        if self.payload is not None:
            self.report = _decode(self.payload)
            if self.report is None:  # garbled (e.g. interleaved with a stray process): show it
                self._forward(self.mark + self.payload + self.end)
        self.collector.close()


def _decode(payload: bytes) -> dict[str, Any] | None:
    """The wrapper's report, or None: {"reports": {path: bytes|None}, "error": str|None (the
    files could not be written), "restored": str|None (the harness restore's output),
    "restore_failed": str|None (its output when it failed), "code": the runner's exit status}."""
    try:
        data = json.loads(base64.b64decode(payload, validate=True))
        reports = {str(path): (base64.b64decode(b64, validate=True) if b64 is not None else None)
                   for path, b64 in (data.get("reports") or {}).items()}
        return {"reports": reports, "error": data.get("error"), "restored": data.get("restored"),
                "restore_failed": data.get("restore_failed"),
                # What the wrapper saw after the runner exited (sandbox/channels.py).
                "survivors": [str(s) for s in data.get("survivors") or []],
                "changed": [str(p) for p in data.get("changed") or []],
                "own": {str(k): v for k, v in (data.get("own") or {}).items()},
                "varied": {str(k): v for k, v in (data.get("varied") or {}).items()},
                # The wrapper's bookkeeping: processes our channels started, CPU seconds.
                "cost": dict(data.get("cost") or {}),
                # The test process's exit status as the wrapper saw it (exit_code_of): the run
                # needs no `wait` round trip to podman for it.
                "code": data.get("code")}
    except (ValueError, binascii.Error, AttributeError, TypeError):
        return None
