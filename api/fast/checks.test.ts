import { describe, expect, it } from "vitest";
import { zeroAddress, type Address } from "viem";
import { fastRouteTable } from "../../lib/fastRoutes.js";
import { FAST_RULES, fastFailures, minOutFloor, unroutedFailures, type FastFacts } from "./checks.js";

const router = "0x00000000000000000000000000000000000000aa" as Address;
const usdg = "0x00000000000000000000000000000000000000ee" as Address;
const tsla = "0x00000000000000000000000000000000000000f5" as Address;
const pools = [
  { id: "0x01" as const, currency0: zeroAddress, currency1: usdg, fee: 500, tickSpacing: 10, hooks: zeroAddress },
  { id: "0x02" as const, currency0: usdg, currency1: tsla, fee: 3000, tickSpacing: 60, hooks: zeroAddress },
];
const table = fastRouteTable({
  chainId: 4663,
  router,
  tokens: {
    ETH: { address: zeroAddress, kind: "native" },
    WETH: { address: "0x00000000000000000000000000000000000000dd", kind: "wrapped" },
    USDG: { address: usdg, kind: "stable" },
    TSLA: { address: tsla, kind: "stock" },
  },
  pools,
});
const pair = table.pairs.find((p) => p.token_in === "ETH" && p.token_out === "USDG")!;
const wallet = "0x00000000000000000000000000000000000000bb" as Address;
const now = 1_900_000_000;
const mark = (usd: number) => ({ usd, source: "oracle" as const, age_s: 10, stale: false });

/** 0.01 ETH at $3,000 for at least 29.5 USDG: every rule passes. */
const facts = (over: Partial<FastFacts> = {}): FastFacts => ({
  now,
  chainId: 4663,
  router,
  wallet,
  tx: {
    raw: "0x",
    hash: "0x",
    from: wallet,
    type: "eip1559",
    chainId: 4663,
    nonce: 0,
    to: router,
    value: 10n ** 16n,
    data: "0x",
    gas: 300_000n,
    maxFeePerGas: 2_000n,
    maxPriorityFeePerGas: 1n,
    encoding: [],
  },
  req: {
    raw_tx: "0x",
    token_in: "ETH",
    token_out: "USDG",
    amount_in: "10000000000000000",
    min_out: "29500000",
    deadline: now + 30,
    fee_bps: 25,
    shield: false,
    simulate: true,
    check_only: false,
    fund: false,
    owner_attests_non_us: false,
  },
  pair,
  amountIn: 10n ** 16n,
  minOut: 29_500_000n,
  marks: { in: mark(3_000), out: mark(1) },
  decimals: { in: 18, out: 6 },
  stockInvolved: false,
  stockOpen: true,
  fee: { bps: 25, tier: 25 },
  calldataFeeBps: 25,
  baseFee: 1_000n,
  diffs: [],
  permitProblem: null,
  stock: null,
  simulation: {
    ok: true,
    error: null,
    amount_out: "29850000",
    fee_transfer: null,
    gas_total: 150_000,
    gas: [150_000],
    funded_by_overrides: false,
  },
  midOutPerIn: null,
  funded: null,
  ...over,
});
const rules = (f: FastFacts) => fastFailures(f).map((x) => x.rule);

