"""pytest: one process for all requested ids, outcomes from JUnit XML written outside the repo.

Requested ids are not passed to pytest as node ids (one missing id makes pytest stop with a
usage error and run nothing); instead their files are passed and a small plugin keeps only
the requested items, so a missing id is simply reported as not found. The plugin also logs
progress to a file, so a run killed by its timeout still tells which tests finished.
A file that does not collect (it imports an API the change adds) does not stop the others
(`--continue-on-collection-errors`). Deterministic: no cache provider, PYTHONHASHSEED=0, and addopts that change which tests run
or where reports go (-x, --lf, --junitxml, ...) are dropped from the repo's config.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dataclasses
import json
import re
import secrets

from ..api import ExecResult, TestOutcome, TestStatus, as_status
from ..canaries import PYTEST
from ..trial_user import TRIAL_HOME, TRIAL_NAME
from ..hidden_names import PYTHON
from .base import OUT_ROOT, aggregate, report_named, trim
from ..test_ids import is_pytest_id, junit_to_pytest, pytest_candidates, pytest_to_junit
from .junit import parse_junit

LAUNCHER_PATH = f"{OUT_ROOT}/pytest_launch.py"
PLUGIN_PATH = f"{OUT_ROOT}/plugins/tj_select.py"
RESTORED_LOG = "restored.txt"  # the harness restore's output, for runs that end without a trailer

# Runs in the container with the environment's python (any python3 >= 3.6).
LAUNCHER = r'''
import configparser, json, os, shlex, sys

# The spec (ids, report paths) is read and deleted before any code of the repo runs: the ids
# (witness and canary names) are never in the environment nor on disk for the tests to read.
spec = json.load(open(sys.argv[1]))
try:
    os.unlink(sys.argv[1])
except OSError:
    pass
workdir = spec["workdir"]
os.chdir(workdir)
out_dir = os.path.dirname(spec["junit"])
if not os.path.isdir(out_dir):
    os.makedirs(out_dir)
# An id in the benchmark's JUnit scheme (`tests.test_x.TestY.test_z`) comes with the node ids it
# can mean (sandbox/test_ids.pytest_candidates); the one whose file exists here is run.
def resolve(test_id):
    choices = spec.get("alternatives", {}).get(test_id)
    if not choices:
        return test_id
    return next((c for c in choices if os.path.exists(c.split("::")[0])), choices[0])

spec["ids"] = [resolve(i) for i in spec["ids"]]
files = []
for test_id in spec["ids"]:
    path = test_id.split("::")[0]
    if path not in files and os.path.exists(path):
        files.append(path)

DROP = {"-x", "--exitfirst", "--lf", "--last-failed", "--ff", "--failed-first", "--nf",
        "--new-first", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--cache-clear",
        "--pdb", "--trace", "--co", "--collect-only", "--setup-only", "--setup-plan", "-f",
        "--looponfail", "--no-cov", "--cov-branch", "--cov-append"}
DROP_WITH_VALUE = {"--maxfail", "--junitxml", "--junit-xml", "--junit-prefix", "--lfnf",
                   "--last-failed-no-failures", "--basetemp",
                   # pytest-xdist: workers would not have our selection plugin; one process runs
                   # the focused set (the ids are few), as the harness runs one test file.
                   "-n", "--numprocesses", "--maxprocesses", "--dist", "--tx", "--max-worker-restart",
                   "--rsyncdir",
                   # pytest-cov: a focused run's coverage is not the suite's (--cov-fail-under
                   # would fail every run); ghost branches measure coverage their own way.
                   "--cov-fail-under", "--cov-report", "--cov-config", "--cov-context"}
OPTIONAL_VALUE = {"--cov"}  # `--cov`, `--cov=pkg`, `--cov pkg`

def read_ini():
    """(file, the repo's pytest ini section as a dict) in pytest's order of config files."""
    def ini(name, section):
        cp = configparser.ConfigParser(interpolation=None)
        try:
            cp.read(name)
        except Exception:
            return None
        return dict(cp.items(section)) if cp.has_section(section) else None
    for name in ("pytest.ini", ".pytest.ini"):
        if os.path.exists(name):
            return name, ini(name, "pytest") or {}
    if os.path.exists("pyproject.toml"):
        try:
            try:
                import tomllib
            except ImportError:  # python < 3.11: pytest itself reads it with tomli
                import tomli as tomllib
            with open("pyproject.toml", "rb") as fh:
                opts = tomllib.load(fh).get("tool", {}).get("pytest", {}).get("ini_options")
            if opts is not None:
                return "pyproject.toml", opts
        except Exception:
            pass
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if os.path.exists(name):
            found = ini(name, section)
            if found is not None:
                return name, found
    return None, {}

def as_list(value):
    if value is None:
        return None
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value))
    except ValueError:
        return None

def clean(opts):
    """(opts without those that break a focused run, the ones left out)."""
    out, dropped, at = [], [], 0
    while at < len(opts):
        tok = opts[at]
        at += 1
        head = tok.split("=", 1)[0]
        if tok in DROP or head in DROP_WITH_VALUE or head in OPTIONAL_VALUE or head.startswith("--cov-") \
                or (tok.startswith("-n") and not tok.startswith("--")):
            takes = tok in DROP_WITH_VALUE or (tok in OPTIONAL_VALUE and at < len(opts)
                                               and not opts[at].startswith("-"))
            if takes and at < len(opts):
                tok += " " + opts[at]
                at += 1
            dropped.append(tok)
            continue
        if tok.startswith("-") and not tok.startswith("--") and len(tok) > 2 and tok[1] not in "rkmpocnWW" \
                and tok[1:].isalpha() and "x" in tok:
            dropped.append("-x")
            tok = tok.replace("x", "")
        out.append(tok)
    return out, dropped

def covers(patterns, ours):
    """Does one of the repo's name patterns (prefixes or globs) take our names (`test_...`)?"""
    import fnmatch
    return any(ours.startswith(p) or fnmatch.fnmatch(ours, p) for p in patterns)

args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tj_select",
        "--rootdir", workdir, "--junitxml", spec["junit"], "-o", "junit_family=xunit1",
        "-o", "junit_logging=no", "-rN", "-q", "--continue-on-collection-errors"]
