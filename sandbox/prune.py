"""Remove cached world snapshots. They are only a cache: a later prepare rebuilds what it needs,
but thousands of trials leave thousands of images behind."""
from __future__ import annotations

from .podman_conf import podman
from .worlds import WORLD_REPO


def world_snapshots() -> list[str]:
    res = podman("images", "--filter", f"reference={WORLD_REPO}", "--format", "{{.Repository}}:{{.Tag}}",
                 check=False)
    names = res.stdout.decode().split() if res.returncode == 0 else []
    return sorted(n for n in names if n.startswith(WORLD_REPO + ":"))


def prune_world_snapshots(prefix: str = "") -> tuple[list[str], list[str]]:
    """Untag/remove snapshots whose tag starts with prefix ("" = all).

    Returns (removed, kept): an image a running container still uses is kept, not forced.
    """
    removed, kept = [], []
    for name in world_snapshots():
        if not name[len(WORLD_REPO) + 1:].startswith(prefix):
            continue
        res = podman("rmi", name, check=False)
        (removed if res.returncode == 0 else kept).append(name)
    return removed, kept
