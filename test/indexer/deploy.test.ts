import { afterAll, describe, expect, it } from "vitest";
import { parseEther } from "viem";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { startIndexer, type Indexer } from "../helpers/indexer.js";
import { RateLimiter } from "../../api/http/rateLimit.js";

/**
 * A deploy: a changed build re-indexes into a schema of its own while the running one keeps
 * serving; Ponder publishes the new build's tables into the shared views schema only when it is
 * ready (one transaction), so API processes reading the views never see a half-built index.
 */
let dn: Devnet | undefined;
let old: Indexer | undefined;
let next: Indexer | undefined;
let api: Api | undefined;
let store: Awaited<ReturnType<typeof freshStore>> | undefined;
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await next?.cleanup();
  await old?.cleanup();
  await dn?.stop();
});

describe("a deploy while the API serves", () => {
  it("answers from the previous build's views during the new build's re-index, then from the new build", async () => {
    dn = await startDevnet();
    old = await startIndexer({ anvilPort: dn.anvil.port, backend: "postgres" });
    await old.waitFor(await dn.pub.getBlockNumber());
    const { reads, query } = old.liveReads();
    store = await freshStore();
    api = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: reads,
      limiter: new RateLimiter(Date.now, 1000, false),
    });
    const key = await agentOf(api, dn).signIn(await dn.freshWallet(parseEther("1")));
    const quote = () =>
      api!.call(
        "POST",
        "/api/v1/live/quote",
        { token_in: "ETH", token_out: "USDG", notional_usd: 100 },
        { authorization: `Bearer ${key}` },
      );
    // pg_views reads a view's definition outside the snapshot that found it; a publish replacing the
    // view in between fails this probe ("could not open relation with OID"), not the API: ask again.
    const servedBy = async (): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return String(
            (
              await query("SELECT definition FROM pg_views WHERE schemaname = $1 AND viewname = 'pool'", [
                old!.viewsSchema,
              ])
            )[0]?.definition ?? "",
          );
        } catch (err) {
          if (attempt >= 5 || !/could not open relation/.test(String(err))) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    // A view reads `<schema>.pool`: matched as a whole name (the old build's schema is the template's short "ix").
    const fromSchema = (definition: string, schema: string) => new RegExp(`\\b"?${schema}"?\\.`).test(definition);
    expect(fromSchema(await servedBy(), old.schema)).toBe(true);

    // Ponder publishes a build's views when its backfill ends, which stops at the finality depth
    // (30 blocks on chain 4663) below the head; realtime catches up after. Bury the pools' last
    // change under that depth so the published build already holds every pool, as it would on a
    // chain that has moved on since the pools were made.
    await dn.test.mine({ blocks: 31 });
    await old.waitFor(await dn.pub.getBlockNumber());
    next = await startIndexer({
      anvilPort: dn.anvil.port,
      backend: "postgres",
      deployInto: { databaseUrl: old.databaseUrl!, viewsSchema: old.viewsSchema },
    });
    let duringReindex = 0;
    const deadline = Date.now() + 120_000;
    while (
      !(await fetch(`${next.opsBase}/ready`)
        .then((r) => r.ok)
        .catch(() => false))
    ) {
      if (Date.now() > deadline) throw new Error(`the new build never became ready:\n${next.log()}`);
      const q = await quote();
      expect(q.status, JSON.stringify(q.json)).toBe(200);
      expect(q.json.mid.source).toBe("pool-mid");
      if (fromSchema(await servedBy(), old.schema)) duringReindex++;
      await new Promise((r) => setTimeout(r, 200));
    }
    // The API answered while the new build was still indexing, from the old build's tables.
    expect(duringReindex).toBeGreaterThan(0);
    expect(fromSchema(await servedBy(), next.schema)).toBe(true);
    // The old build can go; the API keeps answering from the new one, which follows the chain.
    await old.stop();
    await dn.test.mine({ blocks: 2 });
    await next.waitFor(await dn.pub.getBlockNumber());
    const after = await quote();
    expect(after.status, JSON.stringify(after.json)).toBe(200);
    const health = await api.call("GET", "/api/v1/health");
    expect(health.json.checks.indexer.block).toBe(Number(await dn.pub.getBlockNumber()));
  }, 240_000);
});
