import pytest

from recordkit.cache import TTLCache, memoize


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def test_get_and_set():
    cache = TTLCache()
    cache.set("a", 1)
    assert cache.get("a") == 1
    assert cache.get("b", "none") == "none"
    assert "a" in cache and "b" not in cache


def test_lru_eviction():
    cache = TTLCache(maxsize=2)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.get("a")
    cache.set("c", 3)
    assert "a" in cache and "c" in cache and "b" not in cache


def test_entries_expire():
    clock = FakeClock()
    cache = TTLCache(ttl=10, clock=clock)
    cache.set("a", 1)
    clock.advance(9.9)
    assert cache.get("a") == 1
    clock.advance(0.1)
    assert cache.get("a") is None
    assert len(cache) == 0


def test_invalid_maxsize():
    with pytest.raises(ValueError):
        TTLCache(maxsize=0)


def test_memoize_calls_once_per_key():
    calls = []

    @memoize()
    def square(x):
        calls.append(x)
        return x * x

    assert square(3) == 9
    assert square(3) == 9
    assert square(4) == 16
    assert calls == [3, 4]


def test_memoize_keyword_arguments():
    calls = []

    @memoize()
    def f(a, b=0):
        calls.append((a, b))
        return a + b

    assert f(1, b=2) == 3
    assert f(1, b=2) == 3
    assert calls == [(1, 2)]


def test_memoize_ttl():
    clock = FakeClock()
    calls = []

    @memoize(ttl=5, clock=clock)
    def f(x):
        calls.append(x)
        return x

    f(1)
    clock.advance(5)
    f(1)
    assert calls == [1, 1]


def test_memoize_keeps_metadata():
    @memoize()
    def documented():
        """Docs."""

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "Docs."
