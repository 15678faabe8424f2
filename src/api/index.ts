import { Hono } from "hono";
import { ponder } from "../../lib/ponderNative";
import { db } from "ponder:api";

const { sql } = ponder;

// $n placeholders become bound parameters of one drizzle statement.
const query = async (text: string, params: unknown[] = []) => {
  const chunks = text.split(/(\$\d+)/).map((part) => {
    const m = /^\$(\d+)$/.exec(part);
    return m ? sql`${params[Number(m[1]) - 1]}` : sql.raw(part);
  });
  const result = (await db.execute(sql.join(chunks))) as unknown as { rows: Record<string, unknown>[] };
  return result.rows;
};

type Embedded = typeof import("../../api/embedded");

/**
 * The API, from the bundle npm start and the tests build (scripts/apiBundle.ts, named by
 * PIT_API_BUNDLE) when there is one: Node loads that one file natively in a second or two, where
 * Ponder's module runner takes several seconds over the API's few hundred source files at every
 * indexer start. Without it (`ponder dev`, a bare `ponder start`), the sources as Ponder loads them.
 */
async function loadEmbedded(): Promise<Embedded> {
  const bundle = process.env.PIT_API_BUNDLE;
  // A module under node_modules is one Ponder's runner leaves to Node (vite-node externalises it).
  return bundle ? import(/* @vite-ignore */ bundle) : import("../../api/embedded");
}

// PIT_INDEXER_ONLY=1: the indexer alone (its own routes on the ops port), as the production layout
// runs it beside separate API processes (`npm run api`) and as test stacks run it beside their API.
if (process.env.PIT_INDEXER_ONLY !== "1") await (await loadEmbedded()).startEmbedded(query);

export default new Hono();
