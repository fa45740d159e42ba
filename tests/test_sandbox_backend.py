"""The sandbox interface: both backends implement it with the same signatures, and the session
picks the backend its config names."""
from __future__ import annotations

import inspect

import pytest

from sandbox import Sandbox
from sandbox.backend import LiveWorldHandle, SandboxBackend, make_backend
from sandbox.core import LiveWorld
from testjack_tui.engine.config import SessionConfig
from testjack_tui.errors import InputError

OPERATIONS = ("prepare", "run_tests", "exec", "open", "remove", "sweep", "__aenter__", "__aexit__")


def _params(fn) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_local_sandbox_is_a_backend_with_the_protocol_signatures():
    sb = make_backend("local", session="t")
    assert isinstance(sb, Sandbox) and isinstance(sb, SandboxBackend)
    for name in OPERATIONS:
        assert _params(getattr(SandboxBackend, name)) == _params(getattr(Sandbox, name)), name
    for name in ("exec", "read_file", "write_file", "list_files", "run_tests"):
        assert _params(getattr(LiveWorldHandle, name)) == _params(getattr(LiveWorld, name)), name


def test_unknown_backend_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown sandbox backend 'k8s'"):
        make_backend("k8s")
    with pytest.raises(InputError, match="backend"):
        SessionConfig(benchmark="b", backend="k8s").validate()


def test_backend_choice_survives_the_stored_config():
    cfg = SessionConfig(benchmark="b", backend="ray", ray_address="auto").validate()
    again = SessionConfig.from_dict(cfg.to_dict())
    assert (again.backend, again.ray_address) == ("ray", "auto")
    assert SessionConfig.from_dict({"benchmark": "b"}).backend == "local"  # sessions from before
