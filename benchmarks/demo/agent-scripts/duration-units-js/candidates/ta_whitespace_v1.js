import { it } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

// The issue: "whitespace around the duration is ignored".
it("ignores whitespace around the duration", () => {
  assert.equal(parseDuration("  1h30m\n"), 5400);
});