notes = []
config_file, ini = read_ini()
addopts = as_list(ini.get("addopts"))
if addopts is None and ini.get("addopts"):
    args += ["-o", "addopts="]
    notes.append("%s: addopts unreadable, left out" % config_file)
elif addopts:
    cleaned, dropped = clean(addopts)
    if dropped:
        args += ["-o", "addopts=" + " ".join(shlex.quote(t) for t in cleaned)]
        notes.append("%s: addopts %s left out (a focused run in one process)" % (config_file, " ".join(dropped)))
env_opts = os.environ.get("PYTEST_ADDOPTS")
if env_opts:
    try:
        cleaned, dropped = clean(shlex.split(env_opts))
    except ValueError:
        cleaned, dropped = [], [env_opts]
    if dropped:
        os.environ["PYTEST_ADDOPTS"] = " ".join(shlex.quote(t) for t in cleaned)
        notes.append("PYTEST_ADDOPTS: %s left out" % " ".join(dropped))
# Files given on the command line are collected whatever `python_files` says; the functions and
# classes in them only when `python_functions` / `python_classes` match. Candidates and canaries
# are `test_*` / `Test*`: the repo's patterns are kept and ours added when they do not match.
for key, ours, name in (("python_functions", "test", "test_x"), ("python_classes", "Test", "TestX")):
    patterns = as_list(ini.get(key))
    if patterns and not covers(patterns, name):
        args += ["-o", "%s=%s" % (key, " ".join(patterns + [ours]))]
        notes.append("%s: %s %s: %s added for candidate tests (the repo's own runs collect only %s)"
                     % (config_file, key, " ".join(patterns), ours, " ".join(patterns)))
patterns = as_list(ini.get("python_files"))
if patterns and not covers(patterns, "test_x.py"):
    notes.append("%s: python_files %s: candidate files are passed by path (collected anyway)"
                 % (config_file, " ".join(patterns)))
args += files
# Printed before any code of the repo runs (the engine believes only these first lines).
for note in notes:
    print("TJ_CONFIG " + note, flush=True)
print("TJ_FILES " + json.dumps(files), flush=True)
if not files:
    sys.exit(5)
# Run pytest in this interpreter exactly as `python -m pytest` would (saves a second start-up):
# the current directory first on sys.path, pytest's __main__ as the main module.
import runpy
sys.path[0] = os.getcwd()
# Our selection plugin; appended (not PYTHONPATH) so the image's own PYTHONPATH stays intact.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins"))
import tj_select
tj_select.configure(spec["ids"], spec["progress"])
del spec
sys.argv = [sys.executable] + args[3:]
runpy.run_module("pytest", run_name="__main__", alter_sys=True)
'''

PLUGIN = r'''
"""PYTEST_DONT_REWRITE: imported by our launcher before pytest loads it with `-p tj_select`; without
this mark pytest warns that it cannot rewrite it, and a repo with `filterwarnings = error` fails."""
import json, os
import pytest

_EXACT = set()
_DIRS = set()
_progress = None


def configure(ids, progress_path):
    """Called by the launcher before pytest starts (the ids never pass through the environment)."""
    global _EXACT, _DIRS, _progress
    _EXACT = set(ids)
    _DIRS = set(i.rstrip("/") for i in ids)
    _progress = open(progress_path, "a", buffering=1)


