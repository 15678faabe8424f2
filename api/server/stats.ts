import { parseUnits, zeroAddress, type Address } from "viem";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import type { Config, TokenEntry } from "../../lib/config.js";
import { MAJOR_TIERS, OTHER_BPS, SHIELD_ADD_BPS } from "../../lib/fees.js";
import { priceFromX96 } from "../../lib/twap.js";
import { markStale } from "../market/index.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Tokens } from "../tokens/index.js";
import { candidateRoutes } from "../trading/index.js";
import type { Common } from "../ports/common.js";

export const STATS_TTL_MS = 5_000;
/** How often (real time) the loop looks whether the last answer is STATS_TTL_MS old on the injected clock. */
export const STATS_POLL_MS = 500;
export const REF_SIZE_USD = 1_000;

/** The hosted agents' AI credit pool today, as stats shows it. */
export type AiPoolDay = { pool_usd: number; left_usd: number; owners_funded: number; agents_funded: number };

type Side = { venue: string; fee: number; price: number; vs_mark_bps: number | null } | null;
type PoolEntry = Config["pools"][number];

export type StatsDeps = Pick<Common, "config" | "chain" | "clock"> & {
  indexed: SqlIndexedReads;
  tokens: Pick<Tokens, "counts">;
  aiPool?: () => Promise<AiPoolDay | null>;
  pollMs?: number;
  logger?: { warn(o: object, m: string): void };
};

/** The loop's state: the last answer, the build under way, the timer, and whether anyone asked since. */
type StatsLoop = {
  deps: StatsDeps;
  pollMs: number;
  last: { at: number; body: Record<string, unknown> } | null;
  building: Promise<void> | null;
  timer: ReturnType<typeof setTimeout> | null;
  running: boolean;
  /** Asked for since the last build began: an instance nobody reads does no work (nor counts the token registry). */
  wanted: boolean;
  firstBuilt: () => void;
  first: Promise<void>;
};

const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T | null; ms: number | null }> => {
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, ms: Math.round((performance.now() - t0) * 10) / 10 };
  } catch {
    return { value: null, ms: null };
  }
};

/** Pool currency of an asset: WETH trades through the native ETH pools (the router wraps). */
const currencyOf = (t: TokenEntry): Address => (t.kind === "wrapped" ? zeroAddress : (t.address as Address));

/** The configured pool of an asset against USDG, if any. */
function poolFor(config: Config, asset: TokenEntry): PoolEntry | undefined {
  const a = currencyOf(asset).toLowerCase();
  const usdg = config.tokens.USDG!.address.toLowerCase();
  return config.pools.find(
    (p) =>
      (p.currency0.toLowerCase() === a && p.currency1.toLowerCase() === usdg) ||
      (p.currency1.toLowerCase() === a && p.currency0.toLowerCase() === usdg),
  );
}

/**
 * The routes the quoter can use among the core assets: for each pair of distinct pool
 * currencies, trading's own candidate routes (hookless pools holding both, and two hops through
 * USDG or ETH) over the indexed pools. Per currency: how many of them touch it.
 */
async function routeCounts(deps: StatsDeps, currencies: Address[]): Promise<Map<string, number>> {
  const usdg = deps.config.tokens.USDG!;
  const core = new Set(currencies.map((c) => c.toLowerCase()));
  const pools = (await deps.indexed.pools()).filter(
    (p) => core.has(p.currency0.toLowerCase()) && core.has(p.currency1.toLowerCase()),
  );
  const counts = new Map<string, number>([["*", 0]]);
  const bump = (k: string, n: number) => counts.set(k, (counts.get(k) ?? 0) + n);
  const list = [...core] as Address[];
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const n = candidateRoutes({
        pools,
        currencyIn: list[i]!,
        currencyOut: list[j]!,
        connectors: [usdg.address as Address, zeroAddress],
        venues: ["v4"],
        curveToken: null,
      }).length;
      bump("*", n);
      bump(list[i]!, n);
      bump(list[j]!, n);
    }
  }
  return counts;
}

