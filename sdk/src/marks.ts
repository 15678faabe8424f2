import { getAddress, zeroAddress, type Address, type PublicClient } from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { markBandBps, markUnsettled, MIN_MARK_DEPTH_USD, offBps, readMarkSource } from "../../lib/markSource.js";
import type { SessionBinding, SignedMark } from "../../lib/sessionBinding.js";
import { verificationFailed } from "./errors.js";
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
  const round = await chain
    .readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" })
    .catch(() => null);
  if (!round || round[1] <= 0n) return null;
  return { usd: Number(round[1]) / 1e8, ageS: Math.max(0, nowS - Number(round[3])) };
}

type StatsAnswer = { assets?: { symbol: string; mark: number | null; stale?: boolean }[] | null };

/** The server's marks as GET stats publishes them (USDG at $1, WETH at ETH's), by symbol; a missing one is absent. */
export async function serverMarks(http: Http): Promise<Record<string, number>> {
  const s = await http.get<StatsAnswer | null>("/stats");
  const out: Record<string, number> = { USDG: 1 };
  for (const a of Array.isArray(s?.assets) ? s.assets : [])
    if (typeof a?.symbol === "string" && typeof a.mark === "number" && a.mark > 0) out[a.symbol] = a.mark;
  if (out.ETH !== undefined) out.WETH = out.ETH;
  return out;
}

/**
 * A session binding's owner-signed marks, checked on the client's own RPC before the wallet signs
 * (GRANT_MARK): exactly the session's tokens without a pinned feed carry one; each is read at a
 * hookless pool against the pinned USDG or ETH (curve marks: this SDK signs no curve session);
 * the mark sits within the pair's band of the pool's 30-minute time-weighted median read from the
 * chain itself, the price held within the band of it 90 % of the window and the spot sits within
 * it now (lib/markSource markUnsettled: a pool pushed now, or spiked, signs nothing), the pool
 * deep enough.
 * Answers the marks checked (undefined when there are none).
 */
export async function verifySignedMarks(
  chain: PublicClient,
  pins: Pins,
  b: SessionBinding,
  nowS: number,
): Promise<SessionBinding["marks"]> {
  const pinned = Object.entries(pins.tokens);
  const pin = (a: string) => pinned.find(([, t]) => t.address.toLowerCase() === a.toLowerCase());
  const usdg = pins.tokens.USDG?.address ?? zeroAddress;
  const needs = b.tokens.filter((t) => t !== zeroAddress && t !== usdg.toLowerCase() && !pin(t)?.[1].feed);
  const marks = b.marks ?? {};
  if (JSON.stringify(Object.keys(marks).sort()) !== JSON.stringify([...needs].sort()))
    throw verificationFailed(
      "GRANT_MARK",
      `the binding marks ${Object.keys(marks).join(", ") || "nothing"}; ` +
        `the session's feedless tokens are ${needs.join(", ") || "none"}`,
    );
  for (const [token, m] of Object.entries(marks)) await checkMark(chain, pins, getAddress(token), m, nowS);
  return b.marks;
}

async function checkMark(chain: PublicClient, pins: Pins, token: Address, m: SignedMark, nowS: number): Promise<void> {
  const fail = (why: string) => verificationFailed("GRANT_MARK", `${token}: ${why}`);
  if (m.source.kind !== "pool") throw fail("a curve mark (this SDK signs no curve session)");
  const against = m.source.against.toLowerCase();
  const usdg = pins.tokens.USDG;
  const againstUsd =
    usdg && against === usdg.address.toLowerCase()
      ? 1
      : against === zeroAddress
        ? (await ownMark(chain, pins, "ETH", nowS))?.usd
        : undefined;
  if (!againstUsd) throw fail(`its pool is against ${against}, neither the pinned USDG nor ETH`);
  const decimals = await chain
    .readContract({ address: token, abi: erc20Abi, functionName: "decimals" })
    .catch(() => null);
  if (decimals === null || Number(decimals) !== m.decimals)
    throw fail(`the mark names ${m.decimals} decimals; the token says ${decimals}`);
  const band = markBandBps(m.source, usdg?.address ?? zeroAddress);
  const read = await readMarkSource(
    chain,
    m.source,
    { address: token, decimals: m.decimals },
    {
      poolManager: pins.poolManager,
      launchpad: zeroAddress,
      againstDecimals: (a) =>
        a === zeroAddress ? 18 : usdg && a.toLowerCase() === usdg.address.toLowerCase() ? usdg.decimals : null,
    },
    band,
  ).catch(() => null);
  if (!read) throw fail("its pool has no 30-minute history this client can read");
  const [median, spot, depth] = [read.median * againstUsd, read.spot * againstUsd, read.depthAgainst * againstUsd];
  if (!(offBps(m.usd, median) <= band))
    throw fail(
      `the signed mark $${m.usd} is ${Math.round(offBps(m.usd, median))} bps from the pool's ` +
        `30-minute median $${median.toPrecision(6)} (band ${band} bps)`,
    );
  const unsettled = markUnsettled({ median, stableShare: read.stableShare }, spot, band);
  if (unsettled) throw fail(`no mark: ${unsettled}; grant again once it settles`);
  if (depth < MIN_MARK_DEPTH_USD)
    throw fail(`the pool holds about $${Math.round(depth)} on its priced side, under $${MIN_MARK_DEPTH_USD}`);
}
