import asyncio

from recordkit.cache import memoize


def test_async_second_await_returns_cached_value():
    calls = []

    @memoize()
    async def get(x):
        calls.append(x)
        return x * 3

    async def main():
        return [await get(2), await get(2)]

    assert asyncio.run(main()) == [6, 6]
    assert calls == [2]
