import { parseUnits, zeroAddress, type Address, type PublicClient } from "viem";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import type { Config, TokenEntry } from "../../lib/config.js";
import { MAJOR_TIERS, OTHER_BPS, SHIELD_ADD_BPS } from "../../lib/fees.js";
import { priceFromX96 } from "../../lib/twap.js";
import { markStale } from "../market/index.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Tokens } from "../tokens/index.js";
import { candidateRoutes } from "../trading/index.js";

export const STATS_TTL_MS = 5_000;
/** How often (real time) the loop looks whether the last answer is STATS_TTL_MS old on the injected clock. */
export const STATS_POLL_MS = 500;
export const REF_SIZE_USD = 1_000;

type Side = { venue: string; fee: number; price: number; vs_mark_bps: number | null } | null;

const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T | null; ms: number | null }> => {
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, ms: Math.round((performance.now() - t0) * 10) / 10 };
  } catch {
    return { value: null, ms: null };
  }
};

/**
 * GET /stats: one answer shared by every caller. Slow work runs once, in the background: one loop
 * per instance rebuilds it once the last answer is STATS_TTL_MS old (on the injected clock; looked
 * at every `pollMs` of real time) and someone read it since the last build began; readers get the
 * last answer (cached_s its age) and never start a recompute; a reader before the first answer
 * waits for the first build only. After a quiet spell the first reader gets the old answer (its
 * cached_s says how old) and the loop rebuilds within pollMs. `stop()` ends the loop. Any part that cannot be read is null; the answer is still 200.
 */
