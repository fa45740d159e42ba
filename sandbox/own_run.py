"""Our own run of Python witnesses: one fresh process per run, no pytest.

A pytest run reports through objects the trial's code can reach (a library patching
`TestReport` at import, an exit hook rewriting the JUnit file). The own run is a second channel
the same trick does not reach: the run's root wrapper (sandbox/runners/run_wrapper.WRAPPER),
after the runner exited, starts `DRIVER` with the run's witness tests and a must-pass and a
must-fail canary test in random order (first in the varied environment below; again as the
trial user in the usual one only for what did not pass there, sandbox/channels.py); the driver
imports each test module
the way pytest's default import mode does (the file's first folder without `__init__.py` and
the repo on sys.path; a witness file's text comes on stdin, since the wrapper made the file
readable by root only, so code under test cannot read a test's expected values out of its
source), calls each test and prints, per test, a line with a fresh nonce (read
from stdin before any of the repo's code is imported) and its code: 0 passed, 1 an assertion or
`pytest.fail`, 2 any other exception, 3 not measured here (the test needs fixtures or
parameters, is async or skips itself; or a conftest.py on its path has autouse fixtures,
plugins or run hooks the driver does not run). A test without its line (the process left early,
e.g. `os._exit(0)` in library code) has no verdict. The wrapper reads the lines; the verdict is
never computed in pytest's reporting. The own run checks claimed passes: a test the runner's
JUnit report shows only failed, errored or skipped is not run again (4), and a run without any
witness test claimed passed starts no driver (its failures keep their kind from the report).
Its cost is one interpreter start (two when a test does not pass in the varied environment),
one pytest import where a witness imports it (kept across the test modules that import it, not
imported again per module) and the tests' own time. The wrapper gives the driver neither the
tests it would call in no environment (a test function taking fixtures or parameters, or an
async one, as the witness text shows: 3 without a process) nor the canary file's other lines
(the error canary's fixture and its `import pytest`: pytest's run alone needs them).

The same driver gives the *environment-varied replay*: another uid than the trial user
(VARIED_UID), a neutral argv[0], fresh HOME and TMPDIR, no PYTEST_* variables, and the clock
CLOCK_SHIFT_DAYS ahead (libfaketime, in our base image, for the whole process; where an image
lacks it, the driver shifts Python's time and datetime itself).
A witness must come out the same there; see sandbox/channels.py for how both are judged.
"""
from __future__ import annotations

from .runners.base import OUT_ROOT
from .trial_user import TRIAL_UID

DRIVER_PATH = f"{OUT_ROOT}/own_run.py"  # a neutral name: the trial may read /proc/self/cmdline
VARIED_UID = TRIAL_UID + 1  # owns nothing in the repo: a uid the trial cannot have hard-coded
CLOCK_SHIFT_DAYS = 400
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
MAX_OWN = 24  # test functions per run given an own run (a witness file holds a few)
OWN_TIMEOUT = 60  # seconds per own-run process
OWN_TOTAL = 90.0  # CPU seconds for all of a run's own runs (the rest are "not measured")
OWN_WALL = 300.0  # wall seconds for them in a run without a timeout (else 0.9 of it)
VARIED_MARK = "[tj-varied-env]"  # outcome key suffix of a witness test's varied replay

