"""A small in-memory usage ledger, for tests and for runs without an engine ledger.

It implements roles.Ledger: check() before each LLM request, record() after it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from testjack_tui.engine.roles import BudgetExceeded


@dataclass
class LedgerEntry:
    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    usd: float
    estimated: bool
    call_id: str = ""
    task_id: str = ""
    trial_id: str | None = None


@dataclass
class MemoryLedger:
    usd_limit: float | None = None
    tokens_limit: int | None = None
    entries: list[LedgerEntry] = field(default_factory=list)
    checks: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def usd(self) -> float:
        return sum(e.usd for e in self.entries)

    @property
    def tokens(self) -> int:
        return sum(e.prompt_tokens + e.completion_tokens for e in self.entries)

    @property
    def estimated(self) -> bool:
        return any(e.estimated for e in self.entries)

    def check(self, role: str, model: str, max_tokens: int | None = None) -> None:
        with self._lock:
            self.checks += 1
            if self.usd_limit is not None and self.usd >= self.usd_limit:
                raise BudgetExceeded("usd", f"budget limit reached: ${self.usd:.4f} of ${self.usd_limit:.4f}")
            if self.tokens_limit is not None and self.tokens + (max_tokens or 0) > self.tokens_limit:
                raise BudgetExceeded("tokens", f"budget limit reached: {self.tokens} of {self.tokens_limit} tokens")

    def record(self, role: str, model: str, prompt_tokens: int, completion_tokens: int,
               usd: float, estimated: bool, call_id: str = "", task_id: str = "",
               trial_id: str | None = None) -> None:
        with self._lock:
            self.entries.append(LedgerEntry(role, model, prompt_tokens, completion_tokens, usd,
                                            estimated, call_id, task_id, trial_id))
