import { zeroAddress, type Hex } from "viem";
import {
  BAND_BPS,
  fastRoutesSha256,
  fastRouteTable,
  MAX_USD,
  type FastPair,
  type FastRouteTable,
} from "../../lib/fastRoutes.js";
import { poolId } from "../../lib/v4.js";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";
import type { Pins } from "./pins.js";
import { MAX_POOL_FEE } from "./verifyPlan.js";
import { lc } from "../../lib/address.js";

/** Pairs fast mode may pin (SPEC: ETH, WETH, USDG and the stock tokens; never the BTC asset or the partner token). */
const FAST_SYMBOLS = new Set(["ETH", "WETH", "USDG"]);

export type PinnedRoutes = { sha256: Hex; table: FastRouteTable };
export type TermsRoutes = { version: number; sha256: Hex; pairs: FastPair[]; max_usd: number };

/** A pair's gas floor leaves room under SPEC's 1,000,000 for the SDK's margin. */
const MAX_GAS_FLOOR = 900_000;

/**
 * What is wrong with a pair by SPEC's rules and the pins, or null: pinned tokens of the fast set
 * (stocks by their pinned kind), pinned canonical pools (hookless, at an LP fee a market charges,
 * ids their keys'), hops that chain from the input's pool currency to the output's, and the band and cap SPEC
 * gives its shape. The server's numbers are never the client's tolerance.
 */
function pairProblem(p: FastPair, pins: Pins): string | null {
  for (const [sym, addr] of [
    [p.token_in, p.address_in],
    [p.token_out, p.address_out],
  ] as const) {
    if (!FAST_SYMBOLS.has(sym) && pins.tokens[sym]?.kind !== "stock") return `${sym} is not a fast-mode token`;
    const want = sym === "ETH" ? zeroAddress : pins.tokens[sym]?.address;
    if (!want || lc(want) !== lc(addr)) return `${sym} is not at its pinned address`;
  }
  if (!Array.isArray(p.hops) || !p.hops.length || p.hops.length > 2) return "not a route of one or two hops";
  const weth = lc(pins.tokens.WETH?.address ?? zeroAddress);
  const poolCurrency = (a: string) => (lc(a) === weth ? zeroAddress : lc(a));
  if (poolCurrency(p.address_in) === poolCurrency(p.address_out)) return "the same currency on both sides";
  for (const g of [p.gas_floor, p.gas_floor_permit])
    if (!Number.isInteger(g) || g < 21_000 || g > MAX_GAS_FLOOR) return `a gas floor of ${g}`;
  let at = poolCurrency(p.address_in);
  for (const [i, h] of p.hops.entries()) {
    // Two hops go through USDG, as the server's table is built (lib/fastRoutes): never a token of
    // the server's choosing.
    if (i === 1 && at !== lc(pins.tokens.USDG?.address ?? "")) return "a middle currency other than USDG";
    if (h.hooks !== zeroAddress) return "a hooked pool";
    if (!pins.pools.some((x) => lc(x.id) === lc(h.pool_id))) return `pool ${h.pool_id}, not a pinned canonical pool`;
    if (h.fee > MAX_POOL_FEE) return `a pool charging ${h.fee / 100} bps`;
    if (
      lc(
        poolId({
          currency0: h.currency0,
          currency1: h.currency1,
          fee: h.fee,
          tickSpacing: h.tick_spacing,
          hooks: h.hooks,
        }),
      ) !== lc(h.pool_id)
    )
      return "a pool id that is not its key's";
    const from = lc(h.zero_for_one ? h.currency0 : h.currency1);
    if (from !== at) return "hops that do not chain from the input";
    at = lc(h.zero_for_one ? h.currency1 : h.currency0);
  }
  if (at !== poolCurrency(p.address_out)) return "hops that do not end in the output";
  const againstUsdg = p.token_in === "USDG" || p.token_out === "USDG";
  if (p.band_bps !== (againstUsdg ? BAND_BPS.usdg : BAND_BPS.cross)) return `a band of ${p.band_bps} bps`;
  if (p.max_usd > (p.hops.length === 1 ? MAX_USD.direct : MAX_USD.twoHop)) return `a cap of $${p.max_usd}`;
  return null;
}

/** CONFIG_MISMATCH unless the table is for the pinned chain and router, hashes to `sha256`, and every pair passes. */
export function checkTable(table: FastRouteTable, sha256: Hex, pins: Pins): void {
  if (table.chain_id !== pins.chainId || lc(table.router) !== lc(pins.router))
    throw new PitError("CONFIG_MISMATCH", "the route table is for another chain or router");
  const sha = fastRoutesSha256(table);
  if (sha !== sha256) throw new PitError("CONFIG_MISMATCH", `the route table's SHA-256 is ${sha}, not ${sha256}`);
  if (!Array.isArray(table.pairs)) throw new PitError("CONFIG_MISMATCH", "the route table has no pairs");
  for (const p of table.pairs) {
    let problem: string | null;
    try {
      problem = pairProblem(p, pins);
    } catch (err) {
      problem = `an unreadable entry (${(err as Error).message?.split("\n")[0]})`;
    }
    if (problem) throw new PitError("CONFIG_MISMATCH", `the table's ${p.token_in} -> ${p.token_out} has ${problem}`);
  }
}

/**
 * Fast mode's table as the client builds it itself from the pinned tokens and canonical pools
 * (lib/fastRoutes, as the server does).
 */
export function localTable(pins: Pins): FastRouteTable {
  const tokens = Object.fromEntries(
    Object.entries(pins.tokens).map(([s, t]) => [s, { address: t.address, kind: t.kind ?? "" }]),
  );
  return fastRouteTable({ chainId: pins.chainId, router: pins.router, tokens, pools: pins.pools });
}

/**
 * The route table pinned when the agent is set up: built locally from the pinned canonical pools
 * (the server's pairs are never taken), and live/fast/terms must name its SHA-256; another
 * SHA-256 is a table through other pools (CONFIG_MISMATCH).
 */
export async function readFastRoutes(http: Http, pins: Pins): Promise<PinnedRoutes> {
  const t = await http.get<{ routes?: TermsRoutes }>("/live/fast/terms");
  const r = t?.routes;
  if (!r || typeof r.sha256 !== "string") throw new PitError("CONFIG_MISMATCH", "the fast terms carry no route table");
  const table = localTable(pins);
  const sha256 = fastRoutesSha256(table);
  if (r.sha256 !== sha256)
    throw new PitError(
      "CONFIG_MISMATCH",
      `the server's route table is ${r.sha256}, not ${sha256} built from the pinned pools`,
    );
  checkTable(table, sha256, pins);
  return { sha256, table };
}
