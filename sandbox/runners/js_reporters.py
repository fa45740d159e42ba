"""JavaScript files our Node runners put into the container beside their launcher: a mocha
reporter and a `node --test` reporter that write per-test results as JSON in jest's `--json`
shape (so one reader serves vitest, jest, mocha and node), and a mocha config that keeps the
repository's own options but not its `spec` (mocha adds command-line files to the configured
spec instead of replacing it).
"""
from __future__ import annotations

from .base import OUT_ROOT

MOCHA_REPORTER_PATH = f"{OUT_ROOT}/mocha_reporter.cjs"
MOCHA_CONFIG_PATH = f"{OUT_ROOT}/mocha_config.cjs"
NODE_REPORTER_PATH = f"{OUT_ROOT}/node_reporter.mjs"

MOCHA_REPORTER = r'''"use strict";
// Per-test results of a mocha run as JSON in jest's `--json` shape (testResults per file,
// assertionResults with ancestorTitles), written at the end of the run to the path given as
// `--reporter-option output=<path>`. A hook failure marks the tests it kept from running (or,
// for an after-each hook, the test it ran after) as errors.
const fs = require("fs");

function titles(runnable) {
  return typeof runnable.titlePath === "function" ? runnable.titlePath() : [runnable.title];
}

function message(err) {
  if (!err) return "";
  if (typeof err === "string") return err;
  const text = String(err.stack || err.message || err);
  return err.message && !text.includes(err.message) ? err.message + "\n" + text : text;
}

module.exports = function TestjackMochaReporter(runner, options) {
  const opts = (options && (options.reporterOption || options.reporterOptions)) || {};
  const files = new Map();
  const done = new Map();
  function add(test, status, err, extraTitle) {
    const file = test.file || (test.parent && test.parent.file) || "";
    if (!files.has(file)) files.set(file, []);
    const path = titles(test);
    if (extraTitle) path.push(extraTitle);
    const entry = {
      ancestorTitles: path.slice(0, -1), title: path[path.length - 1], fullName: path.join(" "),
      status, failureMessages: err ? [message(err)] : [], duration: test.duration || 0,
    };
    files.get(file).push(entry);
    if (!extraTitle) done.set(test, entry);
  }
  runner.on("pass", (test) => add(test, "passed"));
  runner.on("pending", (test) => add(test, "pending"));
  runner.on("fail", (runnable, err) => {
    if (runnable.type !== "hook") {
      const entry = done.get(runnable);
      if (entry) { entry.status = "failed"; entry.failureMessages.push(message(err)); }
      else add(runnable, "failed", err);
      return;
    }
    const why = `${runnable.title} failed: ${message(err)}`;
    const kept = [];
    if (runnable.parent && typeof runnable.parent.eachTest === "function") {
      runnable.parent.eachTest((test) => { if (!done.has(test)) kept.push(test); });
    }
    const current = runnable.ctx && runnable.ctx.currentTest;
    if (current && done.has(current) && /^"after each"/.test(runnable.title)) {
      const entry = done.get(current);
      entry.status = "error";
      entry.failureMessages.push(why);
    } else if (!kept.length) {
      add(runnable.parent || runnable, "error", why, runnable.title);
    }
    for (const test of kept) add(test, "error", why);
  });
  runner.once("end", () => {
    const testResults = [...files].map(([name, assertionResults]) => ({
      name, status: assertionResults.some((a) => a.status === "failed" || a.status === "error") ? "failed" : "passed",
      message: "", assertionResults,
    }));
    const text = JSON.stringify({ tool: "mocha", testResults });
    if (opts.output) fs.writeFileSync(opts.output, text);
    else process.stdout.write(text + "\n");
  });
};
'''

MOCHA_CONFIG = r'''"use strict";
// The repository's own mocha configuration (its .mocharc.* file and package.json's "mocha"
// key, read with mocha's own loaders) without `spec` and the options below: mocha adds the
// files named on its command line to the configured spec instead of replacing it, and a witness
// run must load only the files it names.
const path = require("path");
const fs = require("fs");

function fromRepo(name) {
  return require(require.resolve(name, { paths: [process.cwd()] }));
}

let config = {};
try {
  const rc = fromRepo("mocha/lib/cli/config");
  const options = fromRepo("mocha/lib/cli/options");
  const file = rc.findConfig(process.cwd());
  config = Object.assign({}, options.loadPkgRc ? options.loadPkgRc({}) : {}, file ? rc.loadConfig(file) : {});
} catch (err) {
  for (const name of [".mocharc.cjs", ".mocharc.js", ".mocharc.json"]) {
    const file = path.join(process.cwd(), name);
    if (fs.existsSync(file)) {
      config = Object.assign({}, name.endsWith(".json") ? JSON.parse(fs.readFileSync(file, "utf8")) : require(file));
      break;
    }
  }
}
// Ours for a witness run: which files and tests run, how results are reported, one process
// (parallel mode hands reporters copies without titlePath), every test run (no bail).
for (const key of ["spec", "_", "parallel", "jobs", "j", "watch", "watch-files", "watchFiles",
                   "reporter", "R", "reporter-option", "reporterOption", "reporter-options",
                   "reporterOptions", "O", "grep", "g", "fgrep", "f", "invert", "i", "bail", "b",
                   "dry-run", "dryRun", "list-interfaces", "list-reporters"]) {
  delete config[key];
}
module.exports = config;
'''

