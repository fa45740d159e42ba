"""What the run wrapper (sandbox/runners/run_wrapper.WRAPPER) reads as root, after the runner
exited, to decide which of our own runs to start: a witness file's test functions, the conftest
files our driver does not support, the tests the driver calls in no environment, and what the
runner's reports show only as not passed. Text, joined into the wrapper (it runs as
`python3 -I -S -c`), not imported there; kept here so run_wrapper stays small."""
from __future__ import annotations

READS = r"""
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

def _tj_idle(sources):
    # (path, name) of the witness tests the driver calls in no environment (3: they take fixtures
    # or parameters, or are async; no decorator but pytest's marks, no setup_module): read from
    # the text the driver gets, before any run, so they start no process (nor a second one in the
    # usual environment, where a 3 was run again only to come out 3).
    import ast
    def marks(d):
        d = d.func if isinstance(d, ast.Call) else d
        while isinstance(d, ast.Attribute) and not (d.attr == "mark" and getattr(d.value, "id", "") == "pytest"):
            d = d.value
        return isinstance(d, ast.Attribute)
    out = set()
    for path, text in sources.items():
        try:
            body = [] if "setup_module" in text else ast.parse(text).body
        except Exception:
            continue
        for f in body:
            a = getattr(f, "args", None)
            if (isinstance(f, ast.AsyncFunctionDef) or (isinstance(f, ast.FunctionDef) and (
                    getattr(a, "posonlyargs", None) or a.args or a.vararg or a.kwonlyargs or a.kwarg))) \
                    and all(marks(d) for d in f.decorator_list) and text.count(f.name) == 1:
                out.add((path, f.name))
    return out

def _tj_only(text, names):
    # A canary file as our driver gets it: the canary tests it runs, every other line blank (the
    # line numbers kept). Without the `import pytest` of the error canary's fixture (pytest's run
    # alone needs it), a driver whose witnesses do not import pytest does not import it either.
    # The whole text where a test is decorated or not found, or ast has no end lines (< 3.8).
    import ast
    try:
        found = dict((f.name, f) for f in ast.parse(text).body if isinstance(f, ast.FunctionDef))
        keep = set()
        for name in names:
            if found[name].decorator_list:
                return text
            keep.update(range(found[name].lineno, found[name].end_lineno + 1))
    except Exception:
        return text
    return "\n".join(line if i in keep else "" for i, line in enumerate(text.split("\n"), 1))

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

def _tj_json_failed(text, path, name):
    # A jest-style JSON report (node-report.json) shows the file PATH (repo-relative), or its
    # tests under NAME (" > "-joined titles), only as not passed: failed, errored or skipped
    # tests, or a file that failed to load. Anything unclear (no report, no such test, a pass
    # anywhere among them) is not.
    try:
        doc = json.loads(text)
        found = []
        for suite in doc.get("testResults") or []:
            file = str(suite.get("name") or "")
            if file not in (path, os.path.join(_tj["repo"], path)):
                continue
            tests = suite.get("assertionResults") or []
            if not tests and suite.get("status") == "failed":
                found.append("failed")
            for a in tests:
                title = " > ".join([str(t) for t in (a.get("ancestorTitles") or []) if t] + [str(a.get("title") or "")])
                if not name or title == name or title.startswith(name + " > "):
                    found.append(a.get("status"))
        return bool(found) and "passed" not in found
    except Exception:
        return False
"""
