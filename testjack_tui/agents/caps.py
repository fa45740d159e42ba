"""How far each role may go on one piece of work: model turns (steps) and requests.

Requests count every attempt, retries included, so an endpoint that answers with errors,
broken JSON or chatter ends the role in a bounded number of requests, with one line saying
which role gave up and why. The values are printed at start (`describe_caps`).
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import AgentError


@dataclass(frozen=True)
class Caps:
    steps: int
    requests: int
    per: str  # the piece of work one cap covers


# A real model needed 12-28 requests for a whole task (all roles, all trials), so these leave
# room for honest work and still stop a useless endpoint within one role.
ROLE_CAPS = {
    "task_analysis": Caps(steps=20, requests=28, per="task"),
    "audit": Caps(steps=20, requests=28, per="trial"),
    "reviewer": Caps(steps=6, requests=10, per="candidate"),
    "repair": Caps(steps=8, requests=12, per="repair"),
    "reference": Caps(steps=40, requests=60, per="task"),  # the independent implementer (G′)
    "explainer": Caps(steps=2, requests=4, per="failure pattern"),  # one cheap paragraph
}


def describe_caps(role: str) -> str:
    caps = ROLE_CAPS[role]
    return f"{caps.steps} steps, {caps.requests} requests per {caps.per}"


class RequestCapReached(AgentError):
    """A role sent as many requests as its cap allows for one piece of work."""


@dataclass
class RequestCount:
    """The requests one role has sent for one piece of work, checked before each attempt."""

    role: str
    limit: int
    per: str
    used: int = 0

    @classmethod
    def for_role(cls, role: str) -> "RequestCount":
        caps = ROLE_CAPS[role]
        return cls(role, caps.requests, caps.per)

    def take(self, last_failure: str = "") -> None:
        if self.used >= self.limit:
            why = f"; last failure: {last_failure}" if last_failure else ""
            raise RequestCapReached(f"{self.role} gave up: its {self.limit} requests per {self.per} "
                                    f"(retries included) are spent without a valid result{why}")
        self.used += 1
