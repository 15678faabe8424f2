import {
  encodeAbiParameters,
  getAddress,
  hexToBigInt,
  keccak256,
  parseAbi,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { launchpadAbi } from "../abis/fixtures.js";
import { poolManagerAbi } from "../abis/uniswapV4.js";
import type { MarkSource } from "./sessionBinding.js";
import { priceFromX96, priceX96FromSqrt } from "./twap.js";
import { poolId } from "./v4.js";

/**
 * Owner-signed marks of feedless tokens come from a time-weighted source, never one block's price:
 * the time-weighted MEDIAN over MARK_WINDOW_S of the source the mark names (a hookless v4 pool, or
 * the launchpad curve), signed only while the price held within the pair's band of that median for
 * MARK_STABLE_SHARE of the window and the spot sits within the band of it (markUnsettled). A mean
 * would not do: a ×4 spike held 4 of 30 minutes lifts it ~40 %, and the spot parked there agrees
 * with it; the median stays where the price held. The API reads the steps from the indexer; the
 * co-signer and the SDK from the chain themselves (readMarkSource); all three through windowPrice.
 */
export const MARK_WINDOW_S = 1_800;
/** The price must have held within the pair's band of its median this share of the window. */
export const MARK_STABLE_SHARE = 0.9;
/**
 * A source holds at least this much (USD) on the side it is priced against: a shallower one is too
 * cheap to move. Measured as virtual depth: for the curve (one constant product over its whole
 * range) that is exactly what moving its price costs; for a pool (in-range liquidity × √price) it
 * overstates liquidity packed in one tick around the price, which runs out a tick away. The cost
 * to move a pool by the band would need the initialized ticks within the band (tick bitmap and
 * liquidityNet reads, not indexed) and a floor chosen anew; until then the median's stability
 * rule (the price held 90 % of the window) is what bounds a mark moved through such a pool.
 */
export const MIN_MARK_DEPTH_USD = 10_000;
/** SPEC's pair band (MIN_OUT): 75 bps against USDG, 125 against anything else (ETH, the curve). */
export const markBandBps = (src: MarkSource, usdg: Address): number =>
  src.kind === "pool" && src.against.toLowerCase() === usdg.toLowerCase() ? 75 : 125;
/** How far apart two prices are, in bps of the second. */
export const offBps = (a: number, b: number): number => (Math.abs(a - b) / b) * 10_000;

/** A price that holds from `ts` until the next change. */
export type PriceStep = { ts: number; price: number };
/** A window's time-weighted median and the share of the window the price spent within the band of it. */
export type WindowPrice = { median: number; stableShare: number };

/**
 * Over [from, to], a price that is `first` at `from` and then takes each step's price from its
 * timestamp on (steps in chain order; ones at or before `from` set the starting price, ones at or
 * after `to` are ignored): its time-weighted median (the lowest price p such that the price was at
 * or below p for at least half the window) and the share of the window spent within `bandBps` of it.
 */
export function windowPrice(first: number, steps: PriceStep[], from: number, to: number, bandBps: number): WindowPrice {
  if (!(to > from)) return { median: first, stableShare: 1 };
  const held: { price: number; s: number }[] = [];
  let [price, at] = [first, from];
  for (const c of steps) {
    if (c.ts <= from) {
      price = c.price;
      continue;
    }
    if (c.ts >= to) break;
    held.push({ price, s: c.ts - at });
    [price, at] = [c.price, c.ts];
  }
  held.push({ price, s: to - at });
  const total = to - from;
  const sorted = held.filter((h) => h.s > 0).sort((a, b) => a.price - b.price);
  let acc = 0;
  const median = sorted.find((h) => (acc += h.s) * 2 >= total)!.price;
  const inBand = held.reduce((sum, h) => sum + (offBps(h.price, median) <= bandBps ? h.s : 0), 0);
  return { median, stableShare: inBand / total };
}

/**
 * Why no mark may be signed from a window now (null: it may): the price left the band of its
 * median for more than (1 - MARK_STABLE_SHARE) of the window, or the spot sits outside the band.
 * The words follow "no mark for X: ".
 */
export function markUnsettled(w: WindowPrice, spot: number, bandBps: number): string | null {
  const minutes = MARK_WINDOW_S / 60;
  if (!(w.stableShare >= MARK_STABLE_SHARE))
    return (
      `its price held within ${bandBps} bps of its ${minutes}-minute median only ` +
      `${Math.round(w.stableShare * 100)} % of the window (${MARK_STABLE_SHARE * 100} % needed)`
    );
  const off = offBps(spot, w.median);
  if (!(off <= bandBps))
    return `its spot is ${Math.round(off)} bps from its ${minutes}-minute median (band ${bandBps} bps)`;
  return null;
}

/** A curve's reserves just before a trade, from the trade's own event (after-state minus what it moved). */
export function curveBefore(t: {
  isBuy: boolean;
  ethAmount: bigint;
  tokenAmount: bigint;
  fee: bigint;
  virtualEth: bigint;
  virtualToken: bigint;
}): { virtualEth: bigint; virtualToken: bigint } {
  return t.isBuy
    ? { virtualEth: t.virtualEth - (t.ethAmount - t.fee), virtualToken: t.virtualToken + t.tokenAmount }
    : { virtualEth: t.virtualEth + t.ethAmount + t.fee, virtualToken: t.virtualToken - t.tokenAmount };
}
/** ETH (whole) per whole token at the curve's virtual reserves. */
export const curvePrice = (virtualEth: bigint, virtualToken: bigint, decimals: number): number =>
  Number(virtualEth) / 1e18 / (Number(virtualToken) / 10 ** decimals);

/**
 * A source read: spot and the window's median in `against` units (USDG, or ETH) per whole token,
 * the window's stability at the band asked, the steps it was computed from, and the source's depth
 * on its `against` side (whole units).
 */
export type SourceRead = WindowPrice & {
  spot: number;
  depthAgainst: number;
  against: Address;
  steps: { first: number; steps: PriceStep[]; from: number; to: number };
};

const extsloadAbi = parseAbi(["function extsload(bytes32 slot) view returns (bytes32)"]);
/** v4 StateLibrary: pools mapping at slot 6; liquidity 3 slots after a pool's slot0. */
const POOLS_SLOT = 6n;
const LIQUIDITY_OFFSET = 3n;

type PinnedSources = { poolManager: Address; launchpad: Address; againstDecimals: (a: Address) => number | null };
type MarkToken = { address: Address; decimals: number };

/**
 * What a source read shares: the chain, the token, the pinned contracts, the window's blocks and
 * the result's shape.
 */
type SourceWindow = {
  chain: PublicClient;
  token: MarkToken;
  pinned: PinnedSources;
  headNumber: bigint;
  /** The last block at or before the window's start. */
  start: bigint;
  timeOf: (n: bigint) => Promise<number>;
  read: (first: number, steps: PriceStep[], spot: number, depthAgainst: number, against: Address) => SourceRead;
};

/** readMarkSource on the launchpad curve: its Trade events since the window's start, in ETH per token. */
async function readCurveSource(w: SourceWindow, src: Extract<MarkSource, { kind: "curve" }>) {
  const { chain, token, pinned } = w;
  if (src.launchpad.toLowerCase() !== pinned.launchpad.toLowerCase()) return null;
  const [curve, logs] = await Promise.all([
    chain.readContract({
      address: pinned.launchpad,
      abi: launchpadAbi,
      functionName: "curves",
      args: [token.address],
      blockNumber: w.headNumber,
    }),
    chain.getLogs({
      address: pinned.launchpad,
      event: launchpadAbi.find((x) => x.type === "event" && x.name === "Trade")! as never,
      args: { token: token.address } as never,
      fromBlock: w.start + 1n,
      toBlock: w.headNumber,
    }),
  ]);
  const [, , graduated, , virtualEth, virtualToken] = curve;
  if (graduated || virtualToken === 0n) return null;
  const trades = logs as unknown as {
    blockNumber: bigint;
    args: {
      isBuy: boolean;
      ethAmount: bigint;
      tokenAmount: bigint;
      fee: bigint;
      virtualEth: bigint;
      virtualToken: bigint;
    };
  }[];
  const first = trades.length ? curveBefore(trades[0]!.args) : { virtualEth, virtualToken };
  const changes = await Promise.all(
    trades.map(async (t) => ({
      ts: await w.timeOf(t.blockNumber),
      price: curvePrice(t.args.virtualEth, t.args.virtualToken, token.decimals),
    })),
  );
  const spot = curvePrice(virtualEth, virtualToken, token.decimals);
  return w.read(
    curvePrice(first.virtualEth, first.virtualToken, token.decimals),
    changes,
    spot,
    Number(virtualEth) / 1e18,
    zeroAddress,
  );
}

/** A hookless pool's slot0 slot and liquidity reads over PoolManager's extsload, at a block. */
function poolSlots(chain: PublicClient, poolManager: Address, id: Hex) {
  const slot = hexToBigInt(
    keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [id, POOLS_SLOT])),
  );
  const load = (s: bigint, blockNumber: bigint) =>
    chain
      .readContract({
        address: poolManager,
        abi: extsloadAbi,
        functionName: "extsload",
        args: [`0x${s.toString(16).padStart(64, "0")}`],
        blockNumber,
      })
      .then(hexToBigInt);
  return { slot0: (at: bigint) => load(slot, at), liquidity: (at: bigint) => load(slot + LIQUIDITY_OFFSET, at) };
}

