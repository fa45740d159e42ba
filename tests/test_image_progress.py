"""Image builds are visible while they happen: a toolchain image (the demo's JavaScript task needs
the Node one, apt-get from Debian's mirror) takes minutes on first use, and a silent audit that
long looks hung. The sandbox's build log becomes an `ImageProgress` event that the headless
printer shows without --verbose and the TUI shows in its log.
"""
from __future__ import annotations

import io

from testjack_tui.commands.audit_cmd import ProgressPrinter
from testjack_tui.engine.events import ImageProgress
from testjack_tui.tui.live_state import LiveSession
from testjack_tui.compose import session_deps

MESSAGE = "building localhost/testjack-toolchain-node:bookworm: apt-get install nodejs npm (a few minutes)"


def test_headless_audit_prints_image_builds_without_verbose():
    out = io.StringIO()
    ProgressPrinter(out=out)(ImageProgress("s1", message=MESSAGE))
    assert out.getvalue().rstrip().endswith(f"image: {MESSAGE}")


def test_tui_log_shows_image_builds():
    live = LiveSession("s1")
    live.apply(ImageProgress("s1", message=MESSAGE))
    assert live.log[-1] == ("info", MESSAGE)


def test_an_audit_session_hears_its_sandboxs_image_builds():
    from conftest import DEMO
    from testjack_tui.engine.config import SessionConfig
    from testjack_tui.engine.session import AuditSession

    session = AuditSession.create(SessionConfig(benchmark=str(DEMO)), session_deps())
    seen: list = []
    session.subscribe(seen.append)
    sandbox = session._sandbox()  # the local podman backend an audit runs on (not entered)
    sandbox.log(MESSAGE)  # what sandbox/images.py says while it builds, from a worker thread
    assert [e.message for e in seen if isinstance(e, ImageProgress)] == [MESSAGE]