def _wanted(nodeid):
    """An id selects itself and what lies under it (`id::...`, `id[...]`, `dir/...`). Checked by
    the node id's own cut points against sets: a suite of thousands of ids stays linear."""
    if nodeid in _EXACT:
        return True
    for at, ch in enumerate(nodeid):
        if ch == "[" or (ch == ":" and nodeid.startswith("::", at)):
            if nodeid[:at] in _EXACT:
                return True
        elif ch == "/" and nodeid[:at] in _DIRS:
            return True
    return False


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    keep, dropped = [], []
    for item in items:
        (keep if _wanted(item.nodeid) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    if _progress is None:
        return
    _progress.write(json.dumps({"id": nodeid, "event": "start"}) + "\n")


def pytest_runtest_logreport(report):
    if _progress is None:
        return
    _progress.write(json.dumps({"id": report.nodeid, "when": report.when,
                                "outcome": report.outcome}) + "\n")
'''


# Runs as `python3 -I -S -c WRAPPER`: isolated (no PYTHON* variables, no site, no .pth files, no
# sitecustomize, no current directory on sys.path), so none of the repo's code runs in it.
# It writes the files passed in TJ_FILES, runs the launcher as a *child process* with an
# environment free of TJ_* variables, then writes the report files to stdout as a trailer
# (sandbox/trailer.py). The trailer's mark lives only in this process, which makes itself
# non-dumpable first: without CAP_SYS_PTRACE (dropped) the tests can read neither its memory
# nor its /proc environ, so they cannot forge the trailer.
WRAPPER = r"""
import base64, json, os, subprocess, sys

def _tj_undumpable():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except Exception:
        pass

def _tj_trailer(mark, body):
    try:
        data = mark.encode() + base64.b64encode(json.dumps(body).encode()) + mark.encode() + b"END\n"
        while data:
            data = data[os.write(1, data):]
    except BaseException:
        pass

def _tj_makedirs(folder, owner):
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for path in reversed(missing):
        os.mkdir(path)
        if owner:
            os.chown(path, owner[0], owner[1])

def _tj_write(files, owner, repo):
    # Files in the repo (the candidates) belong to the trial user like the rest of the repo.
    for path, b64 in files.items():
        data = base64.b64decode(b64)
        mine = owner if owner and path.startswith(repo + "/") else None
        _tj_makedirs(os.path.dirname(path), mine)
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)  # replace, as a copy-in does; never write through a symlink
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(path, 0o644)
        if mine:
            os.chown(path, mine[0], mine[1])

def _tj_restore(spec):
    # The harness restore (sandbox/prepare_script.RESTORE) before the candidates go in.
    proc = subprocess.Popen(spec["argv"], cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += b"\nrestore timed out"
        proc.returncode = proc.returncode or 124
    out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if proc.returncode != 0:
        return None, out + err
    folder = os.path.dirname(spec["log"])
    if not os.path.isdir(folder):
        os.makedirs(folder)
    with open(spec["log"], "w") as fh:
        fh.write(out)
    return out, None

if os.environ.pop("TJ_GATE", None):
    # Started ahead of its turn as a container's main process (sandbox/main_process.py): say so
    # and wait for SIGUSR1 before anything runs.
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    os.write(1, b"\x1eTJ-GATE\n")
    signal.sigwait([signal.SIGUSR1])
    # The container's init leaves job-control signals blocked for its child: the tests get
    # the empty mask an exec would have given them.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
_tj = json.loads(os.environ.pop("TJ_WRAP"))
if not (_tj.get("user") and os.getuid() == 0):
    # Tests of the same uid could read this process's memory and environment (the mark); tests
    # dropped to the trial user cannot reach a root process anyway, and ctypes costs a load.
    _tj_undumpable()
_tj_files = json.loads(os.environ.pop("TJ_FILES", None) or "{}")
_tj_env = dict((k, v) for k, v in os.environ.items() if not k.startswith("TJ_"))
_tj_restored = None
if _tj.get("restore"):
    _tj_restored, _tj_failed = _tj_restore(_tj["restore"])
    if _tj_failed is not None:
        _tj_trailer(_tj["mark"], {"restore_failed": _tj_failed})
        sys.exit(95)
# The tests run as the world's unprivileged trial user when this wrapper runs as root: they own
# the repo and their report folder, hold no capabilities and cannot signal or read this process.
_tj_owner = None
if _tj.get("user") and os.getuid() == 0:
    _tj_owner = tuple(int(x) for x in _tj["user"]["id"].split(":"))
    _tj_env["HOME"] = _tj["user"]["home"]
    _tj_env["USER"] = _tj_env["LOGNAME"] = _tj["user"]["name"]
try:
    _tj_write(_tj_files, _tj_owner, _tj["repo"])
    _tj_makedirs(_tj["out"], None)
    if _tj_owner:
        os.chown(_tj["out"], _tj_owner[0], _tj_owner[1])
except Exception as exc:
    _tj_trailer(_tj["mark"], {"error": "%s: %s" % (type(exc).__name__, exc), "restored": _tj_restored})
    sys.exit(96)
def _tj_limit_cpu():
    # The run's CPU-time limit (SIGXCPU past it): a CPU hog cannot hold its slot for the whole
    # wall-clock timeout. Without CAP_SYS_RESOURCE the tests cannot raise it again.
    if _tj.get("cpu"):
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (int(_tj["cpu"]), int(_tj["cpu"]) + 2))

def _tj_child():
    _tj_limit_cpu()
    if _tj_owner:
        os.setgroups([])
        os.setgid(_tj_owner[1])
        os.setuid(_tj_owner[0])

def _tj_started(pid):
    # A process's start time in clock ticks (field 22 of /proc/PID/stat).
    with open("/proc/%s/stat" % pid) as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[19])

def _tj_zombie(pid):
    # An exited child not yet reaped by the container's init: it can write nothing.
    with open("/proc/%s/stat" % pid) as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")

def _tj_survivors(since, uid):
    # Processes of the tests' uid started after this wrapper that outlived the runner (an exit
    # hook's double-forked daemon can rewrite the reports later): named, then killed.
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/status" % pid) as fh:
                real = [l.split()[1] for l in fh if l.startswith("Uid:")][0]
            if int(real) != uid or _tj_started(pid) < since or _tj_zombie(pid):
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                cmd = fh.read(200).replace(b"\0", b" ").decode("utf-8", "replace").strip()
            os.kill(int(pid), 9)
            found.append("%s %s" % (pid, cmd))
        except (OSError, IndexError, ValueError):
            continue
    return found

def _tj_read_reports():
    out = {}
    for path in _tj["reports"]:
        try:
            with open(path, "rb") as fh:
                out[path] = base64.b64encode(fh.read()).decode()
        except (IOError, OSError):
            out[path] = None
    return out

def _tj_tests_in(path):
    # The test functions of a witness file, read by this (root, isolated) process with ast.
    import ast
    try:
        with open(os.path.join(_tj["repo"], path), "rb") as fh:
            tree = ast.parse(fh.read())
    except Exception:
        return []
    names, defs = [], (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names += [node.name + "::" + f.name for f in node.body
                      if isinstance(f, defs) and f.name.startswith("test")]
    return names

def _tj_unsupported(path):
    # A conftest.py between the repo and the test file with autouse fixtures, plugins or run
    # hooks does things to the test our driver does not: its tests are not measured there.
    folder = os.path.dirname(os.path.join(_tj["repo"], path))
    while True:
        try:
            with open(os.path.join(folder, "conftest.py"), "rb") as fh:
                text = fh.read()
            if b"autouse" in text or b"pytest_plugins" in text or b"pytest_runtest" in text:
                return True
        except (IOError, OSError):
            pass
        if folder.rstrip("/") == _tj["repo"].rstrip("/") or folder in ("/", ""):
            return False
        folder = os.path.dirname(folder)

def _tj_hide_sources(paths):
    # The witness files' text goes to our driver on stdin, and the files (with pytest's cached
    # bytecode of them) become unreadable to the tests' users: code under test cannot read a
    # test's expected values out of its source (frames, linecache, globbing the repo) there.
    sources = {}
    for path in paths:
        full = os.path.join(_tj["repo"], path)
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            with os.fdopen(fd, "rb") as fh:
                sources[path] = fh.read().decode("utf-8", "replace")
                if os.getuid() == 0:
                    os.fchown(fh.fileno(), 0, 0)
                    os.fchmod(fh.fileno(), 0o600)
        except (IOError, OSError):
            continue
        cache = os.path.join(os.path.dirname(full), "__pycache__")
        stem = os.path.splitext(os.path.basename(full))[0] + "."
        try:
            names = os.listdir(cache)
        except OSError:
            names = []
        for name in names:
            if name.startswith(stem):
                try:
                    os.unlink(os.path.join(cache, name))
                except OSError:
                    pass
    return sources

def _tj_drive(own, tests, uid, varied, left, sources):
    # The tests by our own driver (sandbox/own_run.py) in one fresh process: its per-test nonce
    # lines are read here, outside the trial's interpreter. {index: code or "no verdict"}.
    import random, tempfile
    nonce = base64.b16encode(os.urandom(12)).decode()
    env = dict(_tj_env)
    argv0 = "python3"
    faked = varied and os.path.exists(own["faketime"])  # libfaketime moves the clock: not twice
    if varied:
        env = dict((k, v) for k, v in env.items() if not k.startswith(("PYTEST", "_PYTEST", "TJ_")))
        home = tempfile.mkdtemp(prefix="h", dir="/tmp")
        if os.getuid() == 0:
            os.chown(home, uid, uid)
        env.update(HOME=home, TMPDIR=home, USER="tj-other", LOGNAME="tj-other")
        if faked:  # the date only: a faked monotonic clock hangs vitest's workers
            env.update(LD_PRELOAD=own["faketime"], FAKETIME="+%dd" % own["days"], FAKETIME_DONT_FAKE_MONOTONIC="1")
        # Another argv[0] that still names this interpreter: a bare "python" is on no PATH in
        # Debian's images, so sys.executable came out empty and a test starting a subprocess
        # of it failed in the varied run only (a false "environment-dependent").
        argv0 = os.path.realpath(sys.executable)
    order = list(range(len(tests)))
    random.shuffle(order)
    req = json.dumps({"nonce": nonce, "workdir": _tj["repo"], "tests": [tests[i] for i in order],
                      "shift": own["days"] * 86400 if varied and not faked else 0, "sources": sources}) + "\n"
    log = tempfile.TemporaryFile()
    def child():
        _tj_limit_cpu()
        ids = (uid, uid) if varied and os.getuid() == 0 else _tj_owner
        if ids:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])
    proc = subprocess.Popen([argv0, own["driver"]], executable=sys.executable, stdin=subprocess.PIPE,
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=_tj["repo"],
                            close_fds=True, preexec_fn=child)
    missing = "no verdict"
    try:
        proc.communicate(req.encode(), timeout=max(1, min(own["timeout"], left)))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        missing = "timed out"
    except OSError:
        proc.wait()
    log.seek(0)
    found = {}
    head = ("TJ-OWN %s " % nonce).encode()
    for line in log:
        if line.startswith(head):
            try:
                index, code = (int(x) for x in line[len(head):].split())
                found.setdefault(order[index], code)
            except (ValueError, IndexError):
                continue
    return dict((i, found.get(i, missing)) for i in range(len(tests)))

def _tj_not_passed(junit, keys):
    # The tests (`path::name`, `path::Class::name`) the JUnit report, as read when the runner
    # exited, shows only as failed, errored or skipped: no pass is claimed for them, so no
    # second channel is needed to believe them. Anything unclear (no report, an unreadable one,
    # a test missing from it, or listed once passed and once not) is not in this set.
    if not junit:
        return set()
    try:
        import xml.etree.ElementTree as ET
        root = ET.fromstring(base64.b64decode(junit))
    except Exception:
        return set()
    seen = {}
    for case in root.iter("testcase"):
        name = case.get("name") or ""
        key = (case.get("classname") or "", name.split("[", 1)[0])
        bad = any(child.tag in ("failure", "error", "skipped") for child in case)
        seen[key] = seen.get(key, True) and bad
    out = set()
    for key in keys:
        path, _, rest = key.partition("::")
        parts = rest.split("::")
        classname = ".".join([path[:-3].replace("/", ".")] + parts[:-1])
        if seen.get((classname, parts[-1])):
            out.add(key)
    return out

def _tj_own_runs(own, uid, ran, junit):
    import time
    # The canary files come last: always run, whatever the number of witness tests.
    cut = len(own["files"]) - own.get("canary_files", 0)
    tests = [(p, n) for p, names in own["files"][:cut] for n in (names or _tj_tests_in(p))][:own["max"]]
    witnesses = len(tests)
    tests += [(p, n) for p, names in own["files"][cut:] for n in names]
    keys = [p + "::" + n for p, n in tests]
    normal, varied = dict((k, 3) for k in keys), {}  # 3: not measured
    left = own["total"]
    if own.get("run_timeout"):
        left = min(left, own["run_timeout"] * 0.9 - ran)
    started = time.time()
    # Our own runs exist to check claimed passes: a test the report does not pass is believed
    # (4: not run), and without any witness test claimed passed there is nothing to check.
    skip = _tj_not_passed(junit, keys[:witnesses])
    if len(skip) == witnesses:
        return dict((k, 4) for k in keys), varied
    for key in skip:
        normal[key] = 4
    todo = [i for i, (p, n) in enumerate(tests) if keys[i] not in skip and not _tj_unsupported(p)]
    other = own["varied_uid"] if os.getuid() == 0 else uid
    sources = _tj_hide_sources(sorted(set(tests[i][0] for i in todo)))

    def drive(indices, vary, budget):
        got = _tj_drive(own, [tests[i] for i in indices], other if vary else uid, vary, budget, sources)
        return dict((keys[i], got[j]) for j, i in enumerate(indices))

    if own.get("channel", True) or not own.get("vary"):
        # A run with canaries (a model world): our own run is a channel of its own, then the
        # tests it passed go to the varied replay.
        if todo and left >= 2:
            normal.update(drive(todo, False, left / 2))
        again = [i for i in todo if normal[keys[i]] == 0]
        left -= time.time() - started
        if own.get("vary") and again and left >= 1:
            varied.update(drive(again, True, left))
        return normal, varied
    # No channel is judged here (the reference world): only the varied replay must hold. A test
    # that does not pass there is run again in the usual environment, to tell the environment
    # (it passes there) from what our driver cannot run (it fails there too: not measured).
    if todo and left >= 2:
        varied.update(drive(todo, True, left / 2))
        normal.update((keys[i], 5) for i in todo if varied[keys[i]] == 0)
    again = [i for i in todo if varied.get(keys[i], 0) != 0]
    left -= time.time() - started
    if again and left >= 1:
        normal.update(drive(again, False, left))
    for i in again:
        if normal[keys[i]] != 0:
            del varied[keys[i]]
    return normal, varied

def _tj_exec_runs(own, uid, ran):
    # Our own runs for runners other than pytest (sandbox/own_exec.py): each test in a fresh
    # process of the runner's own (a test binary, or its launcher without reporters), whose
    # verdict is its exit status read here. Binaries are built as the trial user, then copied
    # by this process into a folder of root's, so nothing the tests start can replace them.
    import random, shutil, tempfile, time
    started, left = time.time(), own["total"]
    if own.get("run_timeout"):
        left = min(left, own["run_timeout"] * 0.9 - ran)
    keys = [k for k, _ in own["tests"]][:own["max"]]
    normal, varied = dict((k, 3) for k in keys), {}
    tests = dict(own["tests"])
    def remaining():
        return left - (time.time() - started)
    def as_user(ids):
        def child():
            _tj_limit_cpu()
            os.setsid()
            if ids and os.getuid() == 0:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
        return child
    def mine(path, ids):
        if ids and os.getuid() == 0:
            os.chown(path, ids[0], ids[1])
    def call(argv, cwd, env, ids, timeout, out=None):
        exe = shutil.which(argv[0], path=env.get("PATH")) or argv[0]
        try:
            proc = subprocess.Popen(argv, executable=exe, cwd=os.path.join(_tj["repo"], cwd or ""),
                                    env=env, stdin=subprocess.DEVNULL, stdout=out or subprocess.DEVNULL,
                                    stderr=subprocess.STDOUT, close_fds=True, preexec_fn=as_user(ids))
        except OSError:
            return 3
        try:
            return 0 if proc.wait(timeout=max(1, timeout)) == 0 else 1
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, 9)
            except OSError:
                pass
            proc.wait()
            return "timed out"
    bins = tempfile.mkdtemp(prefix="tjb", dir="/tmp")
    os.chmod(bins, 0o755)
    built = {}
    for bid, build in sorted(own.get("builds", {}).items()):
        if remaining() < 2:
            break
        work = tempfile.mkdtemp(prefix="tjw", dir="/tmp")
        mine(work, _tj_owner)
        target = os.path.join(work, "out")
        log = tempfile.TemporaryFile()
        argv = [a.replace("{out}", target) for a in build["argv"]]
        if call(argv, build.get("cwd"), _tj_env, _tj_owner, min(own["timeout"], remaining()), log) != 0:
            continue
        _tj_survivors(_tj_since, uid)
        if build.get("pick") == "cargo":
            # The test executable cargo reports (its last compiler-artifact line of a test profile).
            log.seek(0)
            target = None
            for line in log:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("executable") and (rec.get("profile") or {}).get("test"):
                    target = rec["executable"]
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as src, open(os.path.join(bins, bid), "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.chmod(os.path.join(bins, bid), 0o755)
            built[bid] = os.path.join(bins, bid)
        except (TypeError, OSError):
            continue
    def run_all(todo, ids, vary):
        env = dict(_tj_env)
        if vary:
            env = dict((k, v) for k, v in env.items() if not k.startswith(tuple(own["strip"])))
            home = tempfile.mkdtemp(prefix="h", dir="/tmp")
            mine(home, ids)
            os.chmod(home, 0o1777)  # a runner kept on the trial uid (keep_uid) writes here too
            env.update(HOME=home, TMPDIR=home, USER="tj-other", LOGNAME="tj-other")
            if os.path.exists(own["faketime"]):  # the date only (a faked monotonic clock hangs vitest)
                env.update(LD_PRELOAD=own["faketime"], FAKETIME="+%dd" % own["days"], FAKETIME_DONT_FAKE_MONOTONIC="1")
        order = list(todo)
        random.shuffle(order)
        got = {}
        for key in order:
            test = tests[key]
            if remaining() < 1:
                break
            if test.get("build") and test["build"] not in built:
                continue
            argv = [a.replace("{bin}", built.get(test.get("build"), "")) for a in test["argv"]]
            if test.get("spec") is not None:
                folder = tempfile.mkdtemp(prefix="tjs", dir="/tmp")
                spec = dict(test["spec"], workdir=_tj["repo"], out_dir=os.path.join(folder, "out"))
                path = os.path.join(folder, "spec.json")
                with open(path, "w") as fh:
                    json.dump(spec, fh)
                for p in (folder, path):
                    mine(p, ids)
                argv.append(path)
            if vary:
                # Another argv[0] that still names the same program (its full, resolved path).
                argv[0] = os.path.realpath(shutil.which(argv[0], path=env.get("PATH")) or argv[0])
            who = _tj_owner if vary and test.get("keep_uid") else ids
            if test.get("spec") is not None:
                for p in (folder, path):
                    mine(p, who)
            got[key] = call(argv, test.get("cwd"), env, who, min(own["timeout"], remaining()))
        return got
    # A witness its own report fails needs no second opinion (only a pass is a claim to check);
    # the canaries run only beside a witness that does.
    import re
    def reported_failed(key):
        hint = tests[key].get("failed_if")
        if not hint:
            return False
        text = next((base64.b64decode(v).decode("utf-8", "replace") for k, v in _tj_reports.items()
                     if v and k.endswith(hint[0])), "")
        # Failed, and passed nowhere in it (a forged pass line after the failure must be checked).
        return bool(re.search(hint[1], text, re.M)) and not re.search(hint[2], text, re.M)
    todo = [k for k in keys if not tests[k].get("canary") and not reported_failed(k)]
    if todo:
        todo += [k for k in keys if tests[k].get("canary")]
    normal.update(run_all(todo, _tj_owner, False))
    again = [k for k in keys if normal[k] == 0]
    if own.get("vary") and again:
        other = (own["varied_uid"], own["varied_uid"]) if os.getuid() == 0 else _tj_owner
        varied = run_all(again, other, True)
    return normal, varied

_tj_since = _tj_started("self")
import time as _tj_time
_tj_wall0 = _tj_time.time()
_tj_code = subprocess.call([sys.executable] + list(_tj["argv"]), env=_tj_env, close_fds=True,
                           cwd=_tj["repo"], preexec_fn=_tj_child)
# Read the reports as the runner exits, then end every process it left behind and read them
# again: a report that differs was changed after the runner exited (sandbox/channels.py).
_tj_reports = _tj_read_reports()
_tj_uid = _tj_owner[0] if _tj_owner else os.getuid()
_tj_extra = {"survivors": _tj_survivors(_tj_since, _tj_uid)}
_tj_again = _tj_read_reports()
_tj_extra["changed"] = [p for p in _tj["reports"] if _tj_again.get(p) != _tj_reports.get(p)]
if _tj.get("own"):
    if _tj["own"].get("mode") == "exec":
        _tj_extra["own"], _tj_extra["varied"] = _tj_exec_runs(_tj["own"], _tj_uid, _tj_time.time() - _tj_wall0)
    else:
        _tj_extra["own"], _tj_extra["varied"] = _tj_own_runs(
            _tj["own"], _tj_uid, _tj_time.time() - _tj_wall0,
            next((v for k, v in _tj_reports.items() if k.endswith("/junit.xml")), None))
    _tj_survivors(_tj_since, _tj_uid)
    if _tj["own"].get("vary"):
        _tj_survivors(_tj_since, _tj["own"]["varied_uid"])
_tj_trailer(_tj["mark"], dict(_tj_extra, reports=_tj_reports, restored=_tj_restored, code=_tj_code))
sys.exit(128 - _tj_code if _tj_code < 0 else _tj_code)
"""


class PytestRunner:
    name = "pytest"
    canaries = PYTEST
    names = PYTHON  # how its witness files and tests are renamed per run (sandbox/hidden_names.py)
    witness_hint = ("for example `tests/test_tj_<topic>.py`; run_tests takes the file's path, "
                    "`path::test_name`, or an id in the benchmark's own `module.Class.test_name` "
                    "scheme")

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        return sorted(n for n in outcomes if n.startswith(path + "::"))

    def __init__(self, python: str = "python3"):
        self.python = python

    def support_files(self) -> dict[str, str]:
        return {LAUNCHER_PATH: LAUNCHER, PLUGIN_PATH: PLUGIN}

    def new_out_dir(self) -> str:
        return f"{OUT_ROOT}/run-{secrets.token_hex(6)}"

    def command(self, test_ids: list[str], *, workdir: str, out_dir: str
                ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        alternatives = {i: pytest_candidates(i) for i in test_ids if not is_pytest_id(i)}
        spec = json.dumps({"ids": list(test_ids), "workdir": workdir, "junit": f"{out_dir}/junit.xml",
                           "progress": f"{out_dir}/progress.jsonl", "alternatives": alternatives})
        env = {"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PY_COLORS": "0"}
        # The spec goes in as a file the launcher deletes once read (not through the environment).
        files = {f"{out_dir}/spec.json": spec}
        return [self.python, LAUNCHER_PATH, f"{out_dir}/spec.json"], env, files

    def inline_command(self, argv: list[str], env: dict[str, str], files_json: str, mark: str,
                       out_dir: str, restore: list[str] | None = None, cpu_seconds: int | None = None,
                       workdir: str = "/", user: str = "", own: dict[str, Any] | None = None
                       ) -> tuple[list[str], dict[str, str]]:
        """argv and env that run `restore` (argv; its stdout also goes to out_dir/restored.txt),
        write `files_json` (trailer.encode_files) before the run and return the reports as a
        stdout trailer marked `mark` (see sandbox/trailer.py). With `user` ("uid:gid") the
        tests run as that user, who then owns out_dir and the files written into `workdir`."""
        spec: dict[str, Any] = {"mark": mark, "argv": argv[1:], "reports": self.report_paths(out_dir),
                      "cpu": cpu_seconds, "out": out_dir, "repo": workdir.rstrip("/") or "/"}
        if user:
            spec["user"] = {"id": user, "home": TRIAL_HOME, "name": TRIAL_NAME}
        if restore:
            spec["restore"] = {"argv": list(restore), "log": f"{out_dir}/{RESTORED_LOG}"}
        if own:
            spec["own"] = own  # our own runs of the witness tests (sandbox/own_run.py)
        wrap = json.dumps(spec)
        env = {**env, "TJ_WRAP": wrap}
        if files_json != "{}":
            env["TJ_FILES"] = files_json
        return [argv[0], "-I", "-S", "-c", WRAPPER], env

    def report_paths(self, out_dir: str) -> list[str]:
        return [f"{out_dir}/junit.xml", f"{out_dir}/progress.jsonl"]

    own_run = True  # witness tests also get our own run without pytest (sandbox/own_run.py)

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """Where pytest's exit status and terminal summary contradict its JUnit report."""
        from ..channels import pytest_agreement  # channels -> own_run -> runners: not at import
        return pytest_agreement(report_named(reports, "junit.xml"), result)

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        """Outcomes of the requested ids, keyed as given, and of every case the run reported
        (a file or class id is answered through its cases too). An id in the benchmark's JUnit
        scheme is read as the node id in the files the run reported (the launcher ran the
        candidate whose file exists), and the cases under it are named in its scheme."""
        files = _reported_files(reports)
        chosen = {i: (i if is_pytest_id(i) else junit_to_pytest(i, files)) for i in test_ids}
        found = self._parse_nodes(list(dict.fromkeys(chosen.values())), reports, result)
        requested = set(test_ids)
        junit_chosen = tuple(c for i, c in chosen.items() if c != i)
        under = tuple(p for c in junit_chosen for p in (c + "::", c + "["))
        outcomes: dict[str, TestOutcome] = {}
        for node, outcome in found.items():
            if node in requested or node in junit_chosen:
                continue
            if under and node.startswith(under):
                node = pytest_to_junit(node)
                outcome = dataclasses.replace(outcome, id=node)
            outcomes[node] = outcome
        for test_id, node in chosen.items():
            got = found[node]
            outcomes[test_id] = got if got.id == test_id else dataclasses.replace(got, id=test_id)
        return outcomes

    def _parse_nodes(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
                     ) -> dict[str, TestOutcome]:
        junit = next((v for k, v in reports.items() if k.endswith("junit.xml")), None)
        progress = next((v for k, v in reports.items() if k.endswith("progress.jsonl")), None)
        outcomes: dict[str, TestOutcome] = {}
        collection_errors: dict[str, str] = {}
        if junit and not result.timed_out:
            try:
                outcomes, collection_errors = parse_junit(junit, test_ids)
            except Exception as exc:  # a truncated or forged report: fall back to progress
                outcomes = {}
                collection_errors = {"": f"unreadable JUnit report: {exc}"}
        if not outcomes and progress:
            outcomes = _from_progress(progress, result)
        crashed = not junit and not result.timed_out and result.exit_code not in (0, 1, 5)
        note = trim(result.output, 2000)
        for test_id in test_ids:
            if test_id in outcomes:
                continue
            under = [o for k, o in outcomes.items()
                     if k.startswith((test_id + "::", test_id + "[", test_id.rstrip("/") + "/"))]
            path = test_id.split("::")[0]
            if under:
                status = aggregate([o.status for o in under])
                bad = next((o for o in under if o.status == status), under[0])
                outcomes[test_id] = TestOutcome(test_id, status, bad.message,
                                                sum(o.duration for o in under))
            elif path in collection_errors:
                outcomes[test_id] = TestOutcome(test_id, "error", collection_errors[path])
            elif result.timed_out:
                outcomes[test_id] = TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            elif crashed:
                outcomes[test_id] = TestOutcome(
                    test_id, "error", f"pytest ended without a report (exit {result.exit_code}; "
                    f"137 = killed, e.g. by the memory or disk limit; 152 = its CPU-time limit): {note}")
            else:
                outcomes[test_id] = TestOutcome(test_id, "not_found", "no such test was collected")
        return outcomes


def _reported_files(reports: dict[str, bytes | None]) -> list[str]:
    """The test files a run reported on (JUnit `file` attributes, progress node ids)."""
    files: set[str] = set()
    for path, data in reports.items():
        if not data:
            continue
        if path.endswith("junit.xml"):
            files |= {m.decode(errors="replace")
                      for m in re.findall(rb'<testcase[^>]*?\sfile="([^"]+)"', data)}
        elif path.endswith("progress.jsonl"):
            files |= {m.decode(errors="replace") for m in re.findall(rb'"id": "([^":]+)::', data)}
    return sorted(files)


def _from_progress(data: bytes, result: ExecResult) -> dict[str, TestOutcome]:
    """Outcomes of the tests that finished before the run was killed; the running one timed out."""
    phases: dict[str, dict[str, str]] = {}
    for line in data.decode(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        phases.setdefault(rec["id"], {})
        if rec.get("when"):
            phases[rec["id"]][rec["when"]] = rec.get("outcome", "")
    outcomes: dict[str, TestOutcome] = {}
    for nodeid, seen in phases.items():
        setup, call, teardown = seen.get("setup"), seen.get("call"), seen.get("teardown")
        status: TestStatus
        if setup == "failed" or teardown == "failed":
            status = "error"
        elif setup == "skipped" or call == "skipped":
            status = "skipped"
        elif call in ("passed", "failed") and teardown:
            status = as_status(call)
        else:
            status = "timed_out" if result.timed_out else "error"
        message = ""
        if status == "timed_out":
            message = "the test run hit its timeout during this test"
        elif status == "error":
            message = (f"the test process ended during this test (exit {result.exit_code}; "
                       "137 = killed, e.g. by the memory or disk limit; 152 = its CPU-time limit)")
        outcomes[nodeid] = TestOutcome(nodeid, status, message)
    return outcomes