NODE_REPORTER = r'''// Per-test results of a `node --test` run as JSON in jest's `--json` shape (testResults per
// file, assertionResults with ancestorTitles), for `--test-reporter=<this file>
// --test-reporter-destination=<report>`. Node reports a suite or a test with subtests after
// its children, so children are attached to the next result one level up in the same file.
// Tests skipped only because --test-name-pattern left them out are not reported.
import { fileURLToPath } from "node:url";

const NOT_SELECTED = "test name does not match pattern";

function fileOf(data) {
  const file = data.file || "";
  return file.startsWith("file:") ? fileURLToPath(file) : file;
}

function text(error) {
  if (!error) return "";
  const cause = error.cause || error;
  const stack = cause && cause.stack ? String(cause.stack) : "";
  const head = String((cause && cause.message) || error.message || cause);
  return stack.includes(head) ? stack : head + (stack ? "\n" + stack : "");
}

export default async function* testjackNodeReporter(source) {
  const files = new Map();  // file -> { results: [], pending: [{nesting, node}] }
  const output = new Map();  // file -> what it printed (the reason when it fails to load)
  for await (const event of source) {
    const data = event.data || {};
    const file = fileOf(data);
    if (event.type === "test:stderr" || event.type === "test:stdout") {
      output.set(file, ((output.get(file) || "") + String(data.message || "")).slice(-4000));
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    if (!files.has(file)) files.set(file, { results: [], pending: [], broken: "" });
    const state = files.get(file);
    if (data.nesting === 0 && event.type === "test:fail" && data.name === file && !state.pending.length) {
      state.broken = text((data.details || {}).error);  // the file itself failed (to load, or exited)
      continue;
    }
    const node = { name: String(data.name), leaves: [] };
    const children = state.pending.filter((p) => p.nesting > data.nesting);
    state.pending = state.pending.filter((p) => p.nesting <= data.nesting);
    for (const child of children) node.leaves.push(...child.node.leaves);
    for (const leaf of node.leaves) leaf.ancestorTitles.unshift(node.name);
    const details = data.details || {};
    const error = details.error;
    if (!children.length && (data.skip === NOT_SELECTED || (details.type === "suite" && !error))) {
      // left out by the name pattern, or an empty suite: no result, but a child of its parent
    } else if (!children.length) {
      let status = event.type === "test:pass" ? "passed" : "failed";
      if (data.skip !== undefined || data.todo !== undefined) status = "pending";
      const kind = error && (error.failureType || (error.cause && error.cause.failureType));
      if (status === "failed" && (kind === "cancelledByParent" || kind === "hookFailure")) status = "error";
      if (status === "failed" && details.type === "suite") status = "error";
      node.leaves.push({ ancestorTitles: [], title: node.name, status,
                         failureMessages: error ? [text(error)] : [],
                         duration: Number(details.duration_ms || 0) });
    } else if (event.type === "test:fail" && error) {
      const kind = error.failureType || (error.cause && error.cause.failureType);
      if (kind !== "subtestsFailed") {
        for (const leaf of node.leaves) {
          if (leaf.status === "passed" || leaf.status === "error") {
            leaf.status = "error";
            leaf.failureMessages.push(`${node.name}: ${text(error)}`);
          }
        }
      }
    }
    if (data.nesting === 0) state.results.push(...node.leaves);
    else state.pending.push({ nesting: data.nesting, node });
  }
  const testResults = [];
  for (const [name, state] of files) {
    const leaves = state.results.concat(...state.pending.map((p) => p.node.leaves));
    for (const leaf of leaves) leaf.fullName = leaf.ancestorTitles.concat(leaf.title).join(" ");
    const failed = state.broken || leaves.some((l) => l.status === "failed" || l.status === "error");
    const message = state.broken ? [state.broken, output.get(name) || ""].join("\n").trim() : "";
    testResults.push({ name, status: failed ? "failed" : "passed", message, assertionResults: leaves });
  }
  yield JSON.stringify({ tool: "node", testResults });
}
'''


def support_files() -> dict[str, str]:
    return {MOCHA_REPORTER_PATH: MOCHA_REPORTER, MOCHA_CONFIG_PATH: MOCHA_CONFIG,
            NODE_REPORTER_PATH: NODE_REPORTER}
