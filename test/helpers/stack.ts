import { RateLimiter } from "../../api/http/rateLimit.js";
import type { AppDeps } from "../../api/deps.js";
import type { Config } from "../../lib/config.js";
import { httpShield } from "../../api/ports/shield.js";
import type { SqlIndexedReads } from "../../api/ports/indexed.js";
import { startShieldStandIn } from "../../devnet/shieldStandIn.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import type { Address } from "viem";
import { agentOf } from "./agent.js";
import { freshStore, serveApi, type Api, type StoreKind } from "./api.js";
import { startDevnet, type Devnet } from "./devnet.js";
import { startIndexer, type Indexer } from "./indexer.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";

type ServeOpts = {
  store?: StoreKind;
  shield?: boolean;
  clock?: () => number;
  limiter?: RateLimiter;
  config?: Partial<Config>;
  league?: AppDeps["league"];
  hostedScheduler?: AppDeps["hostedScheduler"];
  screen?: AppDeps["screen"];
};

/** A private devnet with the real indexer on PostgreSQL caught up to it. `before` runs on the chain first. */
export async function startIndexedDevnet(opts: { before?: (dn: Devnet) => Promise<void> } = {}) {
  const dn = await startDevnet();
  if (opts.before) await opts.before(dn);
  const ix = await startIndexer({ anvilPort: dn.anvil.port, backend: "postgres" });
  await ix.waitFor(await dn.pub.getBlockNumber());
  return {
    dn,
    ix,
    async stop() {
      await ix.cleanup();
      await dn.stop();
    },
  };
}

/** A fresh app store and the API on a real port over `dn` (rate limits off unless given a limiter). */
async function serve(dn: Devnet, indexed: SqlIndexedReads | undefined, opts: ServeOpts) {
  const clock = opts.clock ?? Date.now;
  const store = await freshStore(opts.store);
  const shield = opts.shield ? await startShieldStandIn() : null;
  const api = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: store.db,
    clock,
    indexed,
    shield: shield ? httpShield(shield.url) : null,
    limiter: opts.limiter ?? new RateLimiter(clock, 10_000, false),
    config: opts.config,
    league: opts.league,
    hostedScheduler: opts.hostedScheduler,
    screen: opts.screen,
  });
  return {
    store,
    api,
    shield,
    agent: agentOf(api, dn),
    async stop() {
      await api.close();
      await shield?.close();
      await store.drop();
    },
  };
}

/** The API over a private devnet without an indexer (indexed reads see nothing). */
export async function startServedDevnet(opts: ServeOpts = {}) {
  const dn = await startDevnet();
  const s = await serve(dn, undefined, opts);
  return { dn, ...s, stop: async () => (await s.stop(), await dn.stop()) };
}

/**
 * The whole service for one test file: a private devnet, the real indexer on PostgreSQL, a fresh
 * app store, the API on a real port, optionally the Shield stand-in.
 */
export async function startStack(opts: ServeOpts & { before?: (dn: Devnet) => Promise<void> } = {}) {
  const chain = await startIndexedDevnet(opts);
  const s = await serve(chain.dn, chain.ix.liveReads().reads, opts);
  return { dn: chain.dn, ix: chain.ix, ...s, stop: async () => (await s.stop(), await chain.stop()) };
}

/**
 * Moves the chain past the demo launch token's snipe-tax window, however fresh the snapshot is,
 * and posts every oracle's answer again so marks are fresh (not STALE_MARK), however old it is.
 */
export async function freshenMarket(dn: Devnet) {
  await dn.test.increaseTime({ seconds: 120 });
  await dn.test.mine({ blocks: 1 });
  const feeds = [...new Set(Object.values(dn.universe.tokens).flatMap((t) => (t.feed ? [t.feed] : [])))];
  for (const feed of feeds) {
    const [, answer] = await dn.pub.readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" });
    await postAnswer(dn, feed, answer);
  }
}

/** A new round of the fixture oracle `feed` answering `answer` (its own decimals), mined. */
export async function postAnswer(dn: Devnet, feed: Address, answer: bigint) {
  return dn.mined(
    await dn
      .walletFor(dn.deployer)
      .writeContract({ address: feed, abi: priceFeedAbi, functionName: "setAnswer", args: [answer] }),
  );
}

/**
 * Until the service's stats mark `symbol` at `usd` (within 0.1 %): the indexer has the feed's round and the marks'
 * caches (stats' 5 s) have turned. A test that moves an oracle and puts it back waits here before trading again.
 */
export async function untilMarked(api: Api, symbol: string, usd: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await api.call("GET", "/api/v1/stats");
    const mark = s.json?.assets?.find((x: { symbol: string }) => x.symbol === symbol)?.mark;
    if (typeof mark === "number" && Math.abs(mark - usd) < usd * 0.001) return;
    if (Date.now() > deadline) throw new Error(`the service never marked ${symbol} at ${usd} (last: ${mark})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export type Stack = Awaited<ReturnType<typeof startStack>>;
export type Served = Awaited<ReturnType<typeof startServedDevnet>>;

/**
 * An hour of chain history past the pools' creation (so a 30-minute TWAP window has a start),
 * then fresh oracle answers: a `before` for stacks that read the partner token's TWAP.
 */
export async function withTwapHistory(dn: Devnet) {
  await dn.test.increaseTime({ seconds: 3_600 });
  await dn.test.mine({ blocks: 1 });
  await freshenMarket(dn);
}

/**
 * Mines until the indexer's finalized block is at or past `ts`: what a season's decision waits for
 * (api/league/settle.ts). Ponder moves its finalized block in steps (once the head is twice the finality depth past
 * it, to the head less that depth: node_modules/ponder/dist/esm/sync-realtime/index.js), so FINALITY_BLOCKS at a
 * time until it has.
 */
export async function untilFinal(s: { dn: Devnet; ix: Indexer }, ts: number, timeoutMs = 60_000): Promise<void> {
  const reads = s.ix.liveReads().reads;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await s.dn.test.mine({ blocks: FINALITY_BLOCKS });
    await s.ix.waitFor(await s.dn.pub.getBlockNumber());
    // Ponder writes its finalized checkpoint just after the block that moves it.
    for (const stepEnds = Date.now() + 2_000; Date.now() < stepEnds; ) {
      const final = await reads.finalized();
      if (final && final.timestamp >= ts) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (Date.now() > deadline) throw new Error(`the indexer's finalized block never passed ${ts}`);
  }
}
