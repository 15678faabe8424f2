import { describe, expect, it } from "vitest";
import { byIdentity } from "./byIdentity.js";

describe("byIdentity", () => {
  it("derives once per object, again for another object with the same contents", () => {
    let calls = 0;
    const sum = byIdentity((xs: number[]) => (calls++, xs.reduce((a, b) => a + b, 0)));
    const a = [1, 2, 3];
    expect([sum(a), sum(a)]).toEqual([6, 6]);
    expect(calls).toBe(1);
    expect(sum([1, 2, 3])).toBe(6);
    expect(calls).toBe(2);
  });

  it("keeps an answer that is undefined or null without deriving it again", () => {
    let calls = 0;
    const none = byIdentity((_: object) => (calls++, undefined));
    const o = {};
    none(o);
    none(o);
    expect(calls).toBe(1);
  });
});
