import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../src/duration.js";

describe("parseDuration", () => {
  it("reads seconds", () => {
    assert.equal(parseDuration("45s"), 45);
  });
});
