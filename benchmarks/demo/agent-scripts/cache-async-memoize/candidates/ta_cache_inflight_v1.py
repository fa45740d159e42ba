import asyncio

from recordkit.cache import memoize


def test_concurrent_calls_share_one_call():
    calls = []

    @memoize()
    async def slow(x):
        calls.append(x)
        await asyncio.sleep(0.05)
        return x + 1

    async def main():
        return await asyncio.gather(slow(1), slow(1), slow(2))

    assert asyncio.run(main()) == [2, 2, 3]
    assert calls == [1, 2]
    assert slow.cache_info().misses == 3
