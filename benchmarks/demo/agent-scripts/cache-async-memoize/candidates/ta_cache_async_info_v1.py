import asyncio

from recordkit.cache import memoize


def test_async_wrapper_has_cache_info_and_clear():
    calls = []

    @memoize()
    async def lookup(name):
        calls.append(name)
        return name.upper()

    async def main():
        await lookup("a")
        await lookup("a")
        await lookup("b")

    asyncio.run(main())
    assert lookup.cache_info() == (1, 2, 128, 2)
    lookup.cache_clear()
    assert lookup.cache_info() == (0, 0, 128, 0)
    asyncio.run(main())
    assert calls == ["a", "b", "a", "b"]
