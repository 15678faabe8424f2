import { describe, expect, it } from "vitest";
import { feeFor, majorTierBps, MAJOR_TIERS, MAX_FEE_BPS } from "../../lib/fees.js";

describe("fee schedule 2", () => {
  it("steps the major rate down at each 30-day volume threshold", () => {
    expect(majorTierBps(0)).toBe(25);
    expect(majorTierBps(99_999.99)).toBe(25);
    expect(majorTierBps(100_000)).toBe(20);
    expect(majorTierBps(1_000_000)).toBe(15);
    expect(majorTierBps(9_999_999)).toBe(15);
    expect(majorTierBps(10_000_000)).toBe(10);
    expect(majorTierBps(1e12)).toBe(MAJOR_TIERS[MAJOR_TIERS.length - 1]!.bps);
  });

  it("other is 50 whatever the volume; Shield adds 10; tier is the rate before Shield", () => {
    expect(feeFor({ feeClass: "other", volume30dUsd: 1e9, shield: false })).toEqual({ tier: 50, bps: 50 });
    expect(feeFor({ feeClass: "other", volume30dUsd: 0, shield: true })).toEqual({ tier: 50, bps: 60 });
    expect(feeFor({ feeClass: "major", volume30dUsd: 2_000_000, shield: true })).toEqual({ tier: 15, bps: 25 });
    expect(feeFor({ feeClass: "major", volume30dUsd: 0, shield: true }).bps).toBeLessThanOrEqual(MAX_FEE_BPS);
  });
});
