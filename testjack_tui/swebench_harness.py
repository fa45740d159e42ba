"""SWE-bench family T0: the harness's per-repository test command and log parser, in one place
(the loaders name a task's command and parser with it, the sandbox runs and reads T0 with it,
the export lists new ids in its parser's scheme). It imports nothing of ours: it sits below the
loaders and the sandbox.

The harness resets the files `test_patch` touches, applies it, runs the repository's test
command on the *test directives* (the files the test patch touches, minus non-test files; for
Django their dotted module names under `tests/`), and reads per-test statuses from the log with
the repository's parser. FAIL_TO_PASS / PASS_TO_PASS ids are in that parser's scheme: pytest
`-rA` summary ids (`tests/test_x.py::test_y[param]`), Django runner descriptions
(`test_y (app.tests.ClassTests)`), sympy `bin/test` names (`test_y`). A world prepared by the
sandbox already holds the patch and T0 exactly as the harness applies them, so the command runs
there and its full log (not the capped head/tail) is parsed.

Upstream pin: the rules below are those of SWE-bench commit
fdefc6a273929948d1c43359f5f1b40eeb33b2f7 (swebench/harness/constants/python.py: the test
commands per repository and version; test_spec/python.py: get_test_directives;
log_parsers/python.py: the parsers), written again here, plus upstream's later skip-summary
filter: a pytest `SKIPPED [N] path:line: reason` summary line counts N skips and names no test
(SWE-bench issue #660 quotes the filter and why it is scoped to SKIPPED). When upstream
changes, compare these files at the new commit, update the rules and this pin together, and
extend tests/fixtures/swebench_logs.

Covered: django/django (runtests.py), sympy/sympy (bin/test), sphinx-doc/sphinx (tox), and the
pytest repositories of PYTEST_REPOS. Other repositories fall back to pytest `-rA` on the
directives (our choice: the harness has no rule for them).
"""
from __future__ import annotations

import re
from typing import Callable

PYTEST_RA = "pytest --no-header -rA --tb=no -p no:cacheprovider"
DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
DJANGO_NO_PARALLEL = "./tests/runtests.py --verbosity 2"
SYMPY = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
# sphinx runs pytest through tox; its images' tox.ini was edited at build time to pass -rA.
SPHINX = "tox --current-env -epy39 -v --"
ASTROPY_OLD = "pytest -rA -vv -o console_output_style=classic --tb=no"
PYTEST_REPOS = {
    "astropy/astropy": "pytest -rA",
    "marshmallow-code/marshmallow": "pytest -rA",
    "matplotlib/matplotlib": "pytest -rA",
    "mwaskom/seaborn": "pytest --no-header -rA",
    "pallets/flask": "pytest -rA",
    "psf/requests": "pytest -rA",
    "pvlib/pvlib-python": "pytest -rA",
    "pydata/xarray": "pytest -rA",
    "pydicom/pydicom": "pytest -rA",
    "pylint-dev/astroid": "pytest -rA",
    "pylint-dev/pylint": "pytest -rA",
    "pytest-dev/pytest": "pytest -rA",
    "pyvista/pyvista": "pytest -rA",
    "scikit-learn/scikit-learn": "pytest -rA",
    "sqlfluff/sqlfluff": "pytest -rA",
}
# Where a repository's command depends on its version: (versions, command).
BY_VERSION = {
    "astropy/astropy": ({"0.1", "0.2", "0.3", "0.4", "1.1", "1.2", "1.3"}, ASTROPY_OLD),
    "scikit-learn/scikit-learn": ({"0.20", "0.21", "0.22"}, "pytest -v"),
}
# The harness's parser per repository where it is not plain `pytest`.
PYTEST_PARSER = {"psf/requests": "pytest_options", "pydicom/pydicom": "pytest_options",
                 "pylint-dev/pylint": "pytest_options", "astropy/astropy": "pytest_v2",
                 "scikit-learn/scikit-learn": "pytest_v2", "sphinx-doc/sphinx": "pytest_v2",
                 "matplotlib/matplotlib": "matplotlib", "mwaskom/seaborn": "seaborn"}
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
# Activate the harness images' conda environment when there is one.
ACTIVATE = ("if [ -f /opt/miniconda3/bin/activate ]; then . /opt/miniconda3/bin/activate "
            "&& conda activate testbed; fi")
