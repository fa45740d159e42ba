"""The session's usage ledger and budget guard (implements roles.Ledger).

Checked before every spend: an LLM request (agents call `check` then `record`), a test
execution (`reserve_test_runs`), a new round. When a limit would be passed it raises
BudgetExceeded; the session then pauses cleanly and resumes after `raise_limits`.
Usage lives in the session's database, so limits hold across resumes.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Sequence, TYPE_CHECKING

from .config import BudgetLimits
from .events import BudgetChanged
from .roles import BudgetExceeded
from .store import SessionStore

if TYPE_CHECKING:
    from testjack_tui.config import Config

# Optional: an upper bound on what one request can cost, (model, max_tokens) -> usd.
# (model, max completion tokens, prompt tokens) -> the most the call can cost, None if unknown
PriceBound = Callable[[str, int | None, int], float | None]
# Models that answered with no price configured (the session's meta, so resumes keep it):
# their spend is unknown, shown as "unpriced", never as $0.
UNPRICED = "unpriced_models"


def usd_text(usd: float, unpriced: Sequence[str] = (), digits: int = 4) -> str:
    """Spend as people read it: "$0.0123", "unpriced" when no call had a price, and
    "$0.0123 + unpriced" when some had none."""
    if not unpriced:
        return f"${usd:.{digits}f}"
    return "unpriced" if usd == 0 else f"${usd:.{digits}f} + unpriced"


class Budget:
    def __init__(self, store: SessionStore, limits: BudgetLimits, session_id: str,
                 emit: Callable[[object], None] | None = None, price_bound: PriceBound | None = None):
        self.store = store
        self.limits = limits
        self.session_id = session_id
        self.emit = emit or (lambda event: None)
        self.price_bound = price_bound
        self._lock = threading.RLock()
        totals = store.ledger_totals()
        self.usd = totals.usd
        self.tokens = totals.tokens
        self.estimated = totals.estimated
        self.unpriced: list[str] = list(store.get_meta(UNPRICED, []) or [])
        # Runs stored by earlier processes, and runs that were in flight when one was killed:
        # every reservation is written down before the run starts.
        self.test_runs = store.runs_counted()
        self._stored_seconds = float(store.get_meta("elapsed_seconds", 0.0) or 0.0)
        self._started: float | None = None
        # Of that wall time, how long a person was awaited (a decision, a step gate, a pause):
        # it counts against --budget-seconds like the rest, and is shown beside it.
        self._stored_waiting = float(store.get_meta("waiting_seconds", 0.0) or 0.0)
        self._waiting_since: float | None = None
        # The largest prompt seen so far stands in for the next one when bounding a call's cost.
        self.largest_prompt = store.largest_prompt()

    # -- wall time ----------------------------------------------------------------------------
    def start_clock(self) -> None:
        with self._lock:
            if self._started is None:
                self._started = time.monotonic()

    def stop_clock(self) -> None:
        with self._lock:
            self.set_waiting(0)
            self._stored_seconds = self.seconds
            self._started = None
            self.store.set_meta("elapsed_seconds", self._stored_seconds)

    def set_waiting(self, open_waits: int) -> None:
        """Some wait for a person opened (n > 0) or the last one closed (0)."""
        with self._lock:
            if open_waits and self._waiting_since is None:
                self._waiting_since = time.monotonic()
            elif not open_waits and self._waiting_since is not None:
                self._stored_waiting += time.monotonic() - self._waiting_since
                self._waiting_since = None
                self.store.set_meta("waiting_seconds", self._stored_waiting)

    @property
    def waiting_seconds(self) -> float:
        """The part of `seconds` during which at least one wait for a person was open."""
        since = self._waiting_since
        return self._stored_waiting + (time.monotonic() - since if since is not None else 0.0)

    @property
    def seconds(self) -> float:
        running = time.monotonic() - self._started if self._started is not None else 0.0
        return self._stored_seconds + running

    def seconds_left(self) -> float | None:
        """Wall time left under the limit (None: no limit)."""
        return None if self.limits.seconds is None else self.limits.seconds - self.seconds

    def save_clock(self) -> None:
        """Persist elapsed time so a killed process loses little of it."""
        self.store.set_meta("elapsed_seconds", self.seconds)
        self.store.set_meta("waiting_seconds", self.waiting_seconds)

    # -- guards -------------------------------------------------------------------------------
    def _check_common(self) -> None:
        lim = self.limits
        if lim.seconds is not None and self.seconds >= lim.seconds:
            raise BudgetExceeded("seconds", f"wall-time limit reached: {self.seconds:.0f}s of {lim.seconds:.0f}s")

    def check(self, role: str, model: str, max_tokens: int | None = None) -> None:
        """Before an LLM request: raise BudgetExceeded when it could pass a limit."""
        with self._lock:
            self._check_common()
            lim = self.limits
            if lim.tokens is not None:
                if self.tokens >= lim.tokens or (max_tokens and self.tokens + max_tokens > lim.tokens):
                    raise BudgetExceeded("tokens", f"token limit reached: {self.tokens} of {lim.tokens}")
            if lim.usd is not None:
                bound = self.price_bound(model, max_tokens, self.largest_prompt) if self.price_bound else None
                if self.usd >= lim.usd or (bound is not None and self.usd + bound > lim.usd):
                    raise BudgetExceeded("usd", f"spend limit reached: ${self.usd:.4f} of ${lim.usd:.4f}")

    def record(self, role: str, model: str, prompt_tokens: int, completion_tokens: int,
               usd: float, estimated: bool, call_id: str = "", task_id: str = "",
               trial_id: str | None = None) -> None:
        with self._lock:
            self.store.add_ledger(role, model, prompt_tokens, completion_tokens, usd, estimated,
                                  call_id, task_id, trial_id)
            self.usd += usd
            self.largest_prompt = max(self.largest_prompt, prompt_tokens)
            self.tokens += prompt_tokens + completion_tokens
            self.estimated = self.estimated or estimated
            if (not usd and prompt_tokens + completion_tokens and model not in self.unpriced
                    and (self.price_bound is None or self.price_bound(model, 1, 0) is None)):
                self.unpriced.append(model)
                self.store.set_meta(UNPRICED, self.unpriced)
        self.save_clock()
        self.announce()

    def reserve_test_runs(self, n: int = 1) -> None:
        """Before n test executions: count them, or raise when they would pass the limit."""
        with self._lock:
            self._check_common()
            lim = self.limits
            if lim.test_runs is not None and self.test_runs + n > lim.test_runs:
                raise BudgetExceeded("test_runs", f"test-run limit reached: {self.test_runs} of {lim.test_runs}")
            self.test_runs += n
            self.store.set_meta("test_runs_reserved", self.test_runs)
        self.announce()

    def check_round(self) -> None:
        """Before starting an agent session: any spend limit already reached stops it."""
        with self._lock:
            self._check_common()
            lim = self.limits
            if lim.usd is not None and self.usd >= lim.usd:
                raise BudgetExceeded("usd", f"spend limit reached: ${self.usd:.4f} of ${lim.usd:.4f}")
            if lim.tokens is not None and self.tokens >= lim.tokens:
                raise BudgetExceeded("tokens", f"token limit reached: {self.tokens} of {lim.tokens}")

    def raise_limits(self, **values: float | int | None) -> None:
        with self._lock:
            for name, value in values.items():
                if not hasattr(self.limits, name):
                    raise ValueError(f"unknown budget limit {name!r}")
                setattr(self.limits, name, value)
        self.announce()

    def announce(self) -> None:
        self.emit(self.snapshot())

    def snapshot(self) -> BudgetChanged:
        lim = self.limits
        return BudgetChanged(self.session_id, usd=round(self.usd, 6), usd_limit=lim.usd,
                             tokens=self.tokens, tokens_limit=lim.tokens,
                             seconds=round(self.seconds, 1), seconds_limit=lim.seconds,
                             waiting_seconds=round(self.waiting_seconds, 1),
                             test_runs=self.test_runs, test_runs_limit=lim.test_runs,
                             estimated=self.estimated, unpriced=tuple(self.unpriced))


def price_bound_from(config: Config | None) -> PriceBound:
    """Bound a call's cost with the config's pricing table, so one call cannot pass the USD limit."""

    def bound(model: str, max_tokens: int | None, prompt_tokens: int) -> float | None:
        price = config.price(model) if config is not None else None
        if price is None or not max_tokens:
            return None
        return price.cost(prompt_tokens, max_tokens)

    return bound
