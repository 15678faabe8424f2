import { describe, expect, it } from "vitest";
import { allSettledOrThrow } from "./settled.js";

describe("allSettledOrThrow", () => {
  it("answers the values in order, as Promise.all does", async () => {
    const [a, b, c] = await allSettledOrThrow([
      Promise.resolve(1),
      "two",
      new Promise<number>((r) => setTimeout(() => r(3), 5)),
    ]);
    expect([a, b, c]).toEqual([1, "two", 3]);
  });

  it("throws the first rejection only once every promise has settled", async () => {
    let slowDone = false;
    const slow = new Promise<void>((r) =>
      setTimeout(() => {
        slowDone = true;
        r();
      }, 30),
    );
    const err = await allSettledOrThrow([
      slow,
      Promise.reject(new Error("first")),
      Promise.reject(new Error("second")),
    ]).catch((e: Error) => e);
    expect((err as Error).message).toBe("first");
    expect(slowDone).toBe(true);
  });
});
