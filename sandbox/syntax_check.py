"""A syntax check of a test file by its own toolchain, in a world of the task (so the check
is the repository's: its esbuild or TypeScript, the image's Go and Rust), before the file is
run anywhere: an operator's candidate with a typo gets one clear line now instead of a failed
run on the reference world later. Parse only: `gofmt -e` (Go), rustc's parser errors (Rust;
name resolution and types are the test run's business), esbuild's or TypeScript's transpiler
from the repo's node_modules, else `node --check` (JavaScript/TypeScript). A toolchain that is
not there is no error: the test run still checks."""
from __future__ import annotations

from .api import WorldRef
from .errors import SandboxError

# The file comes on stdin; argv: kind, file name. Prints `TJ_SYNTAX line N: message (tool)` and
# exits 3 on a syntax error; exits 0 otherwise.
SCRIPT = r'''
import os, re, subprocess, sys, tempfile
kind, name = sys.argv[1], os.path.basename(sys.argv[2])
folder = tempfile.mkdtemp(prefix="tj-syntax-")
path = os.path.join(folder, name)
with open(path, "wb") as fh:
    fh.write(sys.stdin.buffer.read())

def run(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None, ""
    return p.returncode, p.stdout.decode(errors="replace")

def bad(line, message, tool):
    print("TJ_SYNTAX line %s: %s (%s)" % (line, message.strip(), tool), flush=True)
    sys.exit(3)

if kind == "go":
    code, out = run(["gofmt", "-e", "-l", path])
    m = re.search(re.escape(path) + r":(\d+):\d+: (.*)", out)
    if code and m:
        bad(m.group(1), m.group(2), "gofmt -e")
elif kind == "rust":
    code, out = run(["rustc", "--edition", "2021", "--crate-type", "lib", "--emit=metadata",
                     "-o", os.path.join(folder, "out.rmeta"), path])
    # Parser errors carry no error code; what comes after parsing (unresolved imports, types)
    # depends on the crate the file is a test of, and is the test run's to report.
    m = re.search(r"(?m)^error: ((?:expected|unexpected|mismatched closing|this file contains an unclosed|"
                  r"unknown start of token|unterminated|missing|incorrect).*)\n\s*--> [^\n]*?:(\d+):\d+", out)
    if code and m:
        bad(m.group(2), m.group(1), "rustc parser")
elif kind == "js":
    code, out = run(["node", "-e", JS_CHECK, path])
    m = re.search(r"(?m)^TJ_SYNTAX (line \S+: .*)$", out)
    if code == 3 and m:
        print("TJ_SYNTAX " + m.group(1), flush=True)
        sys.exit(3)
'''

JS_CHECK = r'''
const fs = require("fs"), path = require("path"), cp = require("child_process");
const file = process.argv[1];
const src = fs.readFileSync(file, "utf8");
const ext = path.extname(file).slice(1);
const loader = { ts: "ts", mts: "ts", cts: "ts", tsx: "tsx", jsx: "jsx" }[ext] || "js";
function fromRepo(name) {
  try { return require(require.resolve(name, { paths: [process.cwd()] })); } catch (e) { return null; }
}
function bad(line, message, tool) {
  console.log(`TJ_SYNTAX line ${line}: ${String(message).split("\n")[0]} (${tool})`);
  process.exit(3);
}
const esbuild = fromRepo("esbuild");
if (esbuild) {
  try { esbuild.transformSync(src, { loader, sourcefile: file }); process.exit(0); } catch (e) {
    const m = (e.errors || [])[0];
    if (m) bad(m.location ? m.location.line : "?", m.text, "esbuild");
  }
}
const ts = fromRepo("typescript");
if (ts) {
  const r = ts.transpileModule(src, { fileName: file, reportDiagnostics: true, compilerOptions: { jsx: 1 } });
  const d = (r.diagnostics || [])[0];
  if (d) bad(d.file ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : "?",
             ts.flattenDiagnosticMessageText(d.messageText, "\n"), "typescript");
  process.exit(0);
}
if (loader !== "js") process.exit(0);  // TypeScript without a transpiler here: the run checks
// node itself, as an ES module when the file imports or exports (as CommonJS it refuses `import`).
const esm = ext === "mjs" || (ext !== "cjs" && /^\s*(import\s*[\w{*"']|export\s)/m.test(src));
const copy = file.replace(/\.[^.]+$/, esm ? ".mjs" : ".cjs");
fs.writeFileSync(copy, src);
const r = cp.spawnSync(process.execPath, ["--check", copy], { encoding: "utf8" });
if (r.status === 0) process.exit(0);
const out = r.stderr || "";
const line = (out.match(/:(\d+)\r?\n/) || [])[1] || "?";
bad(line, out.split("\n").find((l) => /^SyntaxError/.test(l)) || out.trim().split("\n").pop(), "node --check");
'''

TOOLS = {"go": "gofmt -e", "rust": "rustc's parser", "js": "esbuild, typescript or node --check"}


async def syntax_error(sandbox: object, world: WorldRef, kind: str, name: str, source: str) -> str | None:
    """`line N: message (tool)` when the toolchain in `world` finds a syntax error in `source`
    (a test file named `name` of kind go/rust/js), else None. A check that did not finish
    (podman could not start it, it timed out) raises SandboxError: "not checked" is not "parses"."""
    if kind not in TOOLS:
        return None
    script = SCRIPT.replace("JS_CHECK", repr(JS_CHECK), 1)
    result = await sandbox.exec(world, ["python3", "-c", script, kind, name],  # type: ignore[attr-defined]
                                timeout=120, stdin=source)
    for line in (result.output or "").splitlines():
        if line.startswith("TJ_SYNTAX ") and result.exit_code == 3:
            return line[len("TJ_SYNTAX "):].strip()
    if result.exit_code != 0 or result.timed_out:
        said = (result.output or "").strip().splitlines()
        raise SandboxError(f"the {TOOLS[kind]} check in {world.name} did not finish (exit {result.exit_code}"
                           f"{', timed out' if result.timed_out else ''})" + (f": {said[-1][:200]}" if said else ""))
    return None
