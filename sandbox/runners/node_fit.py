"""The part of the node launcher (sandbox/runners/node_launcher.py) that fits a repository's
jest or vitest configuration to the witness files of a run: testMatch/testRegex/ignore patterns,
projects and roots, vitest workspaces, coverage thresholds. Text of the launcher script, run
under the world's python3, not imported."""

FIT = r'''JEST_CONFIGS = ("jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json")

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
'''
