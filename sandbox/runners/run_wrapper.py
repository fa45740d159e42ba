"""The root wrapper of a test run: the Python program that runs inside a world as the run's main
process (as root), writes the run's files, starts the runner's launcher as the trial user, and
after it exits reads the reports, our own per-test runs (`_tj_own_runs` for pytest,
`_tj_exec_runs` for every other runner) and writes it all back as one trailer. Every runner's
run goes through it (`PytestRunner.inline_command`, which the other runners reuse)."""
from __future__ import annotations

from .gate import GATE
from .wrapper_reads import READS

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

""" + GATE + READS + r"""
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

# Processes our channels started (the run's bookkeeping, in its trailer): builds, own runs, varied.
_tj_starts = {"build": 0, "own": 0, "varied": 0}

def _tj_faked_clock(own):
    # The date only: a faked monotonic clock hangs vitest's workers.
    return {"LD_PRELOAD": own["faketime"], "FAKETIME": "+%dd" % own["days"], "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


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
        if faked:
            env.update(_tj_faked_clock(own))
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
    _tj_starts["varied" if varied else "own"] += 1
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

def _tj_own_budget(own, ran):
    # What our own runs may take: wall time within nine tenths of the run's timeout after the
    # runner (RAN seconds), so they never make the run time out, and own["total"] CPU seconds
    # of their processes (a loaded machine stretches the wall time of an honest test's process,
    # not its CPU time: it keeps its channels). (wall seconds, CPU seconds spent so far).
    wall = own["run_timeout"] * 0.9 - ran if own.get("run_timeout") else own["wall"]
    first = os.times()
    def spent():
        now = os.times()
        return now.children_user + now.children_system - first.children_user - first.children_system
    return wall, spent

def _tj_own_runs(own, uid, ran, junit):
    import time
    # The canary files come last: always run, whatever the number of witness tests.
    cut = len(own["files"]) - own.get("canary_files", 0)
    tests = [(p, n) for p, names in own["files"][:cut] for n in (names or _tj_tests_in(p))][:own["max"]]
    witnesses = len(tests)
    tests += [(p, n) for p, names in own["files"][cut:] for n in names]
    keys = [p + "::" + n for p, n in tests]
    normal, varied = dict((k, 3) for k in keys), {}  # 3: not measured
    left, spent = _tj_own_budget(own, ran)
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
    idle = _tj_idle(sources)
    for path, names in own["files"][cut:]:
        if path in sources:
            sources[path] = _tj_only(sources[path], names)
    todo = [i for i in todo if i >= witnesses or tests[i] not in idle]

    def drive(indices, vary, budget):
        got = _tj_drive(own, [tests[i] for i in indices], other if vary else uid, vary, budget, sources)
        return dict((keys[i], got[j]) for j, i in enumerate(indices))

    if not own.get("vary"):
        if todo and left >= 2:
            normal.update(drive(todo, False, left))
        return normal, varied
    # The varied replay runs first, the canaries with the witnesses in it; our own run in the
    # usual environment only for what does not pass there (sandbox/channels.py).
    if todo and left >= 2:
        varied.update(drive(todo, True, left / 2))
    musts = own.get("canary_must") or {}
    again = _tj_vouch([keys[i] for i in todo if i < witnesses], musts, normal, varied, own.get("channel", True), (1, 2))
    left -= time.time() - started
    if again and left >= 1 and spent() < own["total"]:
        normal.update(drive([i for i in todo if keys[i] in again or keys[i] in musts], False, left))
    return _tj_settle([keys[i] for i in todo if i < witnesses], musts, normal, varied)

def _tj_vouch(witnesses, musts, normal, varied, channel, failed):
    # A varied pass is our own run's pass (0) where the canaries in the same run came out as
    # they must (a must-pass passed, a must-fail failed: a code in FAILED; none run: not so);
    # where no channel is judged (the reference) it needs nothing more (5). The rest: to run
    # again in the usual environment, to tell the environment (passes there) from the runner.
    right = not channel or (bool(musts) and all(varied.get(k) == 0 if m == "passed" else varied.get(k) in failed
                                                for k, m in musts.items()))
    for key in witnesses:
        if varied.get(key) == 0 and right:
            normal[key] = 0 if channel else 5
    return [k for k in witnesses if normal[k] not in (0, 5)]

def _tj_settle(witnesses, musts, normal, varied):
    # A canary the usual environment did not run again was not needed there (5); a witness our
    # own run does not pass keeps no varied result (that replay speaks of own-run passes).
    for key in musts:
        if normal.get(key) == 3 and key in varied:
            normal[key] = 5
    for key in witnesses:
        if normal[key] not in (0, 5):
            varied.pop(key, None)
    return normal, varied

def _tj_exec_runs(own, uid, ran):
    # Our own runs for runners other than pytest (sandbox/own_exec.py): each test in a fresh
    # process of the runner's own (a test binary, or its launcher without reporters), whose
    # verdict is its exit status read here. Binaries are built as the trial user, then copied
    # by this process into a folder of root's, so nothing the tests start can replace them.
    import random, shutil, tempfile, time
    left, spent = _tj_own_budget(own, ran)
    started = time.time()
    keys = [k for k, _ in own["tests"]][:own["max"]]
    normal, varied = dict((k, 3) for k in keys), {}
    tests = dict(own["tests"])
    def remaining():
        # Wall seconds left; none once the CPU seconds are spent.
        return left - (time.time() - started) if spent() < own["total"] else 0
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
    def call(argv, cwd, env, ids, timeout, out=None, kind="own"):
        _tj_starts[kind] += 1
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
        if call(argv, build.get("cwd"), _tj_env, _tj_owner, min(own["timeout"], remaining()), log, "build") != 0:
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
            if os.path.exists(own["faketime"]):
                env.update(_tj_faked_clock(own))
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
            got[key] = call(argv, test.get("cwd"), env, who, min(own["timeout"], remaining()),
                            kind="varied" if vary else "own")
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
        if hint[1] == "json":
            return _tj_json_failed(text, hint[2], hint[3])
        # Failed, and passed nowhere in it (a forged pass line after the failure must be checked).
        return bool(re.search(hint[1], text, re.M)) and not re.search(hint[2], text, re.M)
    todo = [k for k in keys if not tests[k].get("canary") and not reported_failed(k)]
    cans = [k for k in keys if tests[k].get("canary")] if todo else []
    if not own.get("vary"):
        normal.update(run_all(todo + cans, _tj_owner, False))
        return normal, varied
    # The varied replay first, the canaries with it; then the usual environment (_tj_own_runs).
    other = (own["varied_uid"], own["varied_uid"]) if os.getuid() == 0 else _tj_owner
    varied = run_all(todo + cans, other, True)
    musts = dict((k, tests[k]["canary"]) for k in cans)
    again = _tj_vouch(todo, musts, normal, varied, own.get("channel", True), (1,))
    if again:
        normal.update(run_all(again + (cans if own.get("channel", True) else []), _tj_owner, False))
    return _tj_settle(todo, musts, normal, varied)

_tj_since = _tj_started("self")
import time as _tj_time
_tj_wall0 = _tj_time.time()
_tj_code = subprocess.call([sys.executable] + list(_tj["argv"]), env=_tj_env, close_fds=True,
                           cwd=_tj["repo"], preexec_fn=_tj_child)
_tj_cpu_runner = sum(os.times()[2:4])
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
_tj_extra["cost"] = {"starts": _tj_starts, "cpu_runner": round(_tj_cpu_runner, 2),
                     "cpu_channels": round(sum(os.times()[2:4]) - _tj_cpu_runner, 2)}
_tj_trailer(_tj["mark"], dict(_tj_extra, reports=_tj_reports, restored=_tj_restored, code=_tj_code))
sys.exit(128 - _tj_code if _tj_code < 0 else _tj_code)
"""
