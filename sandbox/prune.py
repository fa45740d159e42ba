"""Remove cached world snapshots. They are only a cache: a later prepare rebuilds what it needs,
but thousands of trials leave thousands of images behind.

Only snapshots built under this TESTJACK_HOME are touched (their `testjack.home` label), and an
image a container still uses (another session's run) is kept, never forced.
"""
from __future__ import annotations

from .podman_conf import podman
from .worlds import L_HOME, WORLD_REPO, home_id


def world_snapshots(older_than_hours: float | None = None) -> list[str]:
    """This home's snapshots, optionally only those created more than older_than_hours ago."""
    args = ["images", "--filter", f"reference={WORLD_REPO}", "--filter", f"label={L_HOME}={home_id()}"]
    if older_than_hours is not None:
        args += ["--filter", f"until={max(0, int(older_than_hours * 3600))}s"]
    res = podman(*args, "--format", "{{.Repository}}:{{.Tag}}", check=False)
    names = res.stdout.decode().split() if res.returncode == 0 else []
    return sorted(n for n in names if n.startswith(WORLD_REPO + ":"))


def prune_world_snapshots(prefix: str = "", older_than_hours: float | None = None
                          ) -> tuple[list[str], list[str]]:
    """Untag/remove this home's snapshots whose tag starts with prefix ("" = all), optionally
    only those older than older_than_hours.

    Returns (removed, kept): an image a running container still uses is kept, not forced.
    """
    removed: list[str] = []
    kept: list[str] = []
    for name in world_snapshots(older_than_hours):
        if not name[len(WORLD_REPO) + 1:].startswith(prefix):
            continue
        res = podman("rmi", name, check=False)
        (removed if res.returncode == 0 else kept).append(name)
    return removed, kept
