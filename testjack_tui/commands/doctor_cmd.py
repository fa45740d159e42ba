"""`testjack-tui doctor [--fix] [--quiet]`: can this machine run audits?

Checks podman, the runtime, the API service, a real container with limits and an exec
timeout, the base image (--fix builds it), leftovers, disk space, and the LLM endpoint
config (reported only: the offline scripted mode needs no endpoint). Exit 0 only when the
tool can run.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from testjack_tui.safe_text import echo

if TYPE_CHECKING:
    from testjack_tui.services.diagnostics import Check

MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip", "info": "info"}


def check_llm_config() -> Check:
    from testjack_tui.services.diagnostics import check

    base = os.environ.get("OPENAI_BASE_URL")
    key = os.environ.get("OPENAI_API_KEY")
    try:
        from testjack_tui.config import config_path, load_config
        path = config_path()
        config = load_config() if path.exists() else None
    except Exception as exc:  # a broken config file is the user's to fix; say where
        return check("llm endpoint", "warn", f"config file unreadable: {exc}",
                     "fix the file or delete it; the offline scripted mode still works")
    profiles = list(getattr(config, "profiles", {}) or {}) if config is not None else []
    if profiles:
        return check("llm endpoint", "ok", f"profiles in {path}: {', '.join(profiles)}")
    if base or key:
        parts = [f"OPENAI_BASE_URL={base}" if base else "OPENAI_BASE_URL unset (cloud default)",
                 "OPENAI_API_KEY set" if key else "OPENAI_API_KEY unset"]
        return check("llm endpoint", "ok", "; ".join(parts))
    return check("llm endpoint", "info", "no endpoint configured: agents run in the offline scripted mode",
                 "set OPENAI_BASE_URL/OPENAI_API_KEY (vLLM, Ollama, llama.cpp work) or add a profile to "
                 f"the config file {path}")


def _configured_ray_address() -> str | None:
    try:
        from testjack_tui.config import load_config

        return load_config().ray_address
    except Exception:  # noqa: BLE001 - reported by the llm endpoint check
        return None


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(
        fix: Annotated[bool, typer.Option("--fix", help="build the base image, remove leftovers")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="print only problems")] = False,
        prune: Annotated[str | None, typer.Option(
            "--prune", metavar="TASK|all",
            help="remove this TESTJACK_HOME's cached world snapshots of tasks whose id starts with "
                 "TASK ('all': every one); snapshots in use are kept")] = None,
        older_than: Annotated[float | None, typer.Option(
            "--older-than", metavar="DAYS", help="with --prune: only snapshots older than DAYS")] = None,
        backend: Annotated[str, typer.Option(
            help="local: this machine; ray: every node of the Ray cluster (podman, base image, disk)")] = "local",
        ray_address: Annotated[str | None, typer.Option(
            "--ray-address", help="the Ray cluster (default: [sandbox] ray_address, RAY_ADDRESS, auto)")] = None,
    ) -> None:
        """Check that podman, the sandbox and the configuration can run audits."""
        from testjack_tui.services.diagnostics import machine_checks
        from testjack_tui.services.verification import backend_names

        if backend not in backend_names():
            echo(f"error: --backend: must be one of {', '.join(backend_names())}, got {backend!r}", err=True)
            raise typer.Exit(2)

        if prune is not None:
            from testjack_tui.services.diagnostics import prune_world_snapshots

            removed, kept = prune_world_snapshots("" if prune == "all" else prune,
                                                  older_than * 24 if older_than is not None else None)
            echo(f"pruned {len(removed)} world snapshot(s)"
                       + (f"; {len(kept)} in use by containers were kept" if kept else ""))

        def log(message: str) -> None:
            echo(f"doctor: {message}", err=True)

        if backend == "ray":
            from testjack_tui.services.diagnostics import cluster_checks

            checks = cluster_checks(ray_address or _configured_ray_address())
        else:
            checks = machine_checks(fix=fix, log=log)
        checks.append(check_llm_config())
        failed = [c for c in checks if c.status == "fail"]
        for check in checks:
            if quiet and check.status in ("ok", "skip", "info"):
                continue
            echo(f"[{MARK.get(check.status, check.status)}] {check.name}: {check.detail}")
            if check.hint and check.status != "ok":
                echo(f"       fix: {check.hint}")
        if not quiet:
            echo("ready: the sandbox can run audits" if not failed
                       else f"not ready: {len(failed)} check(s) failed")
        raise typer.Exit(1 if failed else 0)
