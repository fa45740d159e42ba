import asyncio

from recordkit.cache import memoize


def test_second_call_reuses_result():
    calls = []

    @memoize()
    async def get(x):
        calls.append(x)
        return x * 3

    async def main():
        return [await get(2), await get(2)]

    assert asyncio.run(main()) == [6, 6]
    assert calls == [2]


def test_parallel_callers_share_the_call():
    calls = []

    @memoize()
    async def get(x):
        calls.append(x)
        await asyncio.sleep(0.01)
        return x

    async def main():
        return await asyncio.gather(get(5), get(5))

    assert asyncio.run(main()) == [5, 5]
    assert calls == [5]
