import type { PublicClient } from "viem";
import { priceFeedAbi } from "../../abis/fixtures.js";
import type { Http } from "./http.js";
import type { Pins } from "./pins.js";

/** A mark older than this is no mark for a trade check (a feed's heartbeat is 24 h; stock feeds rest at weekends). */
export const MARK_MAX_AGE_S = 3 * 86_400;

export type OwnMark = { usd: number; ageS: number };

/** WETH is ETH's price; every other symbol is its own. */
const feedSymbol = (symbol: string) => (symbol === "WETH" ? "ETH" : symbol);

/**
 * A token's own USD mark: USDG at $1, else its pinned feed (ETH's for WETH) read on the client's
 * own RPC, with its age against `nowS`; null without a feed or an answer.
 */
export async function ownMark(chain: PublicClient, pins: Pins, symbol: string, nowS: number): Promise<OwnMark | null> {
  if (symbol === "USDG") return { usd: 1, ageS: 0 };
  const feed = pins.tokens[feedSymbol(symbol)]?.feed;
  if (!feed) return null;
  const round = await chain.readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" }).catch(() => null);
  if (!round || round[1] <= 0n) return null;
  return { usd: Number(round[1]) / 1e8, ageS: Math.max(0, nowS - Number(round[3])) };
}

type StatsAnswer = { assets?: { symbol: string; mark: number | null; stale?: boolean }[] | null };

/** The server's marks as GET stats publishes them (USDG at $1, WETH at ETH's), by symbol; a missing one is absent. */
export async function serverMarks(http: Http): Promise<Record<string, number>> {
  const s = await http.get<StatsAnswer | null>("/stats");
  const out: Record<string, number> = { USDG: 1 };
  for (const a of Array.isArray(s?.assets) ? s.assets : []) if (typeof a?.symbol === "string" && typeof a.mark === "number" && a.mark > 0) out[a.symbol] = a.mark;
  if (out.ETH !== undefined) out.WETH = out.ETH;
  return out;
}