DRIVER = r'''
import json, os, sys
_req = json.loads(sys.stdin.readline())
_nonce = _req.pop("nonce")
_sources = _req.pop("sources", None) or {}
sys.stdin.close()
_shift = float(_req.get("shift") or 0)
if _shift:
    import time as _t, datetime as _dt
    _real_time, _real_ns, _real_strftime = _t.time, _t.time_ns, _t.strftime
    _t.time = lambda: _real_time() + _shift
    _t.time_ns = lambda: _real_ns() + int(_shift * 1e9)
    def _shifted(f):
        return lambda secs=None: f(_t.time() if secs is None else secs)
    for _n in ("localtime", "gmtime", "ctime"):
        setattr(_t, _n, _shifted(getattr(_t, _n)))
    _t.strftime = lambda fmt, tup=None: _real_strftime(fmt, _t.localtime() if tup is None else tup)
    class datetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(_t.time(), tz)
        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(_t.time())
        @classmethod
        def today(cls):
            return cls.fromtimestamp(_t.time())
    class date(_dt.date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(_t.time())
    datetime.__module__ = date.__module__ = "datetime"
    _dt.datetime, _dt.date = datetime, date

import importlib, importlib.util, inspect, unittest
os.chdir(_req["workdir"])
sys.argv = [sys.argv[0]]
_set_up = set()


def _say(index, code):
    sys.stdout.flush()
    os.write(1, ("\nTJ-OWN %s %d %d\n" % (_nonce, index, code)).encode())


def _module_of(path):
    given, path = path, os.path.abspath(path)
    base, mod = os.path.dirname(path), [os.path.splitext(os.path.basename(path))[0]]
    while os.path.exists(os.path.join(base, "__init__.py")):
        mod.insert(0, os.path.basename(base))
        base = os.path.dirname(base)
    for folder in (_req["workdir"], base):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    name = ".".join(mod)
    if name in sys.modules or given not in _sources:
        return importlib.import_module(name)
    # The file is unreadable to us (the wrapper hid it): the module is built from the text the
    # wrapper sent, under the file's own name, and the text is dropped before any of it runs.
    if len(mod) > 1:
        importlib.import_module(".".join(mod[:-1]))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, None, origin=path))
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(compile(_sources.pop(given), path, "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _run(path, name):
    module = _module_of(path)
    if module.__name__ not in _set_up:
        _set_up.add(module.__name__)
        hook = getattr(module, "setup_module", None)
        if callable(hook):
            hook(*([module] if inspect.signature(hook).parameters else []))
    obj, parts = module, name.split("::")
    for i, part in enumerate(parts):
        obj = getattr(obj, part)
        if inspect.isclass(obj) and i < len(parts) - 1:
            obj = obj()
            if hasattr(obj, "setup_method"):
                obj.setup_method(getattr(obj, parts[-1]))
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, unittest.TestCase):
        case, res = type(owner)(parts[-1]), unittest.TestResult()
        case.run(res)
        return 1 if res.failures else 2 if res.errors else 3 if res.skipped else 0
    if inspect.iscoroutinefunction(obj) or inspect.signature(obj).parameters:
        return 3
    hook = getattr(module, "setup_function", None)
    if callable(hook) and len(parts) == 1:
        hook(*([obj] if inspect.signature(hook).parameters else []))
    obj()
    return 0


_pytest_kept = {}


class _KeptPytest(object):
    # The next `import pytest` (or of one of its modules) after an unload brings back the
    # modules unloaded, all at once, instead of importing pytest again: a run whose test
    # modules all import pytest paid a full pytest import per module (most of its time).
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _pytest_kept:
            return None
        sys.modules.update(_pytest_kept)
        return importlib.util.spec_from_loader(name, _KeptPytest)

    @staticmethod
    def create_module(spec):
        return _pytest_kept[spec.name]

    @staticmethod
    def exec_module(module):
        pass


sys.meta_path.insert(0, _KeptPytest)


def _unload_pytest():
    # A canary module imports pytest: no test of ours runs with pytest in sys.modules (the
    # modules keep their own references; a later `import pytest` brings it back, _KeptPytest).
    for _k in [k for k in sys.modules if k == "pytest" or k.startswith(("_pytest", "pytest.", "py."))]:
        _pytest_kept[_k] = sys.modules.pop(_k)


for _index, (_path, _name) in enumerate(_req["tests"]):
    try:
        _module_of(_path)
        _unload_pytest()
        _code = _run(_path, _name)
    except AssertionError:
        _code = 1
    except BaseException as _exc:
        _kind = type(_exc).__name__
        _code = 1 if _kind == "Failed" else 3 if _kind in ("Skipped", "XFailed") else 2
    _say(_index, _code)
sys.stdout.flush()
os._exit(0)
'''

NOT_RUN = "not run (the report does not pass it)"
# 4: the wrapper did not run it: the runner's report shows it failed, errored or skipped, or no
# witness test of the run passed there (a claimed pass is what the own run checks).
NOT_NEEDED = "not run (no channel is judged on this world; the varied replay passed)"
# 5: on the reference world our own run is only needed where the varied replay does not pass
# (a canary left out of the usual environment's run on a model world is 5 too).
STATUS = {0: "passed", 1: "failed", 2: "error", 3: "not measured", 4: NOT_RUN, 5: NOT_NEEDED}


def own_status(code: object) -> str:
    """What an own-run code the wrapper reported means ("no verdict": the process ended
    without the nonce line, "timed out": it hit OWN_TIMEOUT)."""
    if isinstance(code, int):
        return STATUS.get(code, "no verdict")
    return str(code or "no verdict")