export function createStats(deps: {
  config: Config;
  chain: PublicClient;
  indexed: SqlIndexedReads;
  tokens: Pick<Tokens, "counts">;
  clock: () => number;
  aiPool?: () => Promise<Record<string, number> | null>;
  pollMs?: number;
  logger?: { warn(o: object, m: string): void };
}) {
  const { config, chain, indexed } = deps;
  const usdg = config.tokens.USDG!;
  const pollMs = deps.pollMs ?? STATS_POLL_MS;
  let last: { at: number; body: Record<string, unknown> } | null = null;
  let building: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running = false;
  let firstBuilt!: () => void;
  const first = new Promise<void>((r) => (firstBuilt = r));

  /** One build at a time: the loop's (or refresh, or a first reader where no loop runs). */
  function rebuild(): Promise<void> {
    building ??= build()
      .then((answer) => {
        last = answer;
        firstBuilt();
      })
      .catch((err) => deps.logger?.warn({ err }, "stats: build failed; the last answer stays"))
      .finally(() => (building = null));
    return building;
  }

  // Asked for since the last build began: an instance nobody reads does no work (nor counts the token registry).
  let wanted = false;
  async function pass() {
    if (wanted && (!last || deps.clock() - last.at >= STATS_TTL_MS)) {
      wanted = false;
      await rebuild();
    }
    // Before the first answer a reader is waiting: look again soon.
    if (running) timer = setTimeout(() => void pass(), last ? pollMs : Math.min(pollMs, 100));
  }

  const poolFor = (asset: TokenEntry) => {
    const a = currencyOf(asset).toLowerCase();
    return config.pools.find(
      (p) =>
        (p.currency0.toLowerCase() === a && p.currency1.toLowerCase() === usdg.address.toLowerCase()) ||
        (p.currency1.toLowerCase() === a && p.currency0.toLowerCase() === usdg.address.toLowerCase()),
    );
  };

  const quote = (pool: NonNullable<ReturnType<typeof poolFor>>, zeroForOne: boolean, exactAmount: bigint) =>
    quoteExactInputSingle(chain, config.contracts.v4Quoter, pool, zeroForOne, exactAmount);

  /** Pool currency of an asset: WETH trades through the native ETH pools (the router wraps). */
  const currencyOf = (t: TokenEntry): Address => (t.kind === "wrapped" ? zeroAddress : (t.address as Address));

  /**
   * The routes the quoter can use among the core assets: for each pair of distinct pool
   * currencies, trading's own candidate routes (hookless pools holding both, and two hops through
   * USDG or ETH) over the indexed pools. Per currency: how many of them touch it.
   */
  async function routeCounts(currencies: Address[]): Promise<Map<string, number>> {
    const core = new Set(currencies.map((c) => c.toLowerCase()));
    const pools = (await indexed.pools()).filter(
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

  async function assetRow(asset: TokenEntry, nowS: number, routes: Map<string, number> | null) {
    const pool = poolFor(asset);
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
    const vsMark = (price: number) => (mark ? Math.round(((price - mark) / mark) * 10_000) : null);
    let buy: Side = null;
    let sell: Side = null;
    if (pool && mark) {
      const venue = `uniswap-v4:${pool.fee}`;
      const fee = pool.fee / 100; // pips -> bps
      const usdIn = parseUnits(String(REF_SIZE_USD), usdg.decimals);
      const got = await quote(pool, !assetIs0, usdIn).catch(() => null);
      if (got) {
        const price = REF_SIZE_USD / (Number(got) / 10 ** asset.decimals);
        buy = { venue, fee, price, vs_mark_bps: vsMark(price) };
      }
      const assetIn = parseUnits((REF_SIZE_USD / mark).toFixed(asset.decimals), asset.decimals);
      const out = await quote(pool, assetIs0, assetIn).catch(() => null);
      if (out) {
        const price = Number(out) / 10 ** usdg.decimals / (Number(assetIn) / 10 ** asset.decimals);
        sell = { venue, fee, price, vs_mark_bps: vsMark(price) };
      }
    }
    return {
      symbol: asset.symbol,
      kind: asset.kind === "stock" ? "stock" : "crypto",
      mark,
      mark_source: markRow ? "oracle" : mid !== null ? "pool-mid" : null,
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

  async function build() {
    const at = deps.clock();
    const nowS = Math.floor(at / 1000);
    // Every core asset, USDG and WETH included (SPEC stats "over core assets").
    const assets = Object.values(config.tokens).filter((t) => !t.native);
    const eth = config.tokens.ETH!;
    const routes = await routeCounts([eth, ...assets].map(currencyOf)).catch(() => null);
    const [block, head, sequencer] = await Promise.all([
      timed(() => chain.getBlock()),
      indexed.head().catch(() => null),
      timed(() =>
        fetch(config.sequencerUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
          signal: AbortSignal.timeout(2000),
        }).then((r) => r.json()),
      ),
    ]);
    const quotes = await timed(() => Promise.all([eth, ...assets].map((a) => assetRow(a, nowS, routes))));
    const rows = quotes.value;
    const body = {
      status: block.value && head ? "ok" : "degraded",
      generated_at: nowS,
      cached_s: 0,
      block: block.value
        ? { number: Number(block.value.number), age_s: Math.max(0, nowS - Number(block.value.timestamp)) }
        : null,
      prices: head
        ? { block: head.block, age_s: Math.max(0, nowS - head.timestamp), ref_size_usd: REF_SIZE_USD }
        : null,
      assets: rows,
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

  return {
    async get(): Promise<Record<string, unknown>> {
      wanted = true;
      if (!last) {
        // Before the loop's first answer (or with no loop started): wait for that one build.
        if (!running && !building) void rebuild();
        await first;
      }
      const { at, body } = last!;
      return { ...body, cached_s: Math.max(0, Math.floor((deps.clock() - at) / 1000)) };
    },
    /** A build now, after any under way (for tests and operators that changed what stats reads; never a reader's path). */
    async refresh(): Promise<void> {
      await building;
      await rebuild();
    },
    /** Starts the loop: a build whenever the answer is wanted and STATS_TTL_MS old (the first as soon as it is wanted). */
    start() {
      if (running) return;
      running = true;
      void pass();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await building;
    },
  };
}
export type Stats = ReturnType<typeof createStats>;
