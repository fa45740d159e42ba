"""What every role is told about how its turns run: the time limit of one request and the
order of several tool calls in one turn. A model that does not know them plans long silent
replies (and is retried) or calls tools in parallel expecting independent results."""
from __future__ import annotations

from .chat import ChatModel
from .toolbox import MAX_TIMEOUT


def limits_note(model: ChatModel) -> str:
    """The system message's last section, from the endpoint profile the role runs on."""
    timeout = getattr(getattr(model, "profile", None), "timeout", None)
    lines = ["## How your turns run", ""]
    if timeout:
        lines.append(f"- Each request to you has a time limit of {float(timeout):g} s: when no part of "
                     "your reply has arrived by then, the request is abandoned and sent again. Start "
                     "replying promptly; split long work over several turns.")
    lines += [
        "- Several tool calls in one turn run one after another, in the order you list them: a later "
        "call sees what an earlier one did (a file written, a command's effects). Calls after a "
        "`submit` that was accepted are not run.",
        f"- A `run` command stops at its `timeout` (60 s unless you ask for more, at most "
        f"{MAX_TIMEOUT:g} s) and its output says so."]
    return "\n".join(lines) + "\n"