STATUS = {"PASSED": "passed", "XFAIL": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped"}


def directives(repo: str, test_files: list[str]) -> list[str]:
    files = [f for f in test_files if not f.endswith(NON_TEST_EXTS)]
    if repo == "django/django":
        out = []
        for f in files:
            f = f[:-3] if f.endswith(".py") else f
            f = f[len("tests/"):] if f.startswith("tests/") else f
            out.append(f.replace("/", "."))
        return out
    return files


def test_command(repo: str, version: str, test_files: list[str]) -> tuple[str, str]:
    """(shell command, parser name) the harness uses for this repository and version."""
    if repo == "django/django":
        base, parser = (DJANGO_NO_PARALLEL if version == "1.9" else DJANGO), "django"
    elif repo == "sympy/sympy":
        base, parser = SYMPY, "sympy"
    elif repo == "sphinx-doc/sphinx":
        base, parser = SPHINX, "pytest_v2"
    else:
        versions, older = BY_VERSION.get(repo, (set(), ""))
        base = older if version in versions else PYTEST_REPOS.get(repo, PYTEST_RA)
        parser = PYTEST_PARSER.get(repo, "pytest")
    return " ".join([base, *directives(repo, test_files)]), parser


# ------------------------------------------------------------------------------------- parsers
HARNESS_STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")


_SKIP_SUMMARY = re.compile(r"\[\d+\]")


def _summary_entry(line: str) -> tuple[str, str] | None:
    """(test id, status) of a pytest `-rA` short-summary line, by the harness's rule: a line
    starting with a status word names its test in its second word (`FAILED id - message`: the
    ` - ` becomes a space first). `SKIPPED [N] path:line: reason` counts N skips: no test (only
    SKIPPED: a wrapped `PASSED [100%]` stays, two Verified PASS_TO_PASS lists expect it)."""
    if not line.startswith(HARNESS_STATUSES):
        return None
    if line.startswith("FAILED"):
        line = line.replace(" - ", " ")
    words = line.split()
    if len(words) < 2 or (words[0] == "SKIPPED" and _SKIP_SUMMARY.fullmatch(words[1])):
        return None
    return words[1], words[0]


def parse_pytest(log: str) -> dict[str, str]:
    """`-rA` short summary lines (`_summary_entry`)."""
    return dict(entry for line in log.split("\n") if (entry := _summary_entry(line)))


_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))


def parse_pytest_v2(log: str) -> dict[str, str]:
    """The harness's later pytest parser (astropy, scikit-learn, sphinx): colour codes and
    control characters removed; summary lines, else lines ending in a status (`id STATUS`),
    else lines holding one anywhere (older pytest's `id PASSED [ 10%]`)."""
    out: dict[str, str] = {}
    for raw in log.split("\n"):
        line = re.sub(r"\[(\d+)m", "", raw).translate(_CONTROL)
        words = line.split()
        if line.startswith(HARNESS_STATUSES):
            entry = _summary_entry(line)
            if entry:
                out[entry[0]] = entry[1]
        elif line.endswith(HARNESS_STATUSES) or any(s in line for s in HARNESS_STATUSES):
            if len(words) >= 2:
                out[words[0]] = words[1]
    return out


