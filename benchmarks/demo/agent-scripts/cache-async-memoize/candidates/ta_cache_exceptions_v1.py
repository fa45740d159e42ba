import asyncio

import pytest

from recordkit.cache import memoize


def test_failed_call_is_retried():
    attempts = []

    @memoize()
    async def flaky(x):
        attempts.append(x)
        if len(attempts) == 1:
            raise ConnectionError("first try fails")
        return x

    async def main():
        with pytest.raises(ConnectionError):
            await flaky(1)
        return await flaky(1)

    assert asyncio.run(main()) == 1
    assert attempts == [1, 1]


def test_sync_failed_call_is_retried():
    attempts = []

    @memoize()
    def flaky(x):
        attempts.append(x)
        if len(attempts) == 1:
            raise ConnectionError("first try fails")
        return x

    with pytest.raises(ConnectionError):
        flaky(1)
    assert flaky(1) == 1
