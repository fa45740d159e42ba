"""The launcher script that runs inside a world for vitest, jest, mocha and `node --test`: it
picks the tool, fits the repository's config to the requested files, builds the command and
writes the per-test report (see sandbox/runners/node_runner.py for ids and outcome keys). It is
text, not imported: it runs under the world's python3."""
from .base import LAUNCHER_PRELUDE, OUT_ROOT
from .node_fit import FIT


LAUNCHER_PATH = f"{OUT_ROOT}/node_launch.py"
REPORT = "node-report.json"
PLAN = "node-plan.json"
LOG = "node-run.log"

LAUNCHER = LAUNCHER_PRELUDE + r'''import shlex

TOOLS = ("vitest", "jest", "mocha", "node")
EXTS = (".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts")

def package():
    try:
        data = json.load(open("package.json"))
    except (IOError, OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

def installed(tool):
    return tool == "node" or os.path.exists(os.path.join("node_modules", ".bin", tool))

def script_tool(pkg):
    # The tool the package's own test script runs: `vitest`, `jest`, `mocha` or `node --test`.
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    script = str(scripts.get("test") or "")
    found = [(m.start(), m.group(1)) for m in re.finditer(r"(?<![\w@/-])(vitest|jest|mocha)(?![\w-])", script)]
    node = re.search(r"(?<![\w/-])node\b[^&|;]*\s--test(?![\w-])", script)
    if node:
        found.append((node.start(), "node"))
    return min(found)[1] if found else None

# Options of the package's test script that decide how its tests load and run (setup modules,
# loaders, the interface, timeouts, --exit); reporting, selection and spec options are ours.
PASS = {
    "mocha": ({"--require", "-r", "--ui", "-u", "--timeout", "-t", "--extension", "--file",
               "--node-option", "-n", "--loader", "--retries", "--slow", "-s"},
              {"--exit", "--async-only", "-A", "--check-leaks", "--full-trace", "--inline-diffs",
               "--allow-uncaught", "--no-timeouts", "--delay", "--sort", "-S", "--enable-source-maps"}),
    "node": ({"--import", "--require", "-r", "--loader", "--experimental-loader", "--conditions", "-C"},
             {"--enable-source-maps", "--no-warnings", "--expose-gc", "--preserve-symlinks"}),
}

def script_options(pkg, tool):
    """(options, environment) the test script gives `tool` (mocha or node --test)."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    for part in re.split(r"&&|\|\||[;|]", str(scripts.get("test") or "")):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        names = [os.path.basename(w) for w in words]
        if tool not in names or (tool == "node" and "--test" not in words):
            continue
        at = names.index(tool)
        env = dict(w.split("=", 1) for w in words[:at] if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w))
        takes, flags = PASS[tool]
        kept, rest, i = [], words[at + 1:], 0
        while i < len(rest):
            word = rest[i]
            name = word.split("=", 1)[0]
            if name in takes:
                kept += [word] if "=" in word else rest[i:i + 2]
                i += 0 if "=" in word else 1
            elif name in flags or (name.startswith("--experimental-") and "coverage" not in name):
                kept.append(word)
            i += 1
        return kept, env
    return [], {}

def choose_tool(declared):
    # The task's declared tool when it is there, else the test script's, else a devDependency.
    if declared in TOOLS and installed(declared):
        return declared
    pkg = package()
    tool = script_tool(pkg)
    if tool and installed(tool):
        return tool
    have = {}
    for key in ("devDependencies", "dependencies"):
        if isinstance(pkg.get(key), dict):
            have.update(pkg[key])
    return next((t for t in TOOLS[:3] if t in have and installed(t)), None)

def titles_of(test_id):
    # The describe/test titles an id names, or None for a whole file or a jest full name.
    if "::" in test_id:
        name = test_id.split("::", 1)[1]
    else:
        head, sep, name = test_id.partition(": ")
        if not (sep and ("/" in head or head.endswith(EXTS))):
            return None
    return name.split(" > ") if name else None

def js_regex(text):
    return re.sub(r"[\\^$.*+?()[\]{}|/-]", lambda m: "\\" + m.group(0), text)

def name_pattern(tool, ids):
    # Single-test selection: only when every id names tests inside a file.
    wanted = [titles_of(i) for i in ids]
    if not wanted or any(w is None for w in wanted):
        return None
    alts = []
    for titles in wanted:
        full = js_regex(" ".join(titles))
        if tool == "mocha":  # matched against the full title (describe titles and the test's)
            alts.append(full + "(?: |$)")
        else:  # node matches each test's own name (older) or its full name (newer)
            alts += [js_regex(titles[-1]) + "$", full + "(?: |$)"]
    return "^(?:" + "|".join(dict.fromkeys(alts)) + ")"

def node_version():
    try:
        out = subprocess.run(["node", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
        return tuple(int(x) for x in re.findall(rb"\d+", out)[:2])
    except (OSError, ValueError):
        return ()

def vitest_coverage():
    return next((p for p in ("v8", "istanbul")
                 if os.path.isdir(os.path.join("node_modules", "@vitest", "coverage-" + p))), None)

def coverage_args(tool):
    # Ghost lines: the runner's own coverage as istanbul JSON (coverage-final.json).
    where = spec.get("istanbul_dir")
    if not where:
        return []
    if tool == "jest":
        return ["--coverage", "--coverageReporters=json", "--coverageDirectory=" + where]
    provider = vitest_coverage()
    if tool == "vitest" and provider:
        return ["--coverage.enabled=true", "--coverage.provider=" + provider, "--coverage.all=false",
                "--coverage.reporter=json", "--coverage.reportsDirectory=" + where]
    return []

''' + FIT + r'''
def focus(tool, files):
    """(options, notes) fitting a run of the named files to the repo's test configuration."""
    if not files:
        return [], []
    return jest_focus(files) if tool == "jest" else vitest_focus(files) if tool == "vitest" else ([], [])

def command(tool, files, pattern, report, fitted=()):
    if spec.get("plain"):
        return plain_command(tool, files, pattern, fitted)
    binary = os.path.join("node_modules", ".bin", tool)
    if tool == "vitest":
        return ([binary, "run", "--reporter=json", "--outputFile=" + report, "--no-color"] + coverage_args(tool)
                + list(fitted) + files)
    if tool == "jest":
        args = [binary, "--json", "--outputFile=" + report, "--ci", "--watchAll=false", "--colors=false"]
        return args + coverage_args(tool) + (list(fitted) + ["--runTestsByPath"] + files if files else [])
    if tool == "mocha":
        args = [binary] + script_options(package(), "mocha")[0]
        args += ["--reporter", spec["mocha_reporter"], "--reporter-option", "output=" + report]
        if files:  # the repo's options without its spec: only these files load
            args += ["--config", spec["mocha_config"], "--no-package"]
        return args + (["--grep", pattern] if pattern else []) + files
    args = ["node"] + script_options(package(), "node")[0]
    args += ["--test", "--test-reporter=" + spec["node_reporter"], "--test-reporter-destination=" + report]
    return args + (["--test-name-pattern=" + pattern] if pattern else []) + files

def plain_command(tool, files, pattern, fitted=()):
    # Our own run of one test or file (sandbox/own_exec.py): the same tool, options and files,
    # the tool's default reporter, and only its exit status is read (by our root wrapper).
    binary = os.path.join("node_modules", ".bin", tool)
    if tool == "vitest":
        return [binary, "run", "--no-color"] + list(fitted) + (["-t", pattern] if pattern else []) + files
    if tool == "jest":
        return ([binary, "--ci", "--watchAll=false", "--colors=false"] + (["-t", pattern] if pattern else [])
                + list(fitted) + ["--runTestsByPath"] + files)
    if tool == "mocha":
        args = [binary] + script_options(package(), "mocha")[0] + ["--reporter", "dot"]
        if files:
            args += ["--config", spec["mocha_config"], "--no-package"]
        return args + (["--grep", pattern] if pattern else []) + files
    args = ["node"] + script_options(package(), "node")[0] + ["--test"]
    return args + (["--test-name-pattern=" + pattern] if pattern else []) + files

def module_kind(path):
    if path.endswith((".mjs", ".mts")):
        return "esm"
    if path.endswith((".cjs", ".cts")):
        return "cjs"
    return "esm" if package().get("type") == "module" else "cjs"

def canary_header(tool, path):
    # A canary (sandbox/canaries.py) calls describe/it/a before-all hook through three local
    # names; this is where each tool gets them from.
    if tool == "vitest":
        return 'import { describe as __tjD, it as __tjI, beforeAll as __tjB } from "vitest";'
    if tool == "node":
        if module_kind(path) == "esm":
            return 'import { describe as __tjD, it as __tjI, before as __tjB } from "node:test";'
        return 'const { describe: __tjD, it: __tjI, before: __tjB } = require("node:test");'
    ts = path.endswith((".ts", ".tsx", ".mts", ".cts"))
    g = "(globalThis as any)" if ts else "globalThis"
    return (("export {};\n" if ts else "") + "const __tjD = {g}.describe || {g}.suite, __tjI = {g}.it || "
            "{g}.test, __tjB = {g}.beforeAll || {g}.before || {g}.suiteSetup;").replace("{g}", g)

def fill_canary(tool, path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (IOError, OSError, ValueError):
        return
    mark = "/* tj-canary: header */\n"
    if text.startswith(mark):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(canary_header(tool, path) + "\n" + text[len(mark):])

declared = (spec.get("framework") or "").lower()
tool = choose_tool(declared)
plan = {"tool": tool, "files": {}, "workdir": workdir}
files = []
for test_id in spec["ids"]:
    path = test_id.split("::", 1)[0].split(": ", 1)[0]
    if path.endswith(EXTS):
        plan["files"][path] = os.path.isfile(path)
        if os.path.isfile(path) and path not in files:
            files.append(path)
            fill_canary(tool, path)
if any(titles_of(i) is None and not i.endswith(EXTS) for i in spec["ids"]):
    files = []  # a jest full name may be in any file: the whole suite runs (the canaries too)
if tool == "node" and node_version() < (18, 15):
    plan["tool"] = None
    plan["why"] = "node %s has no --test-reporter (18.15 or later)" % ".".join(map(str, node_version()))
with open(os.path.join(out_dir, "node-plan.json"), "w") as fh:
    json.dump(plan, fh)
if plan["tool"] is None:
    print("TJ_NODE no test runner: " + plan.get("why", "no vitest, jest or mocha in node_modules/.bin "
          "and no `node --test` test script"), flush=True)
    sys.exit(4)
report = os.path.join(out_dir, "node-report.json")
pattern = name_pattern(tool, spec["ids"]) if tool in ("mocha", "node") else None
if spec.get("plain") and tool in ("jest", "vitest"):
    # jest's and vitest's -t reads a test's full name, which vitest starts with its file's
    # (empty) suite name: the titles at the end of it.
    wanted = [titles_of(i) for i in spec["ids"]]
    if wanted and all(wanted):
        pattern = "(?:^|\\s)(?:" + "|".join(js_regex(" ".join(t)) for t in wanted) + ")$"
env = dict(os.environ)
if tool in PASS:
    env.update(script_options(package(), tool)[1])
env.update(CI="1", NO_COLOR="1", FORCE_COLOR="0")
if spec.get("v8_coverage"):  # ghost lines: V8 block counts of every node process of the run
    env["NODE_V8_COVERAGE"] = spec["v8_coverage"]
log = open(os.path.join(out_dir, "node-run.log"), "wb")

def run(args):
    print("TJ_NODE " + " ".join(args), flush=True)
    log.write(("$ " + " ".join(args) + "\n").encode())
    log.flush()
    return subprocess.call(args, stdout=log, stderr=subprocess.STDOUT, env=env)

# Printed before any code of the repo runs (the engine believes only these first lines).
fitted, notes = focus(tool, files)
for note in notes:
    print("TJ_CONFIG " + note, flush=True)
print("TJ_FILES " + json.dumps(files), flush=True)
code = run(command(tool, files, pattern, report, fitted))
if tool == "mocha" and not os.path.exists(report) and len(files) > 1:
    # mocha loads every file before it runs any: one that fails to load ends the whole run.
    # Once more file by file, so the others still report and the broken one is named.
    merged = []
    for index, path in enumerate(files):
        part = os.path.join(out_dir, "mocha-%d.json" % index)
        start = log.tell()
        part_code = run(command(tool, [path], pattern, part))
        try:
            merged += json.load(open(part)).get("testResults") or []
        except (IOError, OSError, ValueError):
            log.flush()
            with open(os.path.join(out_dir, "node-run.log"), "rb") as fh:
                fh.seek(start)
                why = fh.read()[-3000:].decode(errors="replace")
            merged.append({"name": os.path.join(workdir, path), "status": "failed",
                           "message": why or "mocha exited %s" % part_code, "assertionResults": []})
    with open(report, "w") as fh:
        json.dump({"tool": "mocha", "testResults": merged}, fh)
log.close()
sys.exit(code)
'''