describe("fast mode's rules", () => {
  it("pass an honest transaction; fail in SPEC's order, every failure listed", () => {
    expect(rules(facts())).toEqual([]);
    const f = rules(
      facts({ tx: { ...facts().tx, chainId: 1, value: 0n }, req: { ...facts().req, deadline: now + 61 } }),
    );
    expect(f).toEqual(["CHAIN_ID", "VALUE", "DEADLINE"]);
    expect([...f].sort((a, b) => FAST_RULES.indexOf(a) - FAST_RULES.indexOf(b))).toEqual(f);
  });

  it("list every cause within a rule, and without a pinned route still judge what needs none", () => {
    const tx = facts().tx;
    const all = fastFailures(
      facts({
        tx: { ...tx, gas: 1_000_001n, maxFeePerGas: 999n, maxPriorityFeePerGas: 3_000n },
        req: { ...facts().req, fee_bps: 10 },
        calldataFeeBps: 10,
      }),
    );
    expect(all.map((x) => x.rule)).toEqual(["GAS", "FEE_BPS"]);
    expect(all[0]!.message.split("; ")).toHaveLength(3);
    expect(all[1]!.message).toMatch(/fee_bps 10 .*; the calldata pays 10 bps/);
    const { tx: _t, req, ...rest } = facts();
    const unrouted = unroutedFailures(
      { ...rest, tx: { ...tx, chainId: 1, encoding: ["a non-empty access list"] }, req: { ...req, deadline: now } },
      "no pinned route",
    );
    expect(unrouted.map((x) => x.rule)).toEqual(["TX_ENCODING", "FAST_PAIR", "CHAIN_ID", "DEADLINE"]);
  });

  it("GAS: floor to 1,000,000; fees from the base fee to 10x it; the tip within the cap; at most 0.0002 ETH", () => {
    const tx = facts().tx;
    expect(rules(facts({ tx: { ...tx, gas: BigInt(pair.gas_floor - 1) } }))).toEqual(["GAS"]);
    expect(rules(facts({ tx: { ...tx, gas: 1_000_001n } }))).toEqual(["GAS"]);
    expect(rules(facts({ tx: { ...tx, maxFeePerGas: 999n } }))).toEqual(["GAS"]);
    expect(rules(facts({ tx: { ...tx, maxFeePerGas: 10_001n } }))).toEqual(["GAS"]);
    expect(rules(facts({ tx: { ...tx, maxPriorityFeePerGas: 3_000n } }))).toEqual(["GAS"]);
    expect(rules(facts({ baseFee: 10n ** 9n, tx: { ...tx, maxFeePerGas: 10n ** 9n } }))).toEqual(["GAS"]);
  });

  it("MIN_OUT: the floor is the larger of oracle value less cap + pool fee + band and delivery less cap", () => {
    const f = minOutFloor(facts());
    // $29.925 after the 25 bps fee; cap 500 + pool 5 + band 75 = 580 bps under: 28.189 USDG.
    expect(Number(f.oracle! - 28_189_350n)).toBeLessThanOrEqual(1);
    expect(Number(28_189_350n - f.oracle!)).toBeLessThanOrEqual(1);
    // Delivery 29.85 less 500 bps.
    expect(f.bySimulation).toBe(28_357_500n);
    expect(f.floor).toBe(28_357_500n);
    expect(rules(facts({ minOut: 28_357_499n }))).toEqual(["MIN_OUT"]);
  });

  it("POOL_FAR: delivery further under the oracle value than pool fee + band; NOTIONAL, ROUTE_CAP at marks", () => {
    expect(rules(facts({ simulation: { ...facts().simulation!, amount_out: "29000000" } }))).toEqual(["POOL_FAR"]);
    expect(
      rules(
        facts({ amountIn: 10n ** 14n, tx: { ...facts().tx, value: 10n ** 14n }, minOut: 295_000n, simulation: null }),
      ),
    ).toEqual(["NOTIONAL"]);
    expect(
      rules(
        facts({
          amountIn: 2n * 10n ** 18n,
          tx: { ...facts().tx, value: 2n * 10n ** 18n },
          simulation: null,
          minOut: 5_900_000_000n,
        }),
      ),
    ).toEqual(["ROUTE_CAP"]);
  });

  it("the route table: no ETH<->WETH, two hops through USDG with the cross band, fee side by liquidity rank", () => {
    const names = table.pairs.map((p) => `${p.token_in}>${p.token_out}`);
    expect(names).not.toContain("ETH>WETH");
    const ethTsla = table.pairs.find((p) => p.token_in === "ETH" && p.token_out === "TSLA")!;
    expect(ethTsla.hops.map((h) => h.pool_id)).toEqual(["0x01", "0x02"]);
    expect([ethTsla.band_bps, ethTsla.max_usd, ethTsla.fee_side]).toEqual([125, 2_500, "input"]);
    expect(table.pairs.find((p) => p.token_in === "TSLA" && p.token_out === "USDG")!.fee_side).toBe("output");
  });
});
