import { describe, expect, it } from "vitest";
import { zeroAddress, type Address, type Hex } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { RISKS, type RiskCode } from "../../lib/risks.js";
import { Q96 } from "../../lib/v4.js";
import type { PoolState } from "../ports/indexed.js";
import { gradeOf, liquidityUsd, rankQuoted, referenceOf, TIER_LIMITS, type Risk } from "./screen.js";

const risk = (code: RiskCode): Risk => ({ code, severity: RISKS[code], detail: code });
const grade = (o: Partial<Parameters<typeof gradeOf>[0]>) =>
  gradeOf({
    core: false,
    venues: 1,
    honeypot: false,
    paused: false,
    liquidity: 1_000_000,
    creatorTaxBps: 0,
    risks: [],
    ...o,
  });

describe("gradeOf: the tier and the blocked reason from what a screen found", () => {
  it("blocks a token nothing trades (NO_ROUTE), then a honeypot, then a paused stock, in that order", () => {
    expect(grade({ venues: 0, honeypot: true, paused: true })).toEqual({
      tier: "blocked",
      blockedReason: "NO_ROUTE",
      warnings: ["No pool or curve trades this token: nothing can be built."],
    });
    expect(grade({ honeypot: true, paused: true, core: true })).toMatchObject({
      tier: "blocked",
      blockedReason: "HONEYPOT",
    });
    expect(grade({ paused: true, core: true })).toMatchObject({
      tier: "blocked",
      blockedReason: "STOCK_PAUSED",
      warnings: [],
    });
    expect(TIER_LIMITS.blocked).toBe(0);
  });

  it("grades core assets A whatever their depth", () => {
    expect(grade({ core: true, liquidity: 0, risks: [risk("SELL_TAX_HIGH")] })).toEqual({
      tier: "A",
      blockedReason: null,
      warnings: [],
    });
  });

  it("grades B only with $250k of depth, no severe risk, under 1 % tax; a missing independent mark is no bar", () => {
    expect(grade({ liquidity: 250_000, risks: [risk("NO_INDEPENDENT_MARK"), risk("UPGRADEABLE")] }).tier).toBe("B");
    expect(grade({ liquidity: 249_999 }).tier).toBe("C");
    expect(grade({ risks: [risk("SELL_TAX_HIGH")] }).tier).toBe("C");
    expect(grade({ creatorTaxBps: 100 })).toEqual({
      tier: "C",
      blockedReason: null,
      warnings: [
        "Tier C: small trades only; expect thin liquidity or taxes.",
        "Transfers lose about 100 bps to taxes or creator fees.",
      ],
    });
    expect(grade({ creatorTaxBps: 99 }).tier).toBe("B");
  });

  it("puts severe risks first, keeping the order they were found in otherwise", () => {
    const risks = [risk("UPGRADEABLE"), risk("SELL_TAX_HIGH"), risk("LOW_LIQUIDITY"), risk("NO_INDEPENDENT_MARK")];
    grade({ risks });
    expect(risks.map((r) => r.code)).toEqual(["SELL_TAX_HIGH", "NO_INDEPENDENT_MARK", "UPGRADEABLE", "LOW_LIQUIDITY"]);
  });
});

const token = (symbol: string, address: Address, decimals: number, o: Partial<TokenEntry> = {}): TokenEntry => ({
  symbol,
  address,
  decimals,
  kind: "core" as TokenEntry["kind"],
  native: false,
  name: symbol,
  feed: null,
  ...o,
});
const USDG = token("USDG", "0x00000000000000000000000000000000000000Aa", 6);
const ETH = token("ETH", zeroAddress, 18, { native: true, feed: "0x00000000000000000000000000000000000000Fe" });
const PARTNER = token("PART", "0x00000000000000000000000000000000000000Bb", 18, {
  kind: "partner" as TokenEntry["kind"],
});
const LAUNCHPAD = "0x00000000000000000000000000000000000000cc" as Address;
/** Only what these steps read of the config. */
const config = { tokens: { USDG, ETH, PART: PARTNER }, contracts: { launchpad: LAUNCHPAD } } as unknown as Config;
const X = "0x0000000000000000000000000000000000000077" as Address;

