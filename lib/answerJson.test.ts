import { describe, expect, it } from "vitest";
import { answerJson } from "./answerJson.js";

describe("answerJson", () => {
  const rows = [
    { rank: 1, label: 'a "quoted" name \u2014 with $& and $1', eligibility: { rules: [{ reason: "$5 realised" }] } },
    { rank: 2, label: "\u0000rows\u0000", nested: [null, 1.5, "x"] },
  ];
  const answer = (now: number) => ({ board: "prize", season: 3, rows, outcome: null, now });

  it("is JSON.stringify's text, the rows' text made once per array", () => {
    expect(answerJson(answer(1))).toBe(JSON.stringify(answer(1)));
    expect(answerJson(answer(2))).toBe(JSON.stringify(answer(2)));
    // The hole's own text among the answer's other fields: JSON.stringify's text, not a splice at the wrong place.
    const tailed = { ...answer(3), tail: "\u0000rows\u0000" };
    expect(answerJson(tailed)).toBe(JSON.stringify(tailed));
    // Without rows, or rows that are not an array: JSON.stringify's text.
    expect(answerJson({ a: 1 })).toBe('{"a":1}');
    expect(answerJson({ rows: "x", b: [1] })).toBe('{"rows":"x","b":[1]}');
    expect(answerJson({ rows: [], b: 2 })).toBe('{"rows":[],"b":2}');
  });

  it("keeps the rows' text by the array: another array is its own text", () => {
    const a = { rows: [{ x: 1 }], now: 1 };
    expect(answerJson(a)).toBe('{"rows":[{"x":1}],"now":1}');
    // The same array again: its kept text, made when first asked (the contract: an answered rows array is never
    // changed; changed anyway, the text shows it was not made again).
    a.rows[0]!.x = 9;
    expect(answerJson({ ...a, now: 2 })).toBe('{"rows":[{"x":1}],"now":2}');
    expect(answerJson({ rows: [{ x: 3 }], now: 3 })).toBe('{"rows":[{"x":3}],"now":3}');
  });
});
