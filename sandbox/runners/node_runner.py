"""JavaScript/TypeScript: vitest, jest, mocha or `node --test`, through the repository's own
installed binary (node itself for `node --test`), one process for all requested ids, per-test
results as JSON in jest's `--json` shape: jest's own, vitest's `json` reporter, and our mocha
and node reporters (sandbox/runners/js_reporters.py) for the other two.

The tool: the task's declared framework when it is installed, else the one the package.json
test script runs, else the one package.json depends on (vitest, jest, mocha in that order).
Ids, in the forms benchmarks and our witnesses use:
- `<file>: <describe> > <title>` — DeepSWE's vitest ids (JUnit classname + name via CTRF);
- `<file>` — every test in that file; `<file>::<describe> > <title>` — one test (or a describe
  block) of that file;
- `<describe> <title>` — jest's fullName (jest-ctrf-json-reporter) and mocha's fullTitle,
  looked up in every file.
mocha and node get only the named files, and when every id names tests, a name pattern
(`--grep`, `--test-name-pattern`) so only those tests run. When an id is a jest full name (it
may be in any file) no file is named: the whole suite runs.
Canaries (sandbox/canaries.py `JsCanaries`) are written once for every tool; the launcher gives
each the header of the tool it chose (vitest's or node:test's import, jest's or mocha's globals).
Outcome keys: every requested id, plus `<file>::<name>` and `<file>: <name>` for each test of
a requested file (the engine reads the first, the benchmark's grader the second).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Iterable
from typing import Any, NamedTuple

import json

from ..api import ExecResult, TestOutcome, TestStatus
from ..canaries import Canaries, JsCanaries
from ..hidden_names import JS
from . import js_reporters
from .base import LAUNCHER_PRELUDE, OUT_ROOT, LaunchedRunner, aggregate, json_report, report_named, trim

if TYPE_CHECKING:
    from ..own_exec import OwnPlan
from .pytest_runner import PytestRunner

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

JEST_CONFIGS = ("jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json")

def jest_config():
    # (file, text) of the repo's jest config: jest.config.* or package.json's "jest" key.
    for name in JEST_CONFIGS:
        try:
            return name, open(name, encoding="utf-8", errors="replace").read()
        except (IOError, OSError):
            continue
    pkg = package()
    return ("package.json", json.dumps(pkg["jest"])) if isinstance(pkg.get("jest"), dict) else (None, "")

# Our config for a witness run when the repo's jest config sets `projects` or `roots`: the
# repo's own, read by jest's own reader (so .ts, ESM and package.json configs load as jest
# loads them), with each named file given to the one project whose rootDir holds it (the
# deepest; the first project when none does), only those projects kept (a file run by every
# project would run under the wrong one's setup too), and the files' folders added to `roots`.
JEST_WRAPPER = """// The repo's jest config, read by jest's own reader, with each named witness file given to the
// one project whose rootDir holds it (the deepest; the first project when none does), only
// those projects kept, and the files' folders added to that project's `roots`.
const fs = require("fs");
const path = require("path");
const CONFIG = __CONFIG__, FILES = __FILES__, WORKDIR = __WORKDIR__;

function near(name, dir) {
  return path.dirname(require.resolve(name + "/package.json", { paths: [dir] }));
}