/** The buy and sell sides of an asset at REF_SIZE_USD through its USDG pool, each against the mark. */
async function refQuotes(
  deps: StatsDeps,
  asset: TokenEntry,
  pool: PoolEntry,
  assetIs0: boolean,
  mark: number,
): Promise<{ buy: Side; sell: Side }> {
  const { config, chain } = deps;
  const usdg = config.tokens.USDG!;
  const quote = (zeroForOne: boolean, exactAmount: bigint) =>
    quoteExactInputSingle(chain, config.contracts.v4Quoter, pool, zeroForOne, exactAmount);
  const vsMark = (price: number) => Math.round(((price - mark) / mark) * 10_000);
  const venue = `uniswap-v4:${pool.fee}`;
  const fee = pool.fee / 100; // pips -> bps
  let buy: Side = null;
  let sell: Side = null;
  const usdIn = parseUnits(String(REF_SIZE_USD), usdg.decimals);
  const got = await quote(!assetIs0, usdIn).catch(() => null);
  if (got) {
    const price = REF_SIZE_USD / (Number(got) / 10 ** asset.decimals);
    buy = { venue, fee, price, vs_mark_bps: vsMark(price) };
  }
  const assetIn = parseUnits((REF_SIZE_USD / mark).toFixed(asset.decimals), asset.decimals);
  const out = await quote(assetIs0, assetIn).catch(() => null);
  if (out) {
    const price = Number(out) / 10 ** usdg.decimals / (Number(assetIn) / 10 ** asset.decimals);
    sell = { venue, fee, price, vs_mark_bps: vsMark(price) };
  }
  return { buy, sell };
}

/** One asset's row: its mark (oracle, else the pool's mid), the reference quotes, staleness and route count. */
async function assetRow(deps: StatsDeps, asset: TokenEntry, nowS: number, routes: Map<string, number> | null) {
  const { config, indexed } = deps;
  const usdg = config.tokens.USDG!;
  const pool = poolFor(config, asset);
  const markRow = asset.feed ? await indexed.latestMark(asset.feed as Address, nowS).catch(() => null) : null;
  const state = pool ? await indexed.pool(pool.id).catch(() => null) : null;
  const assetIs0 = pool ? pool.currency0.toLowerCase() === currencyOf(asset).toLowerCase() : true;
  let mid: number | null = null;
  if (state) {
    const p = priceFromX96(
      state.priceX96,
      assetIs0 ? asset.decimals : usdg.decimals,
      assetIs0 ? usdg.decimals : asset.decimals,
    );
    mid = assetIs0 ? p : 1 / p;
  }
  const mark = markRow ? Number(markRow.answer) / 1e8 : mid;
  const { buy, sell } = pool && mark ? await refQuotes(deps, asset, pool, assetIs0, mark) : { buy: null, sell: null };
  return {
    symbol: asset.symbol,
    kind: asset.kind === "stock" ? ("stock" as const) : ("crypto" as const),
    mark,
    mark_source: markRow ? ("oracle" as const) : mid !== null ? ("pool-mid" as const) : null,
    mid,
    spread_bps: buy && sell && mid ? Math.round(((buy.price - sell.price) / mid) * 10_000) : null,
    // Market's one stale-mark rule (the feed's heartbeat; stock feeds count session time only).
    stale: markRow
      ? markStale({ updatedAt: markRow.updatedAt, now: nowS, stock: asset.kind === "stock" })
      : mid === null,
    routes: routes?.get(currencyOf(asset).toLowerCase()) ?? null,
    buy,
    sell,
  };
}

/** The sequencer answers eth_chainId (within 2 s). */
const pingSequencer = (config: Config) =>
  fetch(config.sequencerUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    signal: AbortSignal.timeout(2000),
  }).then((r) => r.json());