def parse_matplotlib(log: str) -> dict[str, str]:
    """pytest's rule, with matplotlib's MouseButton enum printed as the number its ids use."""
    return parse_pytest(log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3"))


def parse_seaborn(log: str) -> dict[str, str]:
    """seaborn: `FAILED id`, `id PASSED ...` (verbose) and `PASSED id` lines."""
    out: dict[str, str] = {}
    for line in log.split("\n"):
        words = line.split()
        if line.startswith("FAILED") and len(words) > 1:
            out[words[1]] = "FAILED"
        elif " PASSED " in line and len(words) > 1 and words[1] == "PASSED":
            out[words[0]] = "PASSED"
        elif line.startswith("PASSED") and len(words) > 1:
            out[words[1]] = "PASSED"
    return out


def parse_pytest_options(log: str) -> dict[str, str]:
    """pytest `-rA`, with path-like parameters shortened to their last component."""
    out: dict[str, str] = {}
    for test_id, status in parse_pytest(log).items():
        match = re.search(r"(.*?)\[(.*)\]", test_id)
        if match:
            main, option = match.groups()
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                option = "/" + option.split("/")[-1]
            test_id = f"{main}[{option}]"
        out[test_id] = status
    return out


DJANGO_PASS = (" ... ok", " ... OK", " ...  OK")
# django__django-7188: a migration line runs into the test's description on the same line.
DJANGO_7188 = "Applying sites.0002_alter_domain_unique...test_no_migrations"
# A long print can cut a test's line before its `ok`, in three known forms; the harness reads
# those tests as passed.
DJANGO_INTERRUPTED = (
    r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
    r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
    r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
)


def parse_django(log: str) -> dict[str, str]:
    """Django's runner at verbosity 2, read by the harness's rules (each rule applies to every
    line on its own, later ones win): `desc ... ok|OK|skipped|FAIL|ERROR`; a `FAIL:`/`ERROR:`
    header keys its *first word* only (so a test failing only in subtests, which has no line of
    its own, is missing: the harness grades missing as failing); a line starting with `ok`
    closes the last `desc ... ` line; `expected failure` and `unexpected success` lines are not
    read (missing). Witness runs read more from the same log (sandbox/runners/django_runner.py)."""
    out: dict[str, str] = {}
    last = None
    for raw in log.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            out["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            last = line.split(" ... ")[0]
        for suffix in DJANGO_PASS:
            if line.endswith(suffix):
                if line.startswith(DJANGO_7188):
                    line = line.split("...", 1)[-1].strip()
                out[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            out[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            out[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:") and len(line.split()) > 1:
            out[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            out[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:") and len(line.split()) > 1:
            out[line.split()[1].strip()] = "ERROR"
        if line.startswith("ok") and last is not None:
            out[last] = "PASSED"
    for pattern in DJANGO_INTERRUPTED:
        for m in re.finditer(pattern, log, re.MULTILINE):
            out[m.group(1)] = "PASSED"
    return out


def parse_sympy(log: str) -> dict[str, str]:
    """sympy's bin/test --verbose, by the harness's rules: `___ path.py:test_x ___` failure
    banners (found anywhere in the log, underscores optional) and `test_x ok|F|E` lines."""
    out: dict[str, str] = {}
    for _, path, name, _ in re.findall(r"(_*) (.*)\.py:(.*) (_*)", log):
        out[f"{path}.py:{name}"] = "FAILED"
    for raw in log.split("\n"):
        line = raw.strip()
        if line.startswith("test_"):
            name = line.split()[0]
            if line.endswith(" E"):
                out[name] = "ERROR"
            if line.endswith(" F"):
                out[name] = "FAILED"
            if line.endswith(" ok"):
                out[name] = "PASSED"
    return out


PARSERS: dict[str, Callable[[str], dict[str, str]]] = {
    "pytest": parse_pytest, "pytest_options": parse_pytest_options, "pytest_v2": parse_pytest_v2,
    "matplotlib": parse_matplotlib, "seaborn": parse_seaborn, "django": parse_django,
    "sympy": parse_sympy,
}


def parse_log(parser: str, log: str) -> dict[str, str]:
    """{test id: our status} from a test log, by the harness's parser for the repository."""
    return {test_id: STATUS.get(status, "failed") for test_id, status in PARSERS[parser](log).items()}


def parser_id(parser: str, nodeid: str) -> str:
    """The id a repository's log parser gives a test we know by its pytest node id (how exported
    witnesses are listed in FAIL_TO_PASS / PASS_TO_PASS)."""
    path, _, rest = nodeid.partition("::")
    parts = rest.split("::") if rest else []
    if parser == "django" and len(parts) >= 2:
        module = path[:-3] if path.endswith(".py") else path
        module = module[len("tests/"):] if module.startswith("tests/") else module
        return f"{parts[-1]} ({module.replace('/', '.')}.{'.'.join(parts[:-1])})"
    if parser == "sympy" and parts:
        return parts[-1]
    return nodeid
