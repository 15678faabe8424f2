import { describe, expect, it } from "vitest";
import { MARK_STABLE_SHARE, markUnsettled, windowPrice } from "./markSource.js";

const [from, to] = [10_000, 11_800];
const band = 125;

describe("windowPrice: a window's time-weighted median and its stability", () => {
  it("a flat price is its own median, stable the whole window", () => {
    expect(windowPrice(2, [], from, to, band)).toEqual({ median: 2, stableShare: 1 });
    expect(markUnsettled(windowPrice(2, [], from, to, band), 2, band)).toBeNull();
  });

  it(
    "a short spike (×4 for 2 of 30 minutes) leaves the median where the price held; under 10 % of the window it " +
      "passes",
    () => {
      const w = windowPrice(
        1,
        [
          { ts: from + 600, price: 4 },
          { ts: from + 720, price: 1 },
        ],
        from,
        to,
        band,
      );
      expect(w.median).toBe(1);
      expect(w.stableShare).toBeCloseTo(1 - 120 / 1_800, 9);
      expect(markUnsettled(w, 1, band)).toBeNull();
    },
  );

  it("a spike held over 10 % of the window (×4 for 4 minutes) is refused even with the spot back at the median", () => {
    const w = windowPrice(
      1,
      [
        { ts: from + 600, price: 4 },
        { ts: from + 840, price: 1 },
      ],
      from,
      to,
      band,
    );
    expect(w.median).toBe(1);
    expect(w.stableShare).toBeLessThan(MARK_STABLE_SHARE);
    expect(markUnsettled(w, 1, band)).toMatch(/only 87 % of the window/);
  });

  it("the spike-then-park attack: spot at the lifted mean (+40 %) is outside the band of the median", () => {
    const w = windowPrice(
      1,
      [
        { ts: from + 1_500, price: 4 },
        { ts: from + 1_740, price: 1.4 },
      ],
      from,
      to,
      band,
    );
    expect(w.median).toBe(1);
    expect(markUnsettled(w, 1.4, band)).not.toBeNull();
  });

  it("a slow ramp within the band passes at its middle; one past the band is refused", () => {
    const ramp = (total: number) =>
      Array.from({ length: 30 }, (_, i) => ({ ts: from + 60 * i, price: 1 + (total * i) / 29 }));
    const gentle = windowPrice(1, ramp(0.01), from, to, band);
    expect(gentle.median).toBeCloseTo(1.005, 3);
    expect(gentle.stableShare).toBe(1);
    expect(markUnsettled(gentle, 1.01, band)).toBeNull();
    const steep = windowPrice(1, ramp(0.1), from, to, band);
    expect(steep.median).toBeCloseTo(1.05, 2);
    expect(steep.stableShare).toBeLessThan(0.5);
    expect(markUnsettled(steep, 1.1, band)).not.toBeNull();
  });

  it("steps at or before the window's start set its first price; steps at or after its end count nothing", () => {
    const w = windowPrice(
      9,
      [
        { ts: from - 300, price: 3 },
        { ts: from, price: 2 },
        { ts: to, price: 50 },
        { ts: to + 60, price: 70 },
      ],
      from,
      to,
      band,
    );
    expect(w).toEqual({ median: 2, stableShare: 1 });
  });

  it("a price held exactly half the window is the median (the lower one)", () => {
    const w = windowPrice(1, [{ ts: from + 900, price: 2 }], from, to, band);
    expect(w.median).toBe(1);
    expect(w.stableShare).toBe(0.5);
  });

  it("an empty window answers its first price", () => {
    expect(windowPrice(3, [{ ts: from, price: 5 }], from, from, band)).toEqual({ median: 3, stableShare: 1 });
  });
});
