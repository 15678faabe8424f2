import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./root.js";
import {
  bpsOf,
  feeFor,
  majorTierBps,
  MAJOR_TIERS,
  MAX_FEE_BPS,
  OTHER_BPS,
  SCHEDULE_2,
  SHIELD_ADD_BPS,
} from "./fees.js";

describe("fee schedule 2", () => {
  it("steps the major rate down at each 30-day volume threshold", () => {
    expect(majorTierBps(0)).toBe(25);
    expect(majorTierBps(99_999.99)).toBe(25);
    expect(majorTierBps(100_000)).toBe(20);
    expect(majorTierBps(1_000_000)).toBe(15);
    expect(majorTierBps(9_999_999)).toBe(15);
    expect(majorTierBps(10_000_000)).toBe(10);
    expect(majorTierBps(1e12)).toBe(10); // SPEC: "down to lowest volume tier 10 bps"
  });

  it("other is 50 whatever the volume; Shield adds 10; tier is the rate before Shield", () => {
    expect(feeFor({ feeClass: "other", volume30dUsd: 1e9, shield: false })).toEqual({ tier: 50, bps: 50 });
    expect(feeFor({ feeClass: "other", volume30dUsd: 0, shield: true })).toEqual({ tier: 50, bps: 60 });
    expect(feeFor({ feeClass: "major", volume30dUsd: 2_000_000, shield: true })).toEqual({ tier: 15, bps: 25 });
  });

  it("has SPEC's numbers (Limits, Fee row)", () => {
    const spec = readFileSync(join(ROOT, "docs", "SPEC.md"), "utf8");
    const row = new RegExp(
      String.raw`^\| Fee \| schedule 2: major posted (\d+) bps down to lowest volume tier (\d+) bps; ` +
        String.raw`other (\d+) bps; Shield adds (\d+) bps; max (\d+) bps \|$`,
      "m",
    ).exec(spec);
    expect(row, "SPEC.md Limits has no Fee row in the expected words").not.toBeNull();
    const [posted, lowest, other, shieldAdd, max] = row!.slice(1).map(Number);
    expect([MAJOR_TIERS[0]!.bps, MAJOR_TIERS.at(-1)!.bps, OTHER_BPS, SHIELD_ADD_BPS, MAX_FEE_BPS]).toEqual([
      posted,
      lowest,
      other,
      shieldAdd,
      max,
    ]);
  });

  it("caps tier plus Shield at the maximum (a schedule where the sum would pass it)", () => {
    // Schedule 2's largest fee is 50 + 10 = 60, under its 100 cap: the cap only shows on a schedule
    // whose other rate plus Shield passes the maximum.
    const steep = { ...SCHEDULE_2, otherBps: 95 };
    // 105 uncapped
    expect(feeFor({ feeClass: "other", volume30dUsd: 0, shield: true }, steep)).toEqual({ tier: 95, bps: 100 });
    expect(feeFor({ feeClass: "other", volume30dUsd: 0, shield: false }, steep)).toEqual({ tier: 95, bps: 95 });
    expect(feeFor({ feeClass: "other", volume30dUsd: 0, shield: true }, { ...steep, maxBps: 97 })).toEqual({
      tier: 95,
      bps: 97,
    });
    // A major tier at the cap stays there with Shield.
    const topMajor = { ...SCHEDULE_2, majorTiers: [{ min_30d_volume_usd: 0, bps: 100 }] };
    expect(feeFor({ feeClass: "major", volume30dUsd: 5, shield: true }, topMajor)).toEqual({ tier: 100, bps: 100 });
  });

  it("bpsOf takes bps of an amount rounded down, as the router's PAY_PORTION does", () => {
    expect(bpsOf(1_000_000n, 25)).toBe(2_500n);
    expect(bpsOf(399n, 25)).toBe(0n);
    expect(bpsOf(10_001n, 50n)).toBe(50n);
  });
});
