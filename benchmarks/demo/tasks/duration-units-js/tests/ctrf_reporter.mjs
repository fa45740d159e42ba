// This task's node --test reporter (our own code): CTRF with DeepSWE's JavaScript ids,
// "<file>: <describe> > <title>", the file relative to /app.
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

export default async function* ctrf(source) {
  const tests = [];
  const stacks = new Map();
  for await (const { type, data } of source) {
    if (type !== "test:start" && type !== "test:pass" && type !== "test:fail") continue;
    const path = String(data.file || "");
    const file = relative("/app", path.startsWith("file:") ? fileURLToPath(path) : path);
    if (!stacks.has(file)) stacks.set(file, []);
    const stack = stacks.get(file);
    if (type === "test:start") {
      stack.length = data.nesting;
      stack.push(data.name);
      continue;
    }
    if (data.details && data.details.type === "suite") continue;
    const titles = stack.slice(0, data.nesting).concat(data.name);
    const skipped = data.skip !== undefined || data.todo !== undefined;
    tests.push({ name: `${file}: ${titles.join(" > ")}`,
                 status: skipped ? "skipped" : type === "test:pass" ? "passed" : "failed" });
  }
  yield JSON.stringify({ reportFormat: "CTRF", specVersion: "1.0.0",
                         results: { tool: { name: "node:test" }, tests } }, null, 1);
}
