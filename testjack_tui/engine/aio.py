"""asyncio helpers for the engine."""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Iterable

from .roles import BudgetExceeded


async def gather_all(aws: Iterable[Awaitable[Any]]) -> list[Any]:
    """Run awaitables concurrently and let every one finish before raising.

    Plain `gather` raises at the first error and leaves the others running unobserved; here each
    finished step is stored before the error surfaces. A budget stop wins over other errors so
    the session pauses cleanly (the other error will reappear on resume if it is real).
    """
    results = await asyncio.gather(*aws, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    for err in errors:
        if isinstance(err, asyncio.CancelledError):
            raise err
    for err in errors:
        if isinstance(err, BudgetExceeded):
            raise err
    if errors:
        raise errors[0]
    return results
