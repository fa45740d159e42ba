"""Keep tracebacks off the screen.

Textual stops a widget's message loop after an unhandled exception in one of its handlers, so
letting errors reach the app would freeze that widget. Handlers and actions that touch data
from outside (benchmarks, the engine, files) are wrapped with `guarded`: the error becomes a
notification and the details go to the log.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable


def guarded(fn: Callable) -> Callable:
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def wrapper(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(self, *args, **kwargs)
            except Exception as error:  # noqa: BLE001 - shown to the user, logged in full
                self.app.report_error(error, context=fn.__qualname__)
        return wrapper

    @functools.wraps(fn)
    def sync_wrapper(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except Exception as error:  # noqa: BLE001
            self.app.report_error(error, context=fn.__qualname__)
    return sync_wrapper