/** readMarkSource on a hookless v4 pool: slot0 then and now, its Swap events since, priced in `against`. */
async function readPoolSource(w: SourceWindow, src: Extract<MarkSource, { kind: "pool" }>) {
  const { chain, token, pinned } = w;
  const key = {
    currency0: getAddress(src.currency0),
    currency1: getAddress(src.currency1),
    fee: src.fee,
    tickSpacing: src.tick_spacing,
    hooks: getAddress(src.hooks),
  };
  const sides = [key.currency0.toLowerCase(), key.currency1.toLowerCase()];
  const againstDecimals = pinned.againstDecimals(getAddress(src.against));
  if (
    key.hooks !== zeroAddress ||
    againstDecimals === null ||
    !sides.includes(token.address.toLowerCase()) ||
    !sides.includes(src.against.toLowerCase())
  )
    return null;
  const id = poolId(key);
  const slots = poolSlots(chain, pinned.poolManager, id);
  const [slot0Then, slot0Now, liquidity, logs] = await Promise.all([
    slots.slot0(w.start),
    slots.slot0(w.headNumber),
    slots.liquidity(w.headNumber),
    chain.getLogs({
      address: pinned.poolManager,
      event: poolManagerAbi.find((x) => x.type === "event" && x.name === "Swap")! as never,
      args: { id } as never,
      fromBlock: w.start + 1n,
      toBlock: w.headNumber,
    }),
  ]);
  const sqrtOf = (slot0: bigint) => slot0 & ((1n << 160n) - 1n);
  if (sqrtOf(slot0Then) === 0n || sqrtOf(slot0Now) === 0n) return null;
  const tokenIs0 = sides[0] === token.address.toLowerCase();
  const priceOf = (sqrt: bigint) => {
    const p01 = priceFromX96(
      priceX96FromSqrt(sqrt),
      tokenIs0 ? token.decimals : againstDecimals,
      tokenIs0 ? againstDecimals : token.decimals,
    );
    return tokenIs0 ? p01 : 1 / p01;
  };
  const swaps = logs as unknown as { blockNumber: bigint; args: { sqrtPriceX96: bigint } }[];
  const changes = await Promise.all(
    swaps.map(async (s) => ({ ts: await w.timeOf(s.blockNumber), price: priceOf(s.args.sqrtPriceX96) })),
  );
  // Virtual reserves of the `against` side: L·sqrtP (currency1) or L/sqrtP (currency0), in atoms.
  const sqrtP = Number(sqrtOf(slot0Now)) / 2 ** 96;
  const againstAtoms = tokenIs0 ? Number(liquidity) * sqrtP : Number(liquidity) / sqrtP;
  return w.read(
    priceOf(sqrtOf(slot0Then)),
    changes,
    priceOf(sqrtOf(slot0Now)),
    againstAtoms / 10 ** againstDecimals,
    getAddress(src.against),
  );
}

