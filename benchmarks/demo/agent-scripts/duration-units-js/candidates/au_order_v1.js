import { it } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

// The issue: "units out of order ... throws a `RangeError`".
it("rejects units out of order", () => {
  assert.throws(() => parseDuration("30m1h"), RangeError);
});
