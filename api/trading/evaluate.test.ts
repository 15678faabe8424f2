import { describe, expect, it } from "vitest";
import { zeroAddress, type Address } from "viem";
import type { ChainSnapshot, CurveSnapshot } from "../ports/chainSnapshot.js";
import { assertCurveFacts, assertNotUndersized, type RankedRoute } from "./evaluate.js";
import type { CurveRoute } from "./routing.js";
import type { TokenInfo } from "./sides.js";

const token = "0x00000000000000000000000000000000000c0de1" as Address;
const route: CurveRoute = { id: `curve:${token}`, venue: "curve", label: "launchpad curve", token, buy: true };
const best = {
  quote: { route, ok: true, failed: false, amountOut: 10n ** 21n, gas: 110_000n, error: null },
  midAtoms: 1,
  venueFeeBps: 100,
  row: {},
} as unknown as RankedRoute;
const side = { symbol: "LAUNCH", address: token } as TokenInfo;
const sizing = {
  amountIn: 10n ** 17n,
  swapIn: 99n * 10n ** 15n,
  inputFee: 10n ** 15n,
  fee: { bps: 100, tier: 50 },
} as Parameters<typeof assertCurveFacts>[3];
const live: CurveSnapshot = {
  state: {
    creator: zeroAddress,
    feeMode: 0,
    graduated: false,
    launchedAt: 0n,
    virtualEth: 10n ** 18n,
    virtualToken: 10n ** 27n,
    realEth: 0n,
  },
  fees: { protocol: 100n, creator: 0n, snipe: 0n },
  graduationWei: 10n ** 20n,
};
const snap = (curve: CurveSnapshot | null): ChainSnapshot => ({
  block: 1n,
  time: 1_000,
  baseFee: 1n,
  calls: [],
  curve,
  stock: null,
  wallet: null,
});
const code = (curve: CurveSnapshot | null) => {
  try {
    assertCurveFacts(best, side, snap(curve), sizing);
    return "ok";
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe("curve facts before a curve trade is built", () => {
  it("a readable live curve passes; graduated, snipe tax and a graduating buy refuse", () => {
    expect(code(live)).toBe("ok");
    expect(code({ ...live, state: { ...live.state!, graduated: true } })).toBe("CURVE_GRADUATED");
    expect(code({ ...live, fees: { ...live.fees!, snipe: 500n } })).toBe("SNIPE_TAX");
    expect(code({ ...live, graduationWei: 10n ** 16n })).toBe("CURVE_GRADUATED");
  });

  it("fails closed with VENUE_FAILED when any curve reading is missing (never skips the checks)", () => {
    expect(code(null)).toBe("VENUE_FAILED");
    expect(code({ ...live, state: null })).toBe("VENUE_FAILED");
    expect(code({ ...live, fees: null })).toBe("VENUE_FAILED");
    expect(code({ ...live, graduationWei: null })).toBe("VENUE_FAILED");
  });
});

describe("a size too small to route (issue 30)", () => {
  const eth = { symbol: "ETH", address: zeroAddress, decimals: 18 };
  const mark = { usd: 4_000, source: "oracle" as const, age_s: 1, stale: false };
  it("is MIN_NOTIONAL naming the minimum in dollars and atoms, not NO_ROUTE", () => {
    let err: { code?: string; message?: string } = {};
    try {
      assertNotUndersized({ amountIn: 1n, markIn: mark }, eth);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe("MIN_NOTIONAL");
    expect(err.message).toMatch(/\(1 atoms of ETH\), below the \$1 minimum/);
    // $1 at $4,000 per ETH is 0.00025 ETH: 250,000,000,000,000 wei (one more, to be sure of the dollar).
    expect(err.message).toContain("send amount_in of at least 250000000000001 atoms, or notional_usd of at least 1");
  });
  it("leaves a trade worth the minimum, or one without a mark, to the routes' own answer", () => {
    expect(() => assertNotUndersized({ amountIn: 10n ** 15n, markIn: mark }, eth)).not.toThrow();
    expect(() => assertNotUndersized({ amountIn: 1n, markIn: null }, eth)).not.toThrow();
  });
});
