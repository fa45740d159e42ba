"""Sweeping our containers: leftovers of crashed processes at start-up, our own at exit.

Every container carries `testjack.app=testjack-tui` and its owner's pid and start time. A
container whose owner is dead is a leftover and goes; a live process's containers are left
alone, so concurrent processes do not kill each other's work.
"""
from __future__ import annotations

import os

from podman import PodmanClient
from podman.domain.containers import Container

from .containers import remove_container
from .labels import APP_FILTER, L_PID, L_SESSION, owner_dead


def list_ours(client: PodmanClient) -> list[Container]:
    """Containers a Sandbox started: our app label *and* an owner. Images we build carry the app
    label too, and a container a user starts from one by hand inherits it; without an owner label
    it is the user's, never a leftover of ours."""
    found: list[Container] = client.containers.list(all=True, filters=[APP_FILTER])
    return [c for c in found if L_PID in (c.attrs.get("Labels") or {})]


def sweep(client: PodmanClient, own_session: str | None = None) -> list[str]:
    """Remove containers of dead owners, and (when own_session is given) our own containers of
    that session. Returns the removed container ids."""
    removed = []
    me = str(os.getpid())
    for container in list_ours(client):
        labels = container.attrs.get("Labels") or {}
        mine = own_session is not None and labels.get(L_SESSION) == own_session \
            and labels.get(L_PID) == me
        if mine or owner_dead(labels):
            try:
                remove_container(client, container.id)
                removed.append(container.id)
            except Exception:  # already gone or busy: the next sweep gets it
                pass
    return removed