/** One fresh answer: the chain head, the indexer's head, every core asset's row, latencies and the fee schedule. */
async function buildStats(deps: StatsDeps) {
  const { config, chain, indexed } = deps;
  const at = deps.clock();
  const nowS = Math.floor(at / 1000);
  // Every core asset, USDG and WETH included (SPEC stats "over core assets").
  const assets = Object.values(config.tokens).filter((t) => !t.native);
  const eth = config.tokens.ETH!;
  const routes = await routeCounts(deps, [eth, ...assets].map(currencyOf)).catch(() => null);
  const [block, head, sequencer] = await Promise.all([
    timed(() => chain.getBlock()),
    indexed.head().catch(() => null),
    timed(() => pingSequencer(config)),
  ]);
  const quotes = await timed(() => Promise.all([eth, ...assets].map((a) => assetRow(deps, a, nowS, routes))));
  const status: "ok" | "degraded" = block.value && head ? "ok" : "degraded";
  const body = {
    status,
    generated_at: nowS,
    cached_s: 0,
    block: block.value
      ? { number: Number(block.value.number), age_s: Math.max(0, nowS - Number(block.value.timestamp)) }
      : null,
    prices: head ? { block: head.block, age_s: Math.max(0, nowS - head.timestamp), ref_size_usd: REF_SIZE_USD } : null,
    assets: quotes.value,
    routes: routes?.get("*") ?? null,
    latency_ms: { ref_quotes: quotes.ms, rpc: block.ms, sequencer: sequencer.ms },
    relay: config.submitEnabled && sequencer.value !== null,
    fee_bps: {
      major_max: MAJOR_TIERS[0]!.bps,
      major_min: MAJOR_TIERS.at(-1)!.bps,
      other: OTHER_BPS,
      shield_add: SHIELD_ADD_BPS,
    },
    // The registry's own count (shared with GET /tokens/stats); null while it has none to give.
    tokens: await deps.tokens.counts(1_000).then(
      (c) => (c ? { tradable: c.body.tradable } : null),
      () => null,
    ),
    // The hosted agents' AI credit pool today; null when it is off or unreadable.
    ai_pool: deps.aiPool ? await deps.aiPool().catch(() => null) : null,
  };
  return { at, body };
}

/** GET stats' answer as built (cached_s set by the reader). */
export type StatsBody = Awaited<ReturnType<typeof buildStats>>["body"];

/** One build at a time: the loop's (or refresh, or a first reader where no loop runs). */
function rebuild(s: StatsLoop): Promise<void> {
  s.building ??= buildStats(s.deps)
    .then((answer) => {
      s.last = answer;
      s.firstBuilt();
    })
    .catch((err) => s.deps.logger?.warn({ err }, "stats: build failed; the last answer stays"))
    .finally(() => (s.building = null));
  return s.building;
}

/** One look of the loop: a build when wanted and the answer is STATS_TTL_MS old, then the next look. */
async function pass(s: StatsLoop) {
  if (s.wanted && (!s.last || s.deps.clock() - s.last.at >= STATS_TTL_MS)) {
    s.wanted = false;
    await rebuild(s);
  }
  // Before the first answer a reader is waiting: look again soon.
  if (s.running) s.timer = setTimeout(() => void pass(s), s.last ? s.pollMs : Math.min(s.pollMs, 100));
}

/** A reader: the last answer with its age; before the first answer, waits for that one build. */
async function readStats(s: StatsLoop): Promise<Record<string, unknown>> {
  s.wanted = true;
  if (!s.last) {
    // Before the loop's first answer (or with no loop started): wait for that one build.
    if (!s.running && !s.building) void rebuild(s);
    await s.first;
  }
  const { at, body } = s.last!;
  return { ...body, cached_s: Math.max(0, Math.floor((s.deps.clock() - at) / 1000)) };
}

/**
 * GET /stats: one answer shared by every caller. Slow work runs once, in the background: one loop
 * per instance rebuilds it once the last answer is STATS_TTL_MS old (on the injected clock; looked
 * at every `pollMs` of real time) and someone read it since the last build began; readers get the
 * last answer (cached_s its age) and never start a recompute; a reader before the first answer
 * waits for the first build only. After a quiet spell the first reader gets the old answer (its
 * cached_s says how old) and the loop rebuilds within pollMs. `stop()` ends the loop. Any part that
 * cannot be read is null; the answer is still 200.
 */
export function createStats(deps: StatsDeps) {
  let firstBuilt!: () => void;
  const first = new Promise<void>((r) => (firstBuilt = r));
  const s: StatsLoop = {
    deps,
    pollMs: deps.pollMs ?? STATS_POLL_MS,
    last: null,
    building: null,
    timer: null,
    running: false,
    wanted: false,
    firstBuilt,
    first,
  };
  return {
    get: (): Promise<Record<string, unknown>> => readStats(s),
    /**
     * A build now, after any under way (for tests and operators that changed what stats reads;
     * never a reader's path).
     */
    async refresh(): Promise<void> {
      await s.building;
      await rebuild(s);
    },
    /**
     * Starts the loop: a build whenever the answer is wanted and STATS_TTL_MS old (the first as
     * soon as it is wanted).
     */
    start() {
      if (s.running) return;
      s.running = true;
      void pass(s);
    },
    async stop() {
      s.running = false;
      if (s.timer) clearTimeout(s.timer);
      s.timer = null;
      await s.building;
    },
  };
}
export type Stats = ReturnType<typeof createStats>;
