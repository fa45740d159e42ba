"""Our own run of a Python witness: one test function per fresh process, no pytest.

A pytest run reports through objects the trial's code can reach (a library patching
`TestReport` at import, an exit hook rewriting the JUnit file). The own run is a second channel
the same trick does not reach: the run's root wrapper (sandbox/runners/pytest_runner.WRAPPER),
after the runner exited, starts `DRIVER` once per test function as the trial user; the driver
imports the test module the way pytest's default import mode does (the file's first folder
without `__init__.py` and the repo on sys.path), calls the function and exits 0 (passed),
1 (an assertion or `pytest.fail`), 2 (any other exception) or 3 (not measured here: the test
needs fixtures, parameters, is async or skips itself, or a conftest.py on its path has
autouse fixtures, plugins or run hooks the driver does not run). It reads a fresh nonce from stdin before
any of the repo's code is imported and prints it with its verdict last: a process that leaves
early with status 0 (`os._exit(0)` in library code) gives no verdict. The parent reads the exit
status and the nonce line; the verdict is never computed in pytest's reporting.

The same driver gives the *environment-varied replay*: another uid than the trial user
(VARIED_UID), a neutral argv[0], fresh HOME and TMPDIR, no PYTEST_* variables, and the clock
CLOCK_SHIFT_DAYS ahead (time, datetime; plus libfaketime for C code when the image has it).
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
OWN_TIMEOUT = 30  # seconds per own-run process
OWN_TOTAL = 90.0  # seconds for all of a run's own runs (the rest are "not measured")
VARIED_MARK = "[tj-varied-env]"  # outcome key suffix of a witness test's varied replay

DRIVER = r'''
import json, os, sys
_req = json.loads(sys.stdin.readline())
_nonce = _req.pop("nonce")
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

def _done(code):
    try:
        sys.stdout.flush()
        os.write(1, ("\nTJ-OWN %s %d\n" % (_nonce, code)).encode())
    finally:
        os._exit(code)

os.chdir(_req["workdir"])
_path = os.path.abspath(_req["file"])
_base, _mod = os.path.dirname(_path), [os.path.splitext(os.path.basename(_path))[0]]
while os.path.exists(os.path.join(_base, "__init__.py")):
    _mod.insert(0, os.path.basename(_base))
    _base = os.path.dirname(_base)
sys.path[:0] = [_base, _req["workdir"]]
sys.argv = [sys.argv[0]]
try:
    import importlib, inspect
    _obj = importlib.import_module(".".join(_mod))
    _parts = _req["name"].split("::")
    for _i, _p in enumerate(_parts):
        _obj = getattr(_obj, _p)
        if inspect.isclass(_obj) and _i < len(_parts) - 1:
            _obj = _obj()
            if hasattr(_obj, "setup_method"):
                _obj.setup_method(getattr(_obj, _parts[-1]))
    import unittest
    _owner = getattr(_obj, "__self__", None)
    if isinstance(_owner, unittest.TestCase):
        _case = type(_owner)(_parts[-1])
        _res = unittest.TestResult()
        _case.run(_res)
        _done(1 if _res.failures else 2 if _res.errors else 3 if _res.skipped else 0)
    if inspect.iscoroutinefunction(_obj) or inspect.signature(_obj).parameters:
        _done(3)
    _module = sys.modules[".".join(_mod)]
    # pytest's xunit-style setup: setup_module([module]), and setup_function([function]) for
    # module-level tests.
    for _hook, _arg in (("setup_module", _module), ("setup_function", _obj)):
        _fn = getattr(_module, _hook, None)
        if callable(_fn) and (_hook == "setup_module" or len(_parts) == 1):
            _fn(*([_arg] if inspect.signature(_fn).parameters else []))
    _obj()
except AssertionError:
    _done(1)
except BaseException as _exc:
    _kind = type(_exc).__name__
    _done(1 if _kind == "Failed" else 3 if _kind in ("Skipped", "XFailed") else 2)
_done(0)
'''

STATUS = {0: "passed", 1: "failed", 2: "error", 3: "not measured"}


def own_status(code: object) -> str:
    """What an own-run code the wrapper reported means ("no verdict": the process ended
    without the nonce line, "timed out": it hit OWN_TIMEOUT)."""
    if isinstance(code, int):
        return STATUS.get(code, "no verdict")
    return str(code or "no verdict")
