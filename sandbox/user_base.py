"""The image world snapshots are built on: the task's environment image with the unprivileged
trial user (trial_user.TRIAL_UID) added and the repo already owned by it.

Trial code runs as that user, so the repo must belong to it. Chowning it in every world
snapshot copied every file of the repo into every snapshot's layer (overlay copies a file up
when its owner changes): a trial cost a copy of the repository instead of the files its patch
changes. Done once per environment image here, a snapshot's layer holds only what its
patches wrote (sandbox/prepare_script.py then chowns just the files root created).

An image whose default user is not root is used as it is (nothing can be chowned there; its
worlds run as that user). Cached by the environment image's id and this recipe's version.

The repository's bytecode is compiled here too, once per environment image: test runs write
none (each is a fresh container), so the modules of a large repository would otherwise be
compiled again by every run. Likewise Go's build cache for the trial user (its HOME), and a Rust
task's target/ built the way its runs then build.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from .containers import ClientFactory, Limits, init_pid, put_files
from .containers import remove_container, start_container
from .errors import SandboxError
from .execs import ExecHandle, run_exec
from .output import OutputCollector
from .trial_user import TRIAL_HOME, TRIAL_NAME, TRIAL_UID

VERSION = "2"  # 2: the repository's bytecode
# A Go task's user base also holds Go's build cache: its own tag, so every other user base (and
# every world snapshot built on one) stays as it was.
GO_CACHE = "go-build-cache-1"
# A Rust task's: target/ built again without incremental compilation and debug info (its runs
# then build the same way: the flag file sandbox/runners/cargo_runner.py reads).
CARGO_TARGET = "cargo-target-stripped-2"
# warm kind -> (the runner whose tasks get it, what its tag adds, the variable that asks SCRIPT for it)
WARM = {"go": ("go test", GO_CACHE, "TJ_GO_CACHE"), "cargo": ("cargo test", CARGO_TARGET, "TJ_CARGO_TARGET")}


def warm_for(runner: str | None) -> str:
    """The warm kind of a task run by `runner` (sandbox/runners runner_name), "" for none."""
    return next((kind for kind, (name, _, _) in WARM.items() if name == runner), "")
REPOSITORY = "localhost/testjack-userbase"

SCRIPT = r'''set -u
if [ "$(id -u)" != 0 ]; then echo "TJ_NOT_ROOT"; exit 0; fi
u=$TJ_TRIAL_UID
if [ -w /etc/passwd ] && ! grep -q "^[^:]*:[^:]*:$u:" /etc/passwd; then
  echo "${TJ_TRIAL_NAME}:x:$u:$u:testjack trial:${TJ_TRIAL_HOME}:/bin/sh" >> /etc/passwd
fi
if [ -w /etc/group ] && ! grep -q "^[^:]*:[^:]*:$u:" /etc/group; then
  echo "${TJ_TRIAL_NAME}:x:$u:" >> /etc/group
fi
if [ -d "$TJ_WORKDIR" ]; then
  # The repository's bytecode, once per environment image: every test run is a fresh container
  # that writes none, so without it each run compiles every module it imports. Checked-hash
  # bytecode: a file a patch changes no longer matches its hash and is compiled again, even
  # when the patch kept its size and mtime second (Python < 3.7 refuses the flag: no bytecode).
  limit=""; command -v timeout >/dev/null 2>&1 && limit="timeout 300"
  for py in /opt/miniconda3/envs/testbed/bin/python python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    $limit "$py" -m compileall -q -j 0 --invalidation-mode checked-hash "$TJ_WORKDIR" >/dev/null 2>&1
  done
  # Go's build cache, once per environment image, where the trial user's go looks for it
  # (HOME is TJ_TRIAL_HOME in every run): without it each run compiled the standard library
  # and the repo's packages anew (go >= 1.20 ships no compiled standard library; measured
  # 2.9 CPU-s and 15 MB written per go test run of a small repo, tests/perf/run_cpu.py). Only
  # compiled here (-exec true: no test binary runs). The entries get a far-future mtime and
  # trim.txt a far-future time: go touches an entry older than an hour on every use and trims
  # the cache daily, and in a run either would copy the image's files up into the container.
  if [ -n "${TJ_GO_CACHE:-}" ] && [ -f "$TJ_WORKDIR/go.mod" ] && command -v go >/dev/null 2>&1; then
    cache="$TJ_TRIAL_HOME/.cache/go-build"
    # -mod: go.mod and go.sum stay as the base commit has them whatever GOFLAGS says (a patch
    # must apply to them); a vendored module builds from vendor/ as go does by default.
    mod=readonly; [ -f "$TJ_WORKDIR/vendor/modules.txt" ] && mod=vendor
    ( cd "$TJ_WORKDIR" && HOME="$TJ_TRIAL_HOME" GOCACHE="$cache" $limit go test -mod=$mod -count=1 -run '^$' -exec true ./... ) >/dev/null 2>&1
    if [ -d "$cache" ]; then
      find "$cache" -type f -exec touch -d '2100-01-01 00:00:00' {} +
      echo 4102444800 > "$cache/trim.txt"
      chown -R "$u:$u" "$TJ_TRIAL_HOME" && chmod 700 "$TJ_TRIAL_HOME"
    fi
  fi
  # A Rust task's target/, built again as every run then builds it (with the trial user's HOME):
  # without incremental compilation and with debug info stripped at link time. Runs of an image
  # whose target/ was built incrementally copied rustc's session up and linked 18 MB test
  # binaries (the standard library's debug info), measured 2.5 CPU-s and 67 MB written per
  # cargo test run of a small crate (tests/perf/run_cpu.py). The flag file tells the runs
  # (sandbox/runners/cargo_runner.py) to build the same way; it is set only when cargo took the
  # options and compiled (an old cargo refuses `strip`: its runs build as they always did). A base
  # commit whose tests do not compile yet still leaves its crate built.
  if [ -n "${TJ_CARGO_TARGET:-}" ] && [ -f "$TJ_WORKDIR/Cargo.toml" ] && command -v cargo >/dev/null 2>&1; then
    log=$(mktemp)
    ( cd "$TJ_WORKDIR" && HOME="$TJ_TRIAL_HOME" CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_STRIP=debuginfo $limit cargo test --offline --no-run ) >"$log" 2>&1
    if [ $? = 0 ] || grep -q '^ *Compiling ' "$log"; then
      find "$TJ_WORKDIR" -type d -name incremental -path '*/target/*' -prune -exec rm -rf {} + 2>/dev/null
      mkdir -p "$TJ_TRIAL_HOME" && : > "$TJ_TRIAL_HOME/.tj-cargo-noincr"
    fi
    rm -f "$log"
    [ -d "$TJ_TRIAL_HOME" ] && chown -R "$u:$u" "$TJ_TRIAL_HOME" && chmod 700 "$TJ_TRIAL_HOME"
  fi
  # git ignores the caches, as a .gitignore would
  if [ -d "$TJ_WORKDIR/.git" ] && mkdir -p "$TJ_WORKDIR/.git/info"; then
    grep -qx '__pycache__/' "$TJ_WORKDIR/.git/info/exclude" 2>/dev/null || echo '__pycache__/' >> "$TJ_WORKDIR/.git/info/exclude"
  fi
  chown -R "$u:$u" "$TJ_WORKDIR" || exit 4
fi
rm -f "$0"
echo "TJ_USER_BASE_DONE"
'''


def user_base_tag(env_image_id: str, workdir: str, warm: str = "") -> str:
    """`warm`: "go", the user base of a Go task (Go's build cache warmed for the trial user);
    "cargo", a Rust task's (target/ built as its runs then build it)."""
    extra = f"\0{WARM[warm][1]}" if warm else ""
    key = hashlib.sha256(f"{VERSION}\0{env_image_id}\0{workdir}{extra}".encode()).hexdigest()[:16]
    return f"{REPOSITORY}:{key}"


def ensure_user_base(client_factory: ClientFactory, env_image: str, env_image_id: str, workdir: str,
                     labels: dict[str, str], limits: Limits,
                     image_id: Callable[[str], str | None], warm: str = "") -> tuple[str, str]:
    """(image, id) to build world snapshots on (blocking); the environment image itself when its
    user is not root. `warm`: a Go task's ("go", Go's build cache warmed) or a Rust task's
    ("cargo", target/ built without incremental compilation)."""
    tag = user_base_tag(env_image_id, workdir, warm)
    found = image_id(tag)
    if found:
        return tag, found
    client = client_factory()
    container = start_container(client, env_image, labels, limits)
    try:
        put_files(container, {"/tmp/tj-user-base.sh": SCRIPT})
        env = {"TJ_TRIAL_UID": str(TRIAL_UID), "TJ_TRIAL_NAME": TRIAL_NAME, "TJ_TRIAL_HOME": TRIAL_HOME,
               "TJ_WORKDIR": workdir, **({WARM[warm][2]: "1"} if warm else {})}
        result = run_exec(ExecHandle(client_factory, container.id, init_pid(container)),
                          ["sh", "/tmp/tj-user-base.sh"], cwd="/", env=env, timeout=600,
                          collector=OutputCollector("user-base", keep_log=False))
        out = result.stdout_head + result.stdout_tail
        if "TJ_NOT_ROOT" in out:
            return env_image, env_image_id
        if "TJ_USER_BASE_DONE" not in out:
            raise SandboxError(f"{env_image}: giving the repo to the trial user failed "
                               f"(exit {result.exit_code}): {result.output.strip()[-300:]}")
        repo, version = tag.rsplit(":", 1)
        container.commit(repository=repo, tag=version, pause=False)
    finally:
        remove_container(client, container.id)
    built = image_id(tag)
    if not built:
        raise SandboxError(f"{tag}: the committed image is not there")
    return tag, built
