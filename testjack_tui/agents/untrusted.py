"""Keeping untrusted text in its place.

Trial content (the diff, files and output of the model world, test names, comments) was
written by the agent under audit and may try to steer the auditor. It reaches a model only
inside a fence with a random boundary the trial cannot guess, and the prompts say fenced
text is data. Task-analysis repair feedback is reduced to test names and assertion
messages, with everything that could reveal G removed.
"""
from __future__ import annotations

import re
import secrets

from testjack_tui.diffs import touched_files
from testjack_tui.engine.assertion_lines import runner_hint

OPEN_TAG = "untrusted-trial-data"


class Fence:
    def __init__(self, boundary: str | None = None):
        self.boundary = boundary or secrets.token_hex(8)

    def wrap(self, text: str, source: str) -> str:
        # The boundary is random per session; scrub it anyway so no text can close the fence.
        safe = payload_safe(text).replace(self.boundary, "[boundary removed]")
        return (f'<{OPEN_TAG} boundary="{self.boundary}" source="{fence_label(source)}">\n{safe}\n'
                f'</{OPEN_TAG} boundary="{self.boundary}">')


_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")


def payload_safe(text: str) -> str:
    """Text as it ran, minus what a JSON/HTTP payload cannot carry: NULs (servers cut strings
    at them) and lone surrogates (undecodable bytes; not UTF-8). Everything else, `<`, `>`,
    quotes, escapes, reaches the model unchanged: the terminal sanitiser is for terminals."""
    return _UNSENDABLE.sub(lambda m: "\\x00" if m.group(0) == "\x00" else "\ufffd", text)


def fence_label(source: str, limit: int = 100) -> str:
    """A fence's `source` label as readable text: one line, no double quotes, no tag brackets."""
    text = " ".join(str(source).split())
    text = text.replace('"', "'").replace("<", "‹").replace(">", "›")
    text = "".join(ch for ch in text if ch.isprintable())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def cap_output(text: str, limit: int) -> str:
    """Keep the head and the tail of long output; the middle is the least informative part."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def patch_paths(patch: str | None) -> set[str]:
    """Files a unified diff touches (the one diff parser, `testjack_tui.diffs`)."""
    return set(touched_files(patch))


_KEEP = re.compile(
    r"^(?:FAILED|ERROR|PASSED|XFAIL|XPASS|SKIPPED)\b"  # pytest summary lines: test id + message
    r"|^E\s"  # assertion explanation lines
    r"|^(?:AssertionError|assert)\b"
    r"|^[\w./-]+::\S+\s+(?:passed|failed|error|skipped|timed_out|not_found)\b"  # our outcome lines
)


def sanitize_reference_feedback(feedback: str, reference_patch: str | None, limit: int = 4000) -> str:
    """What a solution-blind agent may learn from a run on the reference world.

    Only test names and assertion messages survive. Paths of files G changes are masked,
    and lines that look like code or diff hunks are dropped, so the reference cannot leak.
    """
    hidden = sorted(patch_paths(reference_patch), key=len, reverse=True)
    added_code = {line[1:].strip() for line in (reference_patch or "").splitlines()
                  if line.startswith("+") and not line.startswith("+++") and len(line.strip()) > 3}
    kept: list[str] = []
    for raw in feedback.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or not _KEEP.search(stripped):
            continue
        body = stripped[1:].strip() if stripped.startswith("E ") else stripped
        if body in added_code or runner_hint(body):
            continue
        for path in hidden:
            line = line.replace(path, "<implementation file>")
            base = path.rsplit("/", 1)[-1]
            if len(base) > 3:
                line = re.sub(rf"\b{re.escape(base)}\b", "<implementation file>", line)
        kept.append(line)
    text = "\n".join(kept) or "(the run on a valid implementation failed; no assertion message was captured)"
    if len(text) <= limit:
        return text
    head = text[:limit].rsplit("\n", 1)[0]
    return f"{head}\n[cut: {len(text.splitlines()) - len(head.splitlines())} more lines of this feedback]"
