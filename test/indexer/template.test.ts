import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { startIndexer, type Indexer } from "../helpers/indexer.js";

/**
 * Most files' indexers start from a copy of the run's template (test/helpers/indexer.ts): the snapshot indexed once,
 * resumed by Ponder's crash recovery. They must see what an indexer from the chain's first block sees, row for row,
 * and be caught up only once they are: a copy reports the template's head while it re-indexes the unfinalised blocks.
 */
describe("an indexer copied from the run's template", () => {
  let dn: Devnet;
  let scratch: Indexer;
  let copy: Indexer;

  beforeAll(async () => {
    dn = await startDevnet();
    [scratch, copy] = await Promise.all([
      startIndexer({ anvilPort: dn.anvil.port, backend: "postgres", fromScratch: true }),
      startIndexer({ anvilPort: dn.anvil.port, backend: "postgres" }),
    ]);
  });
  afterAll(async () => {
    await scratch?.cleanup();
    await copy?.cleanup();
    await dn?.stop();
  });

  /** Every indexed table's rows, each as JSON, sorted: equal for two indexers of one chain, whatever their order. */
  async function rowsOf(ix: Indexer): Promise<Record<string, string[]>> {
    const { query } = ix.liveReads();
    const tables = await query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name NOT LIKE '\\_%' " +
        "ORDER BY table_name",
      [ix.viewsSchema],
    );
    const out: Record<string, string[]> = {};
    for (const { table_name } of tables as { table_name: string }[]) {
      const rows = await query(`SELECT * FROM "${ix.viewsSchema}"."${table_name}"`, []);
      out[table_name] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  }

  it("holds every row an indexer from the first block holds, once it says it is caught up", async () => {
    const head = await dn.pub.getBlockNumber();
    await Promise.all([scratch.waitFor(head), copy.waitFor(head)]);
    expect(copy.schema).toBe("ix"); // a copy of the template (its schema), not a second indexer from scratch
    const [want, got] = await Promise.all([rowsOf(scratch), rowsOf(copy)]);
    expect(Object.keys(want)).toContain("pool_tick");
    expect(want.pool_tick!.length).toBeGreaterThan(30);
    expect(got).toEqual(want);
  });

  it("follows the chain as one from the first block does", async () => {
    await dn.test.mine({ blocks: 3 });
    const head = await dn.pub.getBlockNumber();
    await Promise.all([scratch.waitFor(head), copy.waitFor(head)]);
    expect((await copy.liveReads().reads.head())?.block).toBe(Number(head));
    expect(await rowsOf(copy)).toEqual(await rowsOf(scratch));
  });
});
