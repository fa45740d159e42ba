import { it } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

// The issue: "anything else (... an empty string) throws a `RangeError`".
it("rejects an empty or blank duration", () => {
  assert.throws(() => parseDuration(""), RangeError);
  assert.throws(() => parseDuration("   "), RangeError);
});