/** A pool at price 1 (√P = 1 in Q96) holding liquidity L, whose currency1 is `c1`. */
const pool = (id: string, c0: Address, c1: Address, liquidity: bigint, sqrtPriceX96 = Q96): PoolState => ({
  id: id as Hex,
  currency0: c0,
  currency1: c1,
  fee: 3000,
  tickSpacing: 60,
  hooks: zeroAddress,
  sqrtPriceX96,
  priceX96: Q96,
  tick: 0,
  liquidity,
  swaps: 0,
  block: 1,
  timestamp: 1,
});

describe("liquidityUsd: a pool's full-range depth on its quote side, both sides counted", () => {
  it("reads L·√P when the quote is currency1 and L/√P when it is currency0", () => {
    expect(liquidityUsd(pool("0x1", X, USDG.address, 5_000_000n), USDG, 1)).toBe(10);
    expect(liquidityUsd(pool("0x1", X, USDG.address, 5_000_000n, 2n * Q96), USDG, 1)).toBe(20);
    expect(liquidityUsd(pool("0x1", USDG.address, X, 5_000_000n, 2n * Q96), USDG, 1)).toBe(5);
    expect(liquidityUsd(pool("0x1", USDG.address, X, 5_000_000n, 0n), USDG, 1)).toBe(0);
  });
});

describe("rankQuoted: the token's pools quoted in USDG or ETH, deepest first", () => {
  const pools = [
    pool("0xa", zeroAddress, X, 10n ** 18n),
    pool("0xb", X, USDG.address, 10n ** 6n),
    pool("0xc", X, PARTNER.address, 10n ** 30n),
  ];

  it("leaves out pools against anything else, and ETH pools without an ETH mark", () => {
    expect(rankQuoted(config, X, pools, null).map((q) => [q.pool.id, q.liquidity])).toEqual([["0xb", 2]]);
  });

  it("prices the ETH side at the mark and sorts by depth", () => {
    expect(rankQuoted(config, X, pools, 3_000).map((q) => [q.pool.id, q.quote.symbol, q.liquidity])).toEqual([
      ["0xa", "ETH", 6_000],
      ["0xb", "USDG", 2],
    ]);
  });
});

describe("referenceOf: where a token's price comes from", () => {
  const best = { pool: pool("0xb", X, USDG.address, 1n), quote: USDG, liquidity: 2 };

  it("an oracle feed first; it is independent", () => {
    expect(referenceOf(config, ETH.address, ETH, [], null, false)).toEqual({
      reference: { source: "oracle", feed: ETH.feed },
      independent: true,
    });
  });

  it("the partner token's USDG pool TWAP; without that pool it is priced at spot and not independent", () => {
    const usdgPool = pool("0xd", PARTNER.address, USDG.address, 10n ** 9n);
    expect(referenceOf(config, PARTNER.address, PARTNER, [usdgPool], best, false)).toEqual({
      reference: { source: "twap", pool_id: "0xd", window_s: expect.any(Number) },
      independent: true,
    });
    expect(referenceOf(config, PARTNER.address, PARTNER, [], best, false)).toEqual({
      reference: { source: "spot", pool_id: "0xb" },
      independent: false,
    });
  });

  it("any other token: its deepest pool's spot, else the launchpad curve, else nothing; never independent", () => {
    expect(referenceOf(config, X, undefined, [], best, true).reference).toEqual({ source: "spot", pool_id: "0xb" });
    expect(referenceOf(config, X, undefined, [], null, true)).toEqual({
      reference: { source: "curve", curve: LAUNCHPAD },
      independent: false,
    });
    expect(referenceOf(config, X, undefined, [], null, false)).toEqual({
      reference: { source: "none" },
      independent: false,
    });
  });
});