module.exports = async () => {
  const cfgDir = near("jest-config", near("jest-cli", near("jest", WORKDIR)));
  const jc = require(cfgDir);
  const glob = require(require.resolve("glob", { paths: [cfgDir] }));
  const read = jc.readInitialOptions ? async (where) => (await jc.readInitialOptions(undefined, {
    packageRootOrConfig: where, skipMultipleConfigError: true })).config : async (where) => {
    // jest before 29.3 has no readInitialOptions: its CommonJS and JSON configs, read alike.
    let file = where;
    if (fs.statSync(where).isDirectory()) {
      file = ["jest.config.js", "jest.config.cjs", "jest.config.json", "package.json"]
        .map((n) => path.join(where, n)).find((f) => fs.existsSync(f));
      if (!file) return { rootDir: where };
    }
    let options = require(file);
    options = path.basename(file) === "package.json" ? options.jest || {} : options.default || options;
    options = { ...(await (typeof options === "function" ? options() : options)) };
    options.rootDir = options.rootDir ? path.resolve(path.dirname(file), options.rootDir) : path.dirname(file);
    return options;
  };
  const top = await read(CONFIG);
  const files = FILES.map((f) => path.resolve(WORKDIR, f));
  const widen = (options, mine) => {
    const dirs = [...new Set(mine.map((f) => path.dirname(f)))];
    return options.roots ? { ...options, roots: [...options.roots, ...dirs] } : options;
  };
  const { coverageThreshold, ...kept } = top;
  if (!Array.isArray(top.projects) || !top.projects.length) {
    return widen(kept, files);
  }
  const base = path.dirname(path.resolve(CONFIG));
  const projects = [];
  for (const entry of top.projects) {
    if (typeof entry !== "string") {
      const rootDir = entry.rootDir ? path.resolve(base, jc.replaceRootDirInPath(base, entry.rootDir)) : base;
      projects.push({ ...entry, rootDir });
      continue;
    }
    const where = jc.replaceRootDirInPath(top.rootDir, entry);
    const hits = glob.sync(where);
    for (const hit of hits.length ? hits : [where]) {
      const full = path.resolve(WORKDIR, hit);
      if (fs.existsSync(full) && !fs.lstatSync(full).isDirectory()
          && !jc.constants.JEST_CONFIG_EXT_ORDER.some((ext) => full.endsWith(ext))) {
        continue;  // jest skips globbed files that are not configs
      }
      projects.push(await read(full));
    }
  }
  const holds = (dir, file) => {
    const rel = path.relative(dir, file);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  };
  const owned = new Map();
  for (const file of files) {
    const owner = projects.filter((p) => holds(p.rootDir, file))
      .sort((a, b) => b.rootDir.length - a.rootDir.length)[0] || projects[0];
    owned.set(owner, [...(owned.get(owner) || []), file]);
  }
  return { ...kept, projects: [...owned].map(([p, mine]) => widen(p, mine)) };
};
"""

def jest_wrapper(name, files):
    wrapper = os.path.join(out_dir, "jest.tj.config.cjs")
    with open(wrapper, "w") as fh:
        fh.write(JEST_WRAPPER.replace("__CONFIG__", json.dumps(os.path.abspath(name)))
                 .replace("__FILES__", json.dumps(files)).replace("__WORKDIR__", json.dumps(workdir)))
    return wrapper

def jest_focus(files):
    """(options, notes): jest runs exactly the files named with --runTestsByPath whatever the
    repo's testMatch/testRegex/testPathIgnorePatterns say (it drops named files they do not
    match), and no coverageThreshold fails a run that covers a fraction of the code."""
    name, text = jest_config()
    # testMatch and testRegex may not both be set: the one the config uses names exactly these
    # files (not everything: jest never instruments a file they match, so coverage would see none).
    if re.search(r"\btestRegex\b", text):
        args = ["--testRegex=/(?:%s)$" % "|".join(js_regex(f) for f in files)]
    else:
        args = ["--testMatch=**/" + re.sub(r"([][*?{}()!+@\\])", r"\\\1", f) for f in files]
    args += ["--testPathIgnorePatterns=/node_modules/", "--coverageThreshold={}"]
    notes = []
    layout = [k for k in ("projects", "roots") if name and re.search(r"\b%s\b" % k, text)]
    if layout:
        args += ["--config", jest_wrapper(name, files)]
    if "projects" in layout:
        notes.append("%s: projects: each named witness file runs in the one project whose rootDir "
                     "holds it" % name)
    if layout:
        notes.append("%s: roots: the named witness files' folders added" % name)
    for key in ("testMatch", "testRegex", "testPathIgnorePatterns"):
        if name and re.search(r"\b%s\b" % key, text):
            notes.append("%s: %s: the named witness files run whatever it says" % (name, key))
    if name and re.search(r"\bcoverageThreshold\b", text):
        notes.append("%s: coverageThreshold left out (a focused run covers a fraction of the code)" % name)
    return args, notes

VITEST_CONFIGS = tuple("%s.config.%s" % (n, e) for n in ("vitest", "vite") for e in ("ts", "mts", "cts", "js", "mjs", "cjs"))
# Our config for a witness run: the repo's own (bundled by vite from its path, so its imports,
# plugins and __dirname stay its own), with the named files added to `include`, `exclude` cut
# to vitest's first two defaults, and no coverage thresholds.
VITEST_WRAPPER = """import repo from %s;
import { fit } from %s;
const loaded = await (typeof repo === "function" ? repo({ command: "serve", mode: "test" }) : repo);
const config = { ...(loaded || {}) };
const test = { ...(config.test || {}) };
test.include = [...(test.include || ["**/*.{test,spec}.?(c|m)[jt]s?(x)"]), ...%s];
test.exclude = ["**/node_modules/**", "**/dist/**"];
if (test.coverage) {
  test.coverage = { ...test.coverage };
  for (const key of ["thresholds", "lines", "functions", "branches", "statements", "perFile", "100", "thresholdAutoUpdate"]) {
    delete test.coverage[key];
  }
}
for (const key of ["projects", "workspace"]) {
  if (Array.isArray(test[key])) {
    test[key] = await fit(test[key]);
  }
}
config.test = test;
export default config;
"""

# A witness run under a vitest workspace (a vitest.workspace file, or a config's
# `test.projects`/`test.workspace`): its projects, globs expanded as vitest expands them, each
# named file given to the one project whose root holds it (a file no project includes is "No
# test files found"; one every project includes runs under each one's setup).
VITEST_WORKSPACES = tuple("vitest.%s.%s" % (n, e) for n in ("workspace", "projects")
                          for e in ("ts", "mts", "cts", "js", "mjs", "cjs", "json"))
VITEST_PROJECTS = r"""// A vitest workspace's projects (a vitest.workspace file's, or `test.projects`/`test.workspace`
// of the config) with each named witness file given to the one project whose root holds it (the
// deepest; the first project when none does): that project's config, loaded as vitest loads it,
// with the file added to its `include` and `exclude` cut to vitest's first two defaults; the
// other projects as listed.
import fs from "node:fs";
import path from "node:path";

