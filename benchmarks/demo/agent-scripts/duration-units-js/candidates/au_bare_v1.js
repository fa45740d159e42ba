import { it } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

// The issue: "a bare number means seconds: `90` is 90".
it("reads a bare number as seconds", () => {
  assert.equal(parseDuration("90"), 90);
});
