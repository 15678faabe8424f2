import { getAddress, zeroAddress, type Address, type LocalAccount, type PublicClient } from "viem";
import { LRUCache } from "lru-cache";
import { launchpadAbi, priceFeedAbi, sanctionsListAbi } from "../abis/fixtures.js";
import { multicall3Abi } from "../abis/multicall3.js";
import { Refusal } from "../api/errors/index.js";
import type { Db } from "../api/ports/store/db.js";
import { onClock } from "../lib/cacheClock.js";
import { readCurveTrade } from "../lib/curveRead.js";
import { nonceEnforcerAbi, type Execution } from "../lib/delegation.js";
import { beaconOf } from "../lib/eip1967.js";
import type { FeeClass } from "../lib/fees.js";
import { markBandBps, readMarkSource } from "../lib/markSource.js";
import type { SessionBinding, SignedMark } from "../lib/sessionBinding.js";
import type { Marks } from "./checks.js";
import type { CosignerPins } from "./pins.js";
import type { OwnRead } from "./rootRules.js";
import { roundUsdPrice, sanctionedRefusal, screenedOf, signedMarkOf, signedSide } from "./tradeRules.js";
import { lc } from "../lib/address.js";

/**
 * The co-signer's own reads of the chain (never the API's answers) and the state they share: its
 * nonce, and short caches so agents trading often do not re-read the same oracle, source or beacon.
 */

/** How long the co-signer reuses its oracle read of a pair (the chain time in it only shortens a leaf). */
const MARKS_TTL_MS = 1_000;
/**
 * A feedless source's time-weighted read is reused this long (a 30-minute median moves little in it;
 * each read costs a block search and logs).
 */
const WINDOW_TTL_MS = 10_000;

export type CosignerDeps = {
  account: LocalAccount;
  db: Db;
  chain: PublicClient;
  pins: CosignerPins;
  clock: () => number;
  frozen?: boolean;
  maxInFlight?: number;
};
export type PricedMarks = Marks & { chainTime: number };

/** One co-signer's state: its deps, its nonce read, its co-signings in hand and its caches. */
export type CosignerState = ReturnType<typeof cosignerState>;

export function cosignerState(d: CosignerDeps, maxInFlight: number) {
  return {
    d,
    maxInFlight,
    inFlight: 0,
    nonce: null as Promise<bigint> | null,
    // Oracle answers move a few times a day: one read a second per pair serves an agent trading often.
    marks: sharedReads<PricedMarks>(d.clock),
    live: sharedReads<OwnRead | null>(d.clock, WINDOW_TTL_MS),
    beacon: sharedReads<Address | null>(d.clock),
  };
}

export const nowOf = (s: CosignerState) => Math.floor(s.d.clock() / 1000);
export const tokenOf = (s: CosignerState, a: Address) => s.d.pins.tokens.find((t) => lc(t.address) === lc(a)) ?? null;
export const usdgOf = (s: CosignerState) => s.d.pins.tokens.find((t) => t.fixedUsd === 1)?.address ?? zeroAddress;
export function oraclePriced(s: CosignerState, t: string) {
  const p = tokenOf(s, t as Address);
  return !!p && (p.feed !== null || p.fixedUsd !== undefined);
}

/** The co-signer's own nonce on the NonceEnforcer (read once; a failed read is read again next time). */
export function cosignerNonce(s: CosignerState) {
  return (s.nonce ??= s.d.chain
    .readContract({
      address: s.d.pins.enforcers.NonceEnforcer!,
      abi: nonceEnforcerAbi,
      functionName: "currentNonce",
      args: [s.d.pins.delegationManager, s.d.account.address],
    })
    .catch((err) => {
      s.nonce = null;
      throw new Refusal(
        "CHAIN_UNAVAILABLE",
        "the co-signer could not read its nonce; nothing signed",
        {},
        { cause: err, retryAfterS: 2 },
      );
    }));
}

/**
 * Oracle marks read by the co-signer itself, null when missing or stale, and the chain's time
 * (leaves expire by the chain's clock, which may run ahead of ours): one multicall.
 */
