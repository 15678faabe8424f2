import { describe, expect, it } from "vitest";
import { openFlags, REVIEW_WINDOW_S, reviewHold } from "./review.js";

const row = (entry_id: string, ...rules: [string, "pass" | "fail" | "flag" | "pending"][]) => ({
  entry_id,
  eligibility: { rules: rules.map(([rule, status]) => ({ rule, status })) },
});

describe("the settler waits for reviews within the window", () => {
  const rows = [
    row("a", ["CONFIRMED", "pass"], ["LINKS", "flag"]),
    // A failed rule no review changes: its flags hold nothing back.
    row("b", ["CONFIRMED", "fail"], ["LINKS", "flag"]),
    // A flag no review may change (PAYABLE is read again at the decision).
    row("c", ["PAYABLE", "flag"]),
    row("d", ["CONFIRMED", "pass"], ["LINKS", "pass"]),
  ];
  it("counts only the flags a review could turn into an eligible entry", () => {
    expect(openFlags(rows)).toEqual(["a LINKS"]);
  });
  it("holds the decision until the window after the end, then decides with the flags as fails", () => {
    const ends = 1_000_000;
    expect(reviewHold(rows, ends, ends + 60)).toMatch(/^1 flag\(s\) open for review \(a LINKS\); decided at /);
    expect(reviewHold(rows, ends, ends + REVIEW_WINDOW_S)).toBeNull();
    expect(reviewHold([rows[3]!], ends, ends + 60)).toBeNull();
  });
});