/**
 * The median and stability (windowPrice at `bandBps`) over [to - window, to] (to = the head's
 * time) and the spot of a mark's source, read on the chain alone: the state at the last block at
 * or before the window's start, then every price change logged since (v4 Swap events; the curve's
 * Trade events), each at its block's time.
 * null when the chain is younger than the window, the source is unknown or not pinned, or it
 * has no price (an uninitialized pool, a graduated curve).
 */
export async function readMarkSource(
  chain: PublicClient,
  src: MarkSource,
  token: MarkToken,
  pinned: PinnedSources,
  bandBps: number,
  window = MARK_WINDOW_S,
): Promise<SourceRead | null> {
  const head = await chain.getBlock();
  const to = Number(head.timestamp);
  const start = await lastBlockAtOrBefore(chain, to - window, head.number, to);
  if (start === null) return null;
  const w: SourceWindow = {
    chain,
    token,
    pinned,
    headNumber: head.number,
    start,
    timeOf: blockTimes(chain),
    read: (first, steps, spot, depthAgainst, against) => ({
      ...windowPrice(first, steps, to - window, to, bandBps),
      spot,
      depthAgainst,
      against,
      steps: { first, steps, from: to - window, to },
    }),
  };
  return src.kind === "curve" ? readCurveSource(w, src) : readPoolSource(w, src);
}

