import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlIndexedReads, type Query } from "../../api/ports/indexed.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { startIndexer, type Indexer } from "../helpers/indexer.js";

type Proxy = Awaited<ReturnType<typeof startRpcProxy>>;

/**
 * An indexer restarted on its own schema (Ponder's crash recovery: npm start's supervisor after a crash, or any
 * restart) reverts its rows to the safe checkpoint before it indexes again, and leaves its latest checkpoint where the
 * dead process stopped until its backfill ends. The API reads the indexer's head to decide a season, close a treasury
 * week and price quotes from the pool book: it must never read that latest over the reverted rows.
 *
 * The window is held open on the real Ponder: the run's template copy is such a restart (its schema `ix`), and the
 * chain is mined past the template so the backfill has logs to fetch, which the RPC proxy holds until the test has
 * looked.
 */
describe("an indexer in crash recovery", () => {
  let dn: Devnet;
  let proxy: Proxy;
  let ix: Indexer;
  let release: () => void = () => {};
  let query: Query;

  beforeAll(async () => {
    dn = await startDevnet();
    proxy = await startRpcProxy(dn.anvil.rpcUrl);
    // Past the template's head by more than the finality depth: the recovery's backfill must fetch logs.
    await dn.test.mine({ blocks: 40 });
    release = proxy.hold(["eth_getLogs"]);
    ix = await startIndexer({ anvilPort: proxy.port, backend: "postgres" });
    query = ix.liveReads().query;
  });
  afterAll(async () => {
    release();
    await ix?.cleanup();
    await proxy?.close();
    await dn?.stop();
  });

  /** Ponder's own record in the schema: is_ready, and the block numbers of its latest and safe checkpoints. */
  async function ponderState() {
    const [row] = await query(
      `SELECT (SELECT value->>'is_ready' FROM ix._ponder_meta WHERE key = 'app') AS ready,
        substr(latest_checkpoint, 27, 16)::int AS latest, substr(safe_checkpoint, 27, 16)::int AS safe
       FROM ix._ponder_checkpoint`,
    );
    return row as { ready: string | null; latest: number; safe: number } | undefined;
  }

  /**
   * Rows at or below `block` in each table of events (a row per log, never updated; the others keep one per key), read
   * through the views as the API reads them.
   */
  async function rowsUpTo(block: number): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ["pool_observation", "feed_round", "curve_trade", "fee_transfer"])
      out[table] = Number(
        (await query(`SELECT count(*) AS n FROM "${ix.viewsSchema}".${table} WHERE block <= $1`, [block]))[0]!.n,
      );
    return out;
  }

  it("reads its head at the rows it holds while it recovers, then follows the chain once it is ready", async () => {
    expect(ix.schema).toBe("ix"); // the run's template copied: a restart on an indexed schema
    let state = await ponderState();
    for (const deadline = Date.now() + 60_000; state?.ready !== "0"; state = await ponderState()) {
      if (Date.now() > deadline) throw new Error(`the indexer never began its recovery:\n${ix.log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The trap is real: Ponder's latest names blocks whose rows it has reverted.
    expect(state.latest).toBeGreaterThan(state.safe);
    // Through the views schema, as API processes on PostgreSQL read: a restarted build's views stay in place.
    const reads = sqlIndexedReads(query, ix.viewsSchema);
    const head = await reads.head();
    expect(head?.block).toBe(state.safe);
    const book = await reads.poolBook([]);
    expect(book?.block).toBe(state.safe);
    const during = { atHead: await rowsUpTo(head!.block), atLatest: await rowsUpTo(state.latest) };
    expect(during.atHead.pool_observation).toBeGreaterThan(30);

    release();
    const chainHead = Number(await dn.pub.getBlockNumber());
    await ix.waitFor(chainHead);
    expect((await reads.head())?.block).toBeGreaterThanOrEqual(chainHead);
    // Every row at or below the head read during the recovery was there: the indexed chain adds none below it.
    expect(await rowsUpTo(head!.block)).toEqual(during.atHead);
    // The latest checkpoint, read as the head, named blocks whose rows were missing then.
    expect(await rowsUpTo(state.latest)).not.toEqual(during.atLatest);
  });
});
