"""Keep tracebacks off the screen.

Textual stops a widget's message loop after an unhandled exception in one of its handlers, so
letting errors reach the app would freeze that widget. Handlers and actions that touch data
from outside (benchmarks, the engine, files) are wrapped with `guarded`: the error becomes a
notification and the details go to the log.
"""
from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable, Coroutine, ParamSpec, Protocol, TypeVar, overload, runtime_checkable

from textual.message_pump import MessagePump

if TYPE_CHECKING:
    from testjack_tui.engine.session import AuditSession

P = ParamSpec("P")
R = TypeVar("R")


@runtime_checkable
class ErrorReporter(Protocol):
    """What screens ask of the app (TestJackApp, tui/app.py) to show an error in one line."""

    def report_error(self, error: BaseException, context: str = "", title: str = "Error") -> None: ...

    def notify_error(self, message: str, title: str = "Error") -> None: ...


def reporter(node: MessagePump) -> ErrorReporter:
    """The app `node` runs in, as the one that shows errors (screens cannot import the app: it
    imports them)."""
    app = node.app
    if not isinstance(app, ErrorReporter):
        raise TypeError(f"{type(app).__name__} does not report errors (not a TestJackApp)")
    return app


@overload
def guarded(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R | None]]: ...
@overload
def guarded(fn: Callable[P, R]) -> Callable[P, R | None]: ...


def guarded(fn: Callable[P, Any]) -> Callable[P, Any]:
    """`fn`, a handler or action of a widget or screen (its first argument), with any Exception
    it raises reported by the app instead (the call then returns None)."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - shown to the user, logged in full
                reporter(_node(args)).report_error(error, context=fn.__qualname__)
        return wrapper

    @functools.wraps(fn)
    def sync_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001
            reporter(_node(args)).report_error(error, context=fn.__qualname__)
    return sync_wrapper


def _node(args: tuple[object, ...]) -> MessagePump:
    node = args[0] if args else None
    if not isinstance(node, MessagePump):
        raise TypeError(f"guarded handlers are methods of a widget or screen, got {node!r}")
    return node


@runtime_checkable
class SessionHost(Protocol):
    """What the Audit screen asks of the app (TestJackApp): the session it drives (the app stops
    it on quit) and a settle of the heap once a live session's long-lived part is built."""

    session: AuditSession | None

    def settle_heap(self, collect: bool = True) -> None: ...


def session_host(node: MessagePump) -> SessionHost:
    """The app `node` runs in, as the holder of the live session (see `reporter`)."""
    app = node.app
    if not isinstance(app, SessionHost):
        raise TypeError(f"{type(app).__name__} holds no session (not a TestJackApp)")
    return app