async function readMarks(s: CosignerState, tokenIn: Address | null, tokenOut: Address | null): Promise<PricedMarks> {
  const tin = tokenIn ? tokenOf(s, tokenIn) : null;
  const tout = tokenOut ? tokenOf(s, tokenOut) : null;
  const feeds = [tin, tout].map((t) => t?.feed ?? null);
  const results = await s.d.chain
    .multicall({
      contracts: [
        ...feeds.map((f) => ({
          address: f ?? zeroAddress,
          abi: priceFeedAbi,
          functionName: "latestRoundData" as const,
        })),
        { address: s.d.pins.multicall3, abi: multicall3Abi, functionName: "getCurrentBlockTimestamp" as const },
      ],
      allowFailure: true,
    })
    .catch((err) => {
      throw new Refusal(
        "CHAIN_UNAVAILABLE",
        "the co-signer could not read its marks; nothing signed",
        {},
        { cause: err, retryAfterS: 2 },
      );
    });
  const usd = (i: number) => {
    const t = [tin, tout][i];
    const r = results[i];
    if (t?.fixedUsd !== undefined) return t.fixedUsd;
    if (!t || !feeds[i] || !r || r.status !== "success") return null;
    const [, answer, , updatedAt] = r.result as readonly [bigint, bigint, bigint, bigint, bigint];
    return roundUsdPrice(t, answer, updatedAt, nowOf(s));
  };
  const time = results[2];
  const chainTime = time?.status === "success" ? Number(time.result as bigint) : nowOf(s);
  return {
    usdIn: usd(0),
    usdOut: usd(1),
    decimalsIn: tin?.decimals ?? 18,
    decimalsOut: tout?.decimals ?? 18,
    chainTime,
  };
}

export const cachedMarks = (s: CosignerState, tokenIn: Address | null, tokenOut: Address | null) =>
  s.marks(`${tokenIn}>${tokenOut}`, () => readMarks(s, tokenIn, tokenOut));

/**
 * The co-signer's own USD read of a feedless token at the source its mark names (a hookless pool
 * against an oracle-priced token, or the launchpad curve against ETH), from the chain alone: the
 * 30-minute median and its stability at the pair's band, the spot, and the USD depth on the side
 * it is priced against.
 */
export async function ownPrice(s: CosignerState, token: Address, m: SignedMark): Promise<OwnRead | null> {
  const read = await readMarkSource(
    s.d.chain,
    m.source,
    { address: token, decimals: m.decimals },
    {
      poolManager: s.d.pins.poolManager,
      launchpad: s.d.pins.launchpad,
      againstDecimals: (a) => tokenOf(s, a)?.decimals ?? null,
    },
    markBandBps(m.source, usdgOf(s)),
  );
  const against = read ? tokenOf(s, read.against) : null;
  const againstUsd = against ? await oracleUsd(s, against) : null;
  if (!read || againstUsd === null) return null;
  return {
    usd: read.median * againstUsd,
    stableShare: read.stableShare,
    spotUsd: read.spot * againstUsd,
    depthUsd: read.depthAgainst * againstUsd,
  };
}

async function oracleUsd(s: CosignerState, t: CosignerPins["tokens"][number]): Promise<number | null> {
  if (t.fixedUsd !== undefined) return t.fixedUsd;
  if (!t.feed) return null;
  const [, answer, , updatedAt] = await s.d.chain.readContract({
    address: t.feed,
    abi: priceFeedAbi,
    functionName: "latestRoundData",
  });
  return roundUsdPrice(t, answer, updatedAt, nowOf(s));
}

const cachedLive = (s: CosignerState, token: Address, mark: SignedMark) =>
  s.live(`${lc(token)}:${JSON.stringify(mark.source)}:${mark.decimals}`, () => ownPrice(s, token, mark));

/**
 * The marks with each feedless side priced at its signed mark against the co-signer's own read
 * (tradeRules signedSide).
 */
