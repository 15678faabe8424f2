import { describe, expect, it } from "vitest";
import { FINALITY_BLOCKS, isFinal } from "./finality.js";

describe("isFinal", () => {
  it("is true from FINALITY_BLOCKS below the head on, and at a depth given", () => {
    expect(isFinal(100n + BigInt(FINALITY_BLOCKS), 100n)).toBe(true);
    expect(isFinal(99n + BigInt(FINALITY_BLOCKS), 100n)).toBe(false);
    // A receipt newer than the head read before it (another node, a race) is never final.
    expect(isFinal(99n, 100n)).toBe(false);
    expect([isFinal(103n, 100n, 3), isFinal(102n, 100n, 3), isFinal(100n, 100n, 0)]).toEqual([true, false, true]);
  });
});