/**
 * The source's spot at the chain's head, in `against` units per whole token: the price a grant
 * compares with its window's median. Read on the chain, because the indexer may not have seen
 * the block that just moved it. null as readMarkSource answers null.
 */
export async function readSpot(
  chain: PublicClient,
  src: MarkSource,
  token: { address: Address; decimals: number },
  pinned: { poolManager: Address; launchpad: Address; againstDecimals: (a: Address) => number | null },
): Promise<number | null> {
  if (src.kind === "curve") {
    if (src.launchpad.toLowerCase() !== pinned.launchpad.toLowerCase()) return null;
    const [, , graduated, , virtualEth, virtualToken] = await chain.readContract({
      address: pinned.launchpad,
      abi: launchpadAbi,
      functionName: "curves",
      args: [token.address],
    });
    return graduated || virtualToken === 0n ? null : curvePrice(virtualEth, virtualToken, token.decimals);
  }
  const tokenIs0 = src.currency0.toLowerCase() === token.address.toLowerCase();
  const againstDecimals = pinned.againstDecimals(getAddress(src.against));
  if (src.hooks !== zeroAddress || againstDecimals === null) return null;
  const id = poolId({
    currency0: getAddress(src.currency0),
    currency1: getAddress(src.currency1),
    fee: src.fee,
    tickSpacing: src.tick_spacing,
    hooks: getAddress(src.hooks),
  });
  const slot = hexToBigInt(
    keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [id, POOLS_SLOT])),
  );
  const slot0 = hexToBigInt(
    await chain.readContract({
      address: pinned.poolManager,
      abi: extsloadAbi,
      functionName: "extsload",
      args: [`0x${slot.toString(16).padStart(64, "0")}`],
    }),
  );
  const sqrt = slot0 & ((1n << 160n) - 1n);
  if (sqrt === 0n) return null;
  const p01 = priceFromX96(
    priceX96FromSqrt(sqrt),
    tokenIs0 ? token.decimals : againstDecimals,
    tokenIs0 ? againstDecimals : token.decimals,
  );
  return tokenIs0 ? p01 : 1 / p01;
}

/** Block timestamps, one read per block. */
function blockTimes(chain: PublicClient) {
  const seen = new Map<bigint, Promise<number>>();
  return (n: bigint) => {
    let p = seen.get(n);
    if (!p) seen.set(n, (p = chain.getBlock({ blockNumber: n }).then((b) => Number(b.timestamp))));
    return p;
  };
}

/**
 * The last block whose time is at or before `ts`, or null when the chain starts after it: an
 * interpolation search (a bisection step whenever interpolation did not halve the range).
 */
export async function lastBlockAtOrBefore(
  chain: PublicClient,
  ts: number,
  headNumber: bigint,
  headTs: number,
): Promise<bigint | null> {
  if (headTs <= ts) return headNumber;
  const timeOf = (n: bigint) => chain.getBlock({ blockNumber: n }).then((b) => Number(b.timestamp));
  let [lo, loTs] = [0n, await timeOf(0n)];
  if (loTs > ts) return null;
  let [hi, hiTs] = [headNumber, headTs];
  let halved = true;
  while (hi - lo > 1n) {
    const span = hi - lo;
    let mid = lo + BigInt(Math.floor((Number(span) * (ts - loTs)) / Math.max(1, hiTs - loTs)));
    if (!halved || mid <= lo || mid >= hi) mid = lo + span / 2n;
    const at = await timeOf(mid);
    if (at <= ts) [lo, loTs] = [mid, at];
    else [hi, hiTs] = [mid, at];
    halved = (hi - lo) * 2n <= span;
  }
  return lo;
}
