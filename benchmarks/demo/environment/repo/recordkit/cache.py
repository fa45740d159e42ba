"""An LRU cache with optional expiry, and a memoizing decorator built on it."""
from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

_MISSING = object()


class TTLCache:
    """Least-recently-used cache; entries older than ``ttl`` seconds are treated as absent.

    ``clock`` returns the current time in seconds; tests pass a fake one.
    """

    def __init__(self, maxsize: int = 128, ttl: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()

    def _expired(self, stored_at: float) -> bool:
        return self.ttl is not None and self._clock() - stored_at >= self.ttl

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return default
        stored_at, value = entry
        if self._expired(stored_at):
            del self._data[key]
            return default
        self._data.move_to_end(key)
        return value

    def set(self, key: Hashable, value: Any) -> None:
        self._data[key] = (self._clock(), value)
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __len__(self) -> int:
        for key in [k for k, (stored_at, _) in self._data.items() if self._expired(stored_at)]:
            del self._data[key]
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()


def _make_key(args: tuple, kwargs: dict) -> Hashable:
    return (args, tuple(sorted(kwargs.items())))


def memoize(maxsize: int = 128, ttl: float | None = None,
            clock: Callable[[], float] = time.monotonic) -> Callable[[Callable], Callable]:
    """Cache a function's results by its (hashable) arguments.

    >>> @memoize(ttl=60)
    ... def lookup(name): ...
    """

    def decorate(fn: Callable) -> Callable:
        cache = TTLCache(maxsize=maxsize, ttl=ttl, clock=clock)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = _make_key(args, kwargs)
            value = cache.get(key, _MISSING)
            if value is _MISSING:
                value = fn(*args, **kwargs)
                cache.set(key, value)
            return value

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorate
