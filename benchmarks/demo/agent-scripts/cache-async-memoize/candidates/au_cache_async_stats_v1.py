import asyncio

from recordkit.cache import memoize


def test_coroutine_wrapper_reports_statistics():
    @memoize(maxsize=8)
    async def resolve(host):
        return f"10.0.0.{len(host)}"

    async def main():
        for host in ("a", "a", "bb"):
            await resolve(host)

    asyncio.run(main())
    info = resolve.cache_info()
    assert (info.hits, info.misses, info.maxsize, info.currsize) == (1, 2, 8, 2)
