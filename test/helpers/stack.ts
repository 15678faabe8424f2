import { RateLimiter } from "../../api/rateLimit.js";
import { httpShield } from "../../api/shield.js";
import { startShieldStandIn } from "../../devnet/shieldStandIn.js";
import { agentOf } from "./agent.js";
import { freshStore, serveApi, type StoreKind } from "./api.js";
import { startDevnet, type Devnet } from "./devnet.js";
import { startIndexer } from "./indexer.js";

/**
 * The whole service for one test file: a private devnet, the real indexer on PostgreSQL, a fresh
 * app store, the API on a real port (rate limits off unless given a limiter), optionally the Shield
 * stand-in. `before` runs on the chain before the indexer starts.
 */
export async function startStack(opts: { store?: StoreKind; shield?: boolean; clock?: () => number; limiter?: RateLimiter; before?: (dn: Devnet) => Promise<void> } = {}) {
  const clock = opts.clock ?? Date.now;
  const dn = await startDevnet();
  if (opts.before) await opts.before(dn);
  const ix = await startIndexer({ anvilPort: dn.anvil.port, backend: "postgres" });
  await ix.waitFor(await dn.pub.getBlockNumber());
  const store = await freshStore(opts.store ?? "pglite");
  const shield = opts.shield ? await startShieldStandIn() : null;
  const api = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, clock, indexed: ix.liveReads().reads, shield: shield ? httpShield(shield.url) : null, limiter: opts.limiter ?? new RateLimiter(clock, 10_000, false) });
  return {
    dn,
    ix,
    store,
    api,
    shield,
    agent: agentOf(api, dn),
    async stop() {
      await api.close();
      await shield?.close();
      await store.drop();
      await ix.cleanup();
      await dn.stop();
    },
  };
}

/** Moves the chain past the demo launch token's snipe-tax window, however fresh the snapshot is. */
export async function pastLaunchWindow(dn: Devnet) {
  await dn.test.increaseTime({ seconds: 120 });
  await dn.test.mine({ blocks: 1 });
}

export type Stack = Awaited<ReturnType<typeof startStack>>;