export async function withSignedMarks(
  s: CosignerState,
  m: PricedMarks,
  b: SessionBinding,
  tokenIn: Address | null,
  tokenOut: Address | null,
): Promise<PricedMarks> {
  let out = { ...m };
  const live = async (t: Address, mark: SignedMark) => (await cachedLive(s, t, mark).catch(() => null))?.usd ?? null;
  const sIn = signedMarkOf(b, tokenIn, (t) => oraclePriced(s, t));
  const sOut = signedMarkOf(b, tokenOut, (t) => oraclePriced(s, t));
  if (sIn) out = signedSide(out, "in", sIn, await live(tokenIn!, sIn));
  if (sOut) out = signedSide(out, "out", sOut, await live(tokenOut!, sOut));
  return out;
}

/**
 * The list read now, at every co-signing (a grant's screening may be weeks old): the session
 * wallet and the executor. The wallet is also the owner (a hosted executor trades only for its
 * owner's wallet, checked at grant). An unreadable list signs nothing.
 */
export async function assertNoneSanctioned(s: CosignerState, b: SessionBinding) {
  const listed = await s.d.chain
    .multicall({
      contracts: screenedOf(b).map(([, a]) => ({
        address: s.d.pins.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "isSanctioned" as const,
        args: [getAddress(a)] as const,
      })),
      allowFailure: false,
    })
    .catch((err) => {
      throw new Refusal(
        "CHAIN_UNAVAILABLE",
        "the co-signer could not read the sanctions list; nothing signed",
        {},
        { cause: err, retryAfterS: 5 },
      );
    });
  const refused = sanctionedRefusal(b, listed);
  if (refused) throw refused;
}

/** A curve trade read by the co-signer itself; a sale's fee against its own quote of the sale. */
export async function readCurve(s: CosignerState, swap: Execution, fee: Execution, b: SessionBinding) {
  const ctx = {
    launchpad: s.d.pins.launchpad,
    wallet: b.wallet,
    feeRecipient: s.d.pins.feeRecipient,
    curveTokens: b.curve_tokens ?? [],
  };
  const first = readCurveTrade(swap, fee, ctx);
  if (first.buy !== false || !first.token) return first;
  const [ethOut] = await s.d.chain
    .readContract({
      address: s.d.pins.launchpad,
      abi: launchpadAbi,
      functionName: "quoteSell",
      args: [first.token, first.amountIn],
    })
    .catch(() => [null] as const);
  return readCurveTrade(swap, fee, { ...ctx, sellQuote: ethOut });
}

export const classOf = (s: CosignerState, token: Address, b: SessionBinding) =>
  feeClassOf(s.d.pins, (t) => s.beacon(lc(t), () => beaconOf(s.d.chain, t)), token, b);

/**
 * A token's fee class as the API bills it: a pinned token by its pin; any other token the wallet
 * bound is major when it sits behind the stock issuer's beacon (SPEC's `stock_beacon` reading,
 * lib/fees.ts), else other. null (FEE_CLASS) for a token outside the binding or a beacon that
 * cannot be read.
 */
export async function feeClassOf(
  pins: Pick<CosignerPins, "tokens" | "stockBeacon">,
  beacon: (token: Address) => Promise<Address | null>,
  token: Address,
  b: SessionBinding,
): Promise<FeeClass | null> {
  const pinned = pins.tokens.find((t) => lc(t.address) === lc(token));
  if (pinned) return pinned.major ? "major" : "other";
  if (!b.tokens.includes(lc(token))) return null;
  const read = await beacon(token).then(
    (a) => ({ a }),
    () => null,
  );
  if (!read) return null;
  return read.a !== null && lc(read.a) === lc(pins.stockBeacon) ? "major" : "other";
}

/**
 * One read per key for `ttl` (MARKS_TTL_MS unless given): concurrent and repeated asks share it; a
 * failed read is not kept.
 */
function sharedReads<T>(clock: () => number, ttl = MARKS_TTL_MS) {
  const cache = new LRUCache<string, Promise<T>>({ max: 1_000, ttl, ...onClock(clock) });
  return (key: string, read: () => Promise<T>): Promise<T> => {
    let p = cache.get(key);
    if (!p) {
      p = read();
      cache.set(key, p);
      p.catch(() => cache.delete(key));
    }
    return p;
  };
}
