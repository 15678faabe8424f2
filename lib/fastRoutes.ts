import { getAddress, sha256, stringToBytes, zeroAddress, type Address, type Hex } from "viem";
import { canonicalJson } from "./canonicalJson.js";
import type { SwapHop } from "./router/swap.js";
import { lc } from "./address.js";

/**
 * Fast mode's pinned route table (SPEC "Versioning": versioned, identified by its SHA-256): pairs
 * and directions among ETH, WETH, USDG and the stock tokens, each with its pool path, gas floor,
 * USD cap, fee side and minimum-out band. Built from the universe's pools alone (no live reads),
 * so the server and an SDK holding the same universe derive the same bytes and the same hash.
 * Never the BTC asset, the partner token, launchpad, curve or long-tail tokens; never ETH<->WETH.
 */
export const FAST_ROUTES_VERSION = 1;
/**
 * The band on top of the size cap and pool fees that a minimum may sit under the oracle value (SPEC "Limits", fast
 * mode).
 */
export const BAND_BPS = { usdg: 75, cross: 125 } as const;
/** USD caps per route: one hop against USDG, or two hops through it. */
export const MAX_USD = { direct: 5_000, twoHop: 2_500 } as const;
/** Gas a signed fast transaction must at least carry: the transaction, the router, each hop, and what the pair adds. */
const GAS = { base: 21_000 + 45_000 + 25_000, hop: 90_000, pullErc20: 40_000, permit: 60_000, wrap: 30_000 } as const;

export type FastHop = {
  pool_id: Hex;
  currency0: Address;
  currency1: Address;
  fee: number;
  tick_spacing: number;
  hooks: Address;
  zero_for_one: boolean;
};
export type FastPair = {
  token_in: string;
  token_out: string;
  address_in: Address;
  address_out: Address;
  hops: FastHop[];
  /** The least gas limit a signed transaction of this pair carries (more with a permit: `gas_floor_permit`). */
  gas_floor: number;
  gas_floor_permit: number;
  max_usd: number;
  fee_side: "input" | "output";
  band_bps: number;
};
export type FastRouteTable = { version: number; chain_id: number; router: Address; pairs: FastPair[]; max_usd: number };

type UniverseToken = { address: Address; kind: string };
type UniversePool = {
  id: Hex;
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
};

/** ETH, WETH and USDG outrank stock tokens for the fee side (the more liquid, marked side); input on a tie. */
const feeRank = (symbol: string) => (symbol === "ETH" || symbol === "WETH" || symbol === "USDG" ? 3 : 2);

export function fastRouteTable(p: {
  chainId: number;
  router: Address;
  tokens: Record<string, UniverseToken>;
  pools: UniversePool[];
}): FastRouteTable {
  const stocks = Object.keys(p.tokens)
    .filter((s) => p.tokens[s]!.kind === "stock")
    .sort();
  const symbols = ["ETH", "WETH", "USDG", ...stocks].filter((s) => p.tokens[s]);
  const usdg = p.tokens.USDG?.address;
  // Pools trade native ETH: WETH's pool currency is ETH (the router unwraps and wraps).
  const currencyOf = (s: string): Address =>
    s === "WETH" || s === "ETH" ? zeroAddress : getAddress(p.tokens[s]!.address);
  const poolOf = (a: Address, b: Address) =>
    p.pools.find(
      (x) =>
        x.hooks === zeroAddress &&
        ((lc(x.currency0) === lc(a) && lc(x.currency1) === lc(b)) ||
          (lc(x.currency0) === lc(b) && lc(x.currency1) === lc(a))),
    );
  const hop = (pool: UniversePool, currencyIn: Address): FastHop => ({
    pool_id: pool.id,
    currency0: getAddress(pool.currency0),
    currency1: getAddress(pool.currency1),
    fee: pool.fee,
    tick_spacing: pool.tickSpacing,
    hooks: getAddress(pool.hooks),
    zero_for_one: lc(pool.currency0) === lc(currencyIn),
  });

  const pairs: FastPair[] = [];
  for (const a of symbols) {
    for (const b of symbols) {
      if (a === b || currencyOf(a) === currencyOf(b)) continue;
      const [ca, cb] = [currencyOf(a), currencyOf(b)];
      const direct = poolOf(ca, cb);
      let hops: FastHop[] | null = null;
      if (direct) hops = [hop(direct, ca)];
      else if (usdg) {
        const first = poolOf(ca, usdg);
        const second = poolOf(usdg, cb);
        if (first && second) hops = [hop(first, ca), hop(second, usdg)];
      }
      if (!hops) continue;
      const againstUsdg = a === "USDG" || b === "USDG";
      const gas =
        GAS.base +
        GAS.hop * hops.length +
        (a === "ETH" ? 0 : GAS.pullErc20) +
        (a === "WETH" || b === "WETH" ? GAS.wrap : 0);
      pairs.push({
        token_in: a,
        token_out: b,
        address_in: a === "ETH" ? zeroAddress : getAddress(p.tokens[a]!.address),
        address_out: b === "ETH" ? zeroAddress : getAddress(p.tokens[b]!.address),
        hops,
        gas_floor: gas,
        gas_floor_permit: a === "ETH" ? gas : gas + GAS.permit,
        max_usd: hops.length === 1 ? MAX_USD.direct : MAX_USD.twoHop,
        fee_side: feeRank(a) >= feeRank(b) ? "input" : "output",
        band_bps: againstUsdg ? BAND_BPS.usdg : BAND_BPS.cross,
      });
    }
  }
  return {
    version: FAST_ROUTES_VERSION,
    chain_id: p.chainId,
    router: getAddress(p.router),
    pairs,
    max_usd: Math.max(0, ...pairs.map((x) => x.max_usd)),
  };
}

/** The table's identity: SHA-256 of its canonical JSON (keys sorted, no spaces). */
export const fastRoutesSha256 = (t: FastRouteTable): Hex => sha256(stringToBytes(canonicalJson(t)));

/** The pinned pair for a direction, by symbol or address; null: FAST_PAIR. */
export function fastPairOf(t: FastRouteTable, tokenIn: string, tokenOut: string): FastPair | null {
  const is = (param: string, symbol: string, address: Address) =>
    param === symbol || (param.startsWith("0x") && lc(param) === lc(address));
  return t.pairs.find((x) => is(tokenIn, x.token_in, x.address_in) && is(tokenOut, x.token_out, x.address_out)) ?? null;
}

/** A pinned pair's hops as the router encoder takes them (lib/router/swap). */
export const fastPairHops = (pair: FastPair): SwapHop[] =>
  pair.hops.map((h) => ({
    key: { currency0: h.currency0, currency1: h.currency1, fee: h.fee, tickSpacing: h.tick_spacing, hooks: h.hooks },
    zeroForOne: h.zero_for_one,
    currencyIn: h.zero_for_one ? h.currency0 : h.currency1,
    currencyOut: h.zero_for_one ? h.currency1 : h.currency0,
  }));
