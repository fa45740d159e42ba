"""The sandbox interface: both backends implement it with the same signatures, and the session
picks the backend its config names."""
from __future__ import annotations

import inspect

import pytest

from testjack_tui.sandbox import Sandbox
from testjack_tui.sandbox.backend import LiveWorldHandle, SandboxBackend, make_backend
from testjack_tui.sandbox.core import LiveWorld
from testjack_tui.engine.config import SessionConfig
from testjack_tui.errors import InputError
from testjack_tui.compose import session_deps

OPERATIONS = ("prepare", "run_tests", "run_official", "exec", "open", "remove", "sweep", "__aenter__",
              "__aexit__")


def _params(fn) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_local_sandbox_is_a_backend_with_the_protocol_signatures():
    sb = make_backend("local", session="t")
    assert isinstance(sb, Sandbox) and isinstance(sb, SandboxBackend)
    for name in OPERATIONS:
        assert _params(getattr(SandboxBackend, name)) == _params(getattr(Sandbox, name)), name
    for name in ("exec", "read_file", "write_file", "list_files", "run_tests"):
        assert _params(getattr(LiveWorldHandle, name)) == _params(getattr(LiveWorld, name)), name


def test_ray_backend_has_the_protocol_signatures():
    from testjack_tui.sandbox.ray_backend import RayBackend
    from testjack_tui.sandbox.ray_backend.backend import RemoteLiveWorld

    backend = make_backend("ray", session="t", ray_address="auto")  # not entered: no cluster needed
    assert isinstance(backend, RayBackend) and isinstance(backend, SandboxBackend)
    for name in OPERATIONS:
        assert _params(getattr(SandboxBackend, name)) == _params(getattr(RayBackend, name)), name
    for name in ("exec", "read_file", "write_file", "list_files", "run_tests"):
        assert _params(getattr(LiveWorldHandle, name)) == _params(getattr(RemoteLiveWorld, name)), name


def test_task_files_travel_in_the_bundle_and_keep_the_image_tag(tmp_path):
    from pathlib import Path

    from testjack_tui.benchmarks import load_benchmark
    from conftest import DEMO
    from testjack_tui.sandbox.images import context_hash
    from testjack_tui.sandbox.ray_backend.bundle import pack_task, unpack_task

    task = load_benchmark(DEMO).tasks["cache-async-memoize"]
    there = unpack_task(pack_task(task), tmp_path / "node")
    env, mine = there.environment, task.environment
    assert Path(env.containerfile).is_relative_to(tmp_path) and Path(env.context).is_relative_to(tmp_path)
    # Same content hash on the node: it builds (or finds) the image under the operator's tag.
    assert context_hash(Path(env.containerfile), Path(env.context)) == \
        context_hash(Path(mine.containerfile), Path(mine.context))
    assert (there.instruction, there.reference, there.tests.test_patch) == \
        (task.instruction, task.reference, task.tests.test_patch)


def test_unknown_backend_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown sandbox backend 'k8s'"):
        make_backend("k8s")
    with pytest.raises(InputError, match="backend"):
        SessionConfig(benchmark="b", backend="k8s").validate()


def test_backend_choice_survives_the_stored_config():
    cfg = SessionConfig(benchmark="b", backend="ray", ray_address="auto").validate()
    again = SessionConfig.from_dict(cfg.to_dict())
    assert (again.backend, again.ray_address) == ("ray", "auto")
    assert SessionConfig.from_dict({"benchmark": "b"}).backend_name == "local"  # sessions from before


def test_config_file_sandbox_table_sets_the_default_backend(tmp_path):
    from testjack_tui.config import load_config
    from testjack_tui.engine.session import AuditSession

    path = tmp_path / "config.toml"
    path.write_text('[sandbox]\nbackend = "ray"\nray_address = "ray://head:10001"\n')
    config = load_config(path)
    assert (config.backend, config.ray_address) == ("ray", "ray://head:10001")
    session = AuditSession.create(SessionConfig(benchmark="b"), session_deps(app_config=config))
    stored = SessionConfig.from_dict(session.store.get_meta("config"))
    assert (stored.backend, stored.ray_address) == ("ray", "ray://head:10001")  # resume keeps it
    explicit = AuditSession.create(SessionConfig(benchmark="b", backend="local"),
                                   session_deps(app_config=config))
    assert explicit.config.backend == "local"

    path.write_text('[sandbox]\nbackend = "kubernetes"\n')
    with pytest.raises(InputError) as err:
        load_config(path)
    assert str(path) in str(err.value) and "sandbox.backend" in str(err.value)


def test_headless_progress_names_the_node_of_each_world_once_per_move():
    import io

    from testjack_tui.commands.audit_cmd import ProgressPrinter
    from testjack_tui.engine.events import WorldState

    out = io.StringIO()
    printer = ProgressPrinter(out=out)
    for node, state in (("10.0.0.7/aaaaaa", "created"), ("10.0.0.7/aaaaaa", "running"),
                        ("10.0.0.8/bbbbbb", "running")):
        printer(WorldState("s", world="t/model/x", container="c1", state=state, node=node))
    printer(WorldState("s", world="t/model/x", container="", state="removed", node="10.0.0.7/aaaaaa",
                       text="node 10.0.0.7/aaaaaa lost (ActorDiedError); its runs in flight are retried"))
    printer(WorldState("s", world="t/null", container="c2", state="running"))  # local: no node lines
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines == ["world t/model/x on node 10.0.0.7/aaaaaa", "world t/model/x on node 10.0.0.8/bbbbbb",
                     "warning: node 10.0.0.7/aaaaaa lost (ActorDiedError); its runs in flight are retried"]


def test_cli_rejects_an_unknown_backend_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from testjack_tui.cli import app
    from conftest import DEMO

    result = CliRunner().invoke(app, ["audit", str(DEMO), "--headless", "--auto-approve", "--backend", "k8s"])
    assert result.exit_code == 2
    assert "backend" in result.output and "k8s" in result.output
    result = CliRunner().invoke(app, ["verify", str(DEMO), "--backend", "k8s"])
    assert result.exit_code == 2 and "--backend" in result.output and "k8s" in result.output
    result = CliRunner().invoke(app, ["doctor", "--backend", "k8s"])
    assert result.exit_code == 2 and "--backend" in result.output
