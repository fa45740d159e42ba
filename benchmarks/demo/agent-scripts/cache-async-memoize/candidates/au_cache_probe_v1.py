import asyncio
import inspect

from recordkit.cache import memoize


def test_plain_function_statistics_and_maxsize():
    @memoize(maxsize=2, ttl=60)
    def f(x):
        return x

    f(1), f(1), f(2), f(3)
    assert f.cache_info() == (1, 3, 2, 2)


def test_coroutine_function_full_behaviour():
    calls = []

    @memoize(maxsize=4)
    async def g(x):
        calls.append(x)
        await asyncio.sleep(0.01)
        return -x

    async def main():
        first = await asyncio.gather(g(1), g(1))
        second = await g(1)
        return first, second

    assert inspect.iscoroutinefunction(g)
    assert asyncio.run(main()) == ([-1, -1], -1)
    assert calls == [1]
    assert g.cache_info().maxsize == 4
    assert g.cache_info().currsize == 1
    g.cache_clear()
    assert g.cache_info() == (0, 0, 4, 0)
