"""Errors the agents raise. Each reads as one line a user can act on."""
from __future__ import annotations

from testjack_tui.errors import InputError


class AgentError(Exception):
    """An agent session could not finish (step limit, endpoint gave up, bad reply)."""


class EndpointError(AgentError):
    """The LLM endpoint is unreachable, rejects the key, or does not know the model."""


class ScriptError(InputError):
    """A recorded agent script is missing, malformed or ran out (scripted offline demo)."""