const FILES = __FILES__, WORKDIR = __WORKDIR__;
const CONFIGS = ["vitest.config", "vite.config"].flatMap((n) => [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"].map((e) => n + e));
// The workspace's globs, as vitest expands them (its glob library is bundled, not ours to load):
// `*`, `?`, `{a,b}` and `**` per path segment, directories marked with a trailing "/".
function segment(pattern) {
  const body = pattern.replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")
    .replace(/\{([^}]*)\}/g, (_, alts) => "(?:" + alts.split(",").join("|") + ")");
  return new RegExp("^" + body + "$");
}
function expand(base, parts) {
  if (!parts.length) {
    return [fs.statSync(base).isDirectory() ? base + "/" : base];
  }
  const [head, ...rest] = parts;
  if (head === "**") {
    const here = expand(base, rest);
    for (const name of fs.readdirSync(base)) {
      const next = path.join(base, name);
      if (name !== "node_modules" && fs.statSync(next).isDirectory()) here.push(...expand(next, parts));
    }
    return here;
  }
  if (!/[*?{]/.test(head)) {
    const next = path.join(base, head);
    return fs.existsSync(next) ? expand(next, rest) : [];
  }
  const re = segment(head);
  return fs.readdirSync(base).filter((n) => re.test(n) && n !== "node_modules")
    .flatMap((n) => expand(path.join(base, n), rest));
}
const glob = (patterns) => [...new Set(patterns.flatMap((p) => {
  const abs = path.resolve(WORKDIR, p);
  return expand("/", abs.split("/").filter(Boolean));
}))];
const env = { command: "serve", mode: "test", isPreview: false, isSsrBuild: false };
export async function fit(listed) {
  const projects = [];  // { entry, root, config: the file a path entry names, or null, options: an inline entry's }
  const strings = [];
  for (const entry of listed) {
    if (typeof entry === "string") {
      strings.push(entry.replace("<rootDir>", WORKDIR));
    } else {
      const options = await (typeof entry === "function" ? entry(env) : entry);
      const root = path.resolve(WORKDIR, (options.test && options.test.root) || options.root || ".");
      projects.push({ entry, root, config: null, options });
    }
  }
  const found = glob(strings).filter((hit) => !hit.includes(".timestamp-"));
  for (const hit of found) {
    if (hit.endsWith("/")) {
      if (found.some((other) => other !== hit && path.dirname(other) + "/" === hit)) continue;
      const inside = fs.readdirSync(hit);
      const config = CONFIGS.find((c) => inside.includes(c));
      projects.push({ entry: config ? path.join(hit, config) : hit, root: hit.slice(0, -1),
                      config: config ? path.join(hit, config) : null, options: null });
    } else if (CONFIGS.some((c) => path.basename(hit).startsWith(c.split(".").slice(0, 2).join(".")))) {
      projects.push({ entry: hit, root: path.dirname(hit), config: hit, options: null });
    }
  }
  const holds = (dir, file) => {
    const rel = path.relative(dir, file);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  };
  const owned = new Map();
  for (const file of FILES.map((f) => path.resolve(WORKDIR, f))) {
    const owner = projects.filter((p) => holds(p.root, file)).sort((a, b) => b.root.length - a.root.length)[0] || projects[0];
    if (owner) owned.set(owner, [...(owned.get(owner) || []), file]);
  }
  const out = [];
  for (const project of projects) {
    const mine = owned.get(project);
    if (!mine) {
      out.push(project.entry);
      continue;
    }
    let options = project.options;
    if (!options && project.config) {
      try {
        const loaded = (await import(project.config)).default;
        options = await (typeof loaded === "function" ? loaded(env) : loaded);
      } catch (error) {
        // Node alone (a config's projects) cannot import a TypeScript config: vitest's own
        // `extends` merges it (its include and exclude then come before ours).
        options = { extends: project.config };
      }
    }
    const config = { ...(options || {}) };
    const test = { ...(config.test || {}) };
    test.include = [...(test.include || ["**/*.{test,spec}.?(c|m)[jt]s?(x)"]), ...mine.map((f) => path.relative(project.root, f))];
    test.exclude = ["**/node_modules/**", "**/dist/**"];
    test.root = project.root;
    config.root = project.root;
    config.test = test;
    out.push(config);
  }
  return out;
}
"""
VITEST_WORKSPACE = """import fs from "node:fs";
import { fit } from %s;
const WORKSPACE = %s;
const listed = WORKSPACE.endsWith(".json") ? JSON.parse(fs.readFileSync(WORKSPACE, "utf8"))
  : (await import(WORKSPACE)).default;
export default await fit(listed);
"""
PROJECTS_NOTE = "each named witness file runs in the one project whose root holds it, added to its include"

def vitest_projects(files):
    """The path of our module fitting a workspace's projects to the named files."""
    module = os.path.join(out_dir, "vitest.tj.projects.mjs")
    with open(module, "w") as fh:
        fh.write(VITEST_PROJECTS.replace("__FILES__", json.dumps(files)).replace("__WORKDIR__", json.dumps(workdir)))
    return module

def vitest_workspace(files):
    """(options, notes) giving each named file to its own project of the repo's workspace file."""
    name = next((n for n in VITEST_WORKSPACES if os.path.isfile(n)), None)
    if not name:
        return [], []
    wrapper = os.path.join(out_dir, "vitest.tj.workspace.mjs")
    with open(wrapper, "w") as fh:
        fh.write(VITEST_WORKSPACE % (json.dumps(vitest_projects(files)), json.dumps(os.path.abspath(name))))
    return ["--workspace", wrapper, "--root", workdir], ["%s: %s" % (name, PROJECTS_NOTE)]

def vitest_focus(files):
    """(options, notes): vitest runs the named files whatever the repo config's include and
    exclude say (a file they do not match is "No test files found"), and no coverage threshold
    fails a run that covers a fraction of the code. Only when its config sets one of them."""
    name = next((n for n in VITEST_CONFIGS if os.path.isfile(n)), None)
    try:
        text = open(name, encoding="utf-8", errors="replace").read() if name else ""
    except (IOError, OSError):
        text = ""
    keys = [k for k in ("include", "exclude") if re.search(r"\b%s\s*:" % k, text)]
    thresholds = re.search(r"\bthresholds?\b|\b(?:lines|branches|functions|statements)\s*:\s*\d", text)
    projects, project_notes = vitest_workspace(files)
    inline = [k for k in ("projects", "workspace") if re.search(r"\b%s\s*:" % k, text)]
    if not (keys or thresholds or inline):
        return projects, project_notes
    wrapper = os.path.join(out_dir, "vitest.tj.config.mjs")
    with open(wrapper, "w") as fh:
        fh.write(VITEST_WRAPPER % (json.dumps(os.path.abspath(name)), json.dumps(vitest_projects(files)),
                                   json.dumps(files)))
    notes = ["%s: %s: the named witness files run whatever it says" % (name, k) for k in keys]
    notes += ["%s: %s: %s" % (name, k, PROJECTS_NOTE) for k in inline]
    if thresholds:
        notes.append("%s: coverage thresholds left out (a focused run covers a fraction of the code)" % name)
    return ["--config", wrapper] + (projects or ["--root", workdir]), notes + project_notes

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

_SKIPPED = {"pending", "skipped", "todo", "disabled"}
_EXTS = (".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts")


class NodeTestRunner(LaunchedRunner):
    """vitest / jest / mocha / node --test; see the module docstring for ids and outcome keys."""

    name = "vitest"
    launcher_path, launcher = LAUNCHER_PATH, LAUNCHER
    canaries = JsCanaries(errors=False)  # vitest reports the tests under a failed hook as failed
    names = JS
    reports = (REPORT, PLAN, LOG)
    framework = "vitest"
    witness_hint = ("a new `<topic>.tj.test.ts` (or `.test.js`) beside the repo's own tests, where "
                    "its vitest/jest config collects them, importing the code under test by "
                    "relative path; run_tests takes the file's path or `path::<describe> > <title>` "
                    "(T0's ids read `<file>: <describe> > <title>`)")
    inline_command = PytestRunner.inline_command  # the same python3 wrapper: files in, reports out

    @staticmethod
    def grader_ids(path: str, outcomes: Iterable[str]) -> list[str]:
        return sorted(n for n in outcomes if n.startswith(path + ": "))

    def support_files(self) -> dict[str, str]:
        return {**super().support_files(), **js_reporters.support_files()}

    def spec_extra(self) -> dict[str, Any]:
        return {"framework": self.framework, "mocha_reporter": js_reporters.MOCHA_REPORTER_PATH,
                "mocha_config": js_reporters.MOCHA_CONFIG_PATH,
                "node_reporter": js_reporters.NODE_REPORTER_PATH}

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """Our own runs (sandbox/own_exec.py): each witness file (or named test), and a
        must-pass and a must-fail canary test, by the launcher's plain mode in a process each."""
        from ..own_exec import OwnPlan, canary_picks  # own_exec -> own_run -> runners: not at import

        plan = OwnPlan()
        mine = [i for i in test_ids if i.partition("::")[0].partition(": ")[0] in files]
        near = mine[0].partition("::")[0].rsplit("/", 1)[0] if mine and "/" in mine[0] else ""
        for test_id in mine + (canary_picks(canary, near) if mine else []):
            plan.tests[test_id] = {"argv": ["python3", self.launcher_path], "cwd": "",
                                   "spec": {"ids": [test_id], "plain": True, **self.spec_extra()}}
            if self.framework == "vitest":
                # vite bundles the config to a file beside it: another uid cannot run vitest in
                # the repo, so its varied replay keeps the trial's uid (the rest still varies).
                plan.tests[test_id]["keep_uid"] = True
        return plan

    def agreement(self, reports: dict[str, bytes | None], result: ExecResult) -> list[str]:
        """The runner's exit status against its JSON report."""
        from ..own_exec import exit_agreement

        data = json_report(reports, REPORT)
        failed = [str(t.get("fullName") or t.get("title") or "")
                  for f in data.get("testResults") or [] if isinstance(f, dict)
                  for t in f.get("assertionResults") or [] if isinstance(t, dict) and t.get("status") == "failed"]
        return exit_agreement(self.name, result, failed)

    def parse(self, test_ids: list[str], reports: dict[str, bytes | None], result: ExecResult
              ) -> dict[str, TestOutcome]:
        def report(suffix: str) -> bytes | None:
            return report_named(reports, suffix)

        plan = json_report(reports, PLAN)
        log = (report(LOG) or b"").decode(errors="replace")
        plan["reported"] = report(REPORT) is not None
        tests, broken = read_report(report(REPORT), plan.get("workdir", ""))
        outcomes: dict[str, TestOutcome] = {}
        for test_id in test_ids:
            outcomes[test_id] = self._one(test_id, tests, broken, plan, log, result, outcomes)
        return outcomes

    def _one(self, test_id: str, tests: list[JsTest], broken: dict[str, str], plan: dict[str, Any],
             log: str, result: ExecResult, outcomes: dict[str, TestOutcome]) -> TestOutcome:
        if not plan.get("tool"):
            if result.timed_out:
                return TestOutcome(test_id, "timed_out", "the test run hit its timeout")
            return TestOutcome(test_id, "error", "no test runner: " + (plan.get("why") or (
                "no vitest, jest or mocha in node_modules/.bin and no `node --test` test script"))
                + " " + trim(log or result.output, 500))
        path, sep, name = _split(test_id)
        if path and not plan.get("files", {}).get(path, False):
            return TestOutcome(test_id, "not_found", "no such test file")
        if path in broken:
            return TestOutcome(test_id, "error", "the test file failed to load: " + trim(broken[path], 2000))
        if path:
            mine = [t for t in tests if t.file == path]
            if sep:
                mine = [t for t in mine if t.title == name or t.title.startswith(name + " > ")]
            for t in mine:
                for shown in (f"{t.file}::{t.title}", f"{t.file}: {t.title}"):
                    outcomes[shown] = TestOutcome(shown, t.status, t.message, t.seconds)
        else:  # jest fullName: "<describe> <title>"
            mine = [t for t in tests if t.full_name == test_id]
        if mine:
            status = aggregate([t.status for t in mine])
            bad = next((t for t in mine if t.status == status), mine[0])
            return TestOutcome(test_id, status, bad.message, sum(t.seconds for t in mine))
        if result.timed_out:
            return TestOutcome(test_id, "timed_out", "the test run hit its timeout (the reporter "
                               "writes its file at the end, so no test of this run is known)")
        if not plan["reported"] or (not tests and not broken and result.exit_code not in (0, 1)):
            return TestOutcome(test_id, "error", f"{plan['tool']} ended without a report (exit "
                               f"{result.exit_code}; 137 = killed): " + trim(log, 2000))
        if path and not tests and "No test files found" in log:
            return TestOutcome(test_id, "not_found", "not collected: the test config's include "
                               "patterns do not match this path")
        return TestOutcome(test_id, "not_found", "no such test ran")


def _split(test_id: str) -> tuple[str, str, str]:
    """(file, separator, test name) of an id; file "" for a jest fullName."""
    if "::" in test_id:
        path, _, name = test_id.partition("::")
        return path, "::", name
    head, sep, name = test_id.partition(": ")
    if sep and ("/" in head or head.endswith(_EXTS)):
        return head, sep, name
    if test_id.endswith(_EXTS):
        return test_id, "", ""
    return "", "", test_id


class JsTest(NamedTuple):
    """One test case of a jest-shaped JSON report."""

    file: str  # relative to the workdir
    title: str  # "describe > ... > title"
    status: TestStatus
    message: str
    seconds: float
    full_name: str  # jest's fullName: "<describe> <title>"


def read_report(data: bytes | None, workdir: str) -> tuple[list[JsTest], dict[str, str]]:
    """The report's test cases and {file: load error} for files that failed to load."""
    tests: list[JsTest] = []
    broken: dict[str, str] = {}
    if not data:
        return tests, broken
    try:
        doc = json.loads(data)
    except ValueError:
        return tests, broken
    prefix = workdir.rstrip("/") + "/"
    for suite in doc.get("testResults") or []:
        if not isinstance(suite, dict):
            continue
        file = str(suite.get("name") or "")
        file = file[len(prefix):] if prefix != "/" and file.startswith(prefix) else file
        assertions = suite.get("assertionResults") or []
        if not assertions and suite.get("status") == "failed":
            broken[file] = str(suite.get("message") or "failed to load")
            continue
        for a in assertions:
            titles = [str(t) for t in (a.get("ancestorTitles") or []) if t] + [str(a.get("title") or "")]
            raw = a.get("status")
            status: TestStatus = ("passed" if raw == "passed" else "skipped" if raw in _SKIPPED
                      else "error" if raw == "error" else "failed")
            message = trim("\n".join(str(m) for m in a.get("failureMessages") or []), 2000)
            duration = float(a.get("duration") or 0) / 1000.0
            tests.append(JsTest(file, " > ".join(titles), status, message, duration,
                                str(a.get("fullName") or " ".join(titles))))
    return tests, broken


class JestRunner(NodeTestRunner):
    name = "jest"
    framework = "jest"
    canaries = JsCanaries(errors=False)  # jest reports the tests under a failed hook as failed


class MochaRunner(NodeTestRunner):
    name = "mocha"
    framework = "mocha"
    canaries = JsCanaries(errors=True)  # our reporter (js_reporters.py): hook failures are errors
    witness_hint = ("a new `<topic>.tj.spec.js` (or `.test.js`, matching the repo's) beside the "
                    "repo's own mocha tests, where its .mocharc `spec` collects them, written like "
                    "them (`describe`/`it`, the same assertion library, `require` or `import` as "
                    "package.json's \"type\" says); run_tests takes the file's path or "
                    "`path::<describe> > <title>`")


class NodeBuiltinRunner(NodeTestRunner):
    """Node's built-in runner (`node --test`, `node:test`)."""

    name = "node --test"
    framework = "node"
    canaries = JsCanaries(errors=True)  # our reporter (js_reporters.py): hook failures are errors

    def own_plan(self, test_ids: list[str], files: dict[str, str], canary: Canaries | None) -> OwnPlan:
        """No own run yet: node 18's --test-name-pattern still runs the hooks of a suite whose
        tests it filters out, so a canary test cannot run alone (a sibling suite's failing hook
        fails the process) and our own run would read an honest trial as forging. node --test
        keeps the canaries, the exit-status agreement and the survivor checks."""
        from ..own_exec import OwnPlan  # own_exec -> own_run -> runners: not at import

        return OwnPlan()
    witness_hint = ("a new `test/<topic>.tj.test.js` (`.mjs` for ES modules) using `node:test` "
                    "(`describe`/`it` or `test`) and `node:assert/strict`, importing the code under "
                    "test by relative path; run_tests takes the file's path or "
                    "`path::<describe> > <title>`")
