"""The unprivileged user trial code runs as in worlds prepared as root.

It owns the repo (chowned when the snapshot is made) and a home under /tmp, and holds no
capabilities (a uid change clears them; no-new-privileges keeps setuid binaries from giving any
back). A module of its own so that runners, which only write scripts, need not load podman.
"""
from __future__ import annotations

TRIAL_UID = 10001
TRIAL_NAME = "tj-trial"
TRIAL_HOME = "/tmp/tj-home"
ROOT_USER = "0:0"  # our own wrappers in a world whose container runs as the trial user
