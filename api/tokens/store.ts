import type { Db } from "../ports/store/db.js";
import { Refusal } from "../errors/index.js";
import type { TokenRecord } from "./screen.js";

/** The registry's counts (GET /tokens/stats without cached_s) and the clock time they were taken. */
export type TokenCounts = {
  at: number;
  body: {
    total: number;
    tradable: number;
    by_tier: Record<string, number>;
    by_kind: Record<string, number>;
    by_risk: Record<string, number>;
    blocked_by_reason: Record<string, number>;
    generated_at: number;
  };
};

/**
 * How GET /tokens narrows the registry: one match on `q` (an exact address, an address prefix or text
 * in symbol or name), tier, kind.
 */
export type RecordFilter = {
  match?: { by: "address" | "prefix" | "text"; value: string };
  tier?: string;
  kind?: string;
  limit: number;
};

const unavailable = () =>
  new Refusal("REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, { retryAfterS: 5 });

/**
 * Stores a screened record (an upsert: the last screen wins). The record is kept as JSON text so
 * even NUL survives; the symbol and name columns, which PostgreSQL's text cannot hold NUL in, carry U+FFFD instead.
 */
export async function storeRecord(db: Db, rec: TokenRecord): Promise<void> {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what PostgreSQL text refuses
  const clean = (s: string) => s.replace(/\u0000/g, "\uFFFD");
  await db.query(
    `INSERT INTO app.tokens (address, symbol, name, kind, tier, tradable, blocked_reason, risk_codes, implementation,
         record, screened_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (address) DO UPDATE SET symbol = $2, name = $3, kind = $4, tier = $5, tradable = $6,
         blocked_reason = $7, risk_codes = $8, implementation = $9, record = $10, screened_at = $11`,
    [
      rec.address.toLowerCase(),
      clean(rec.symbol),
      clean(rec.name),
      rec.kind,
      rec.tier,
      rec.tradable,
      rec.blocked_reason,
      rec.risks.map((r) => r.code),
      (rec.flags as { implementation: string | null }).implementation?.toLowerCase() ?? null,
      JSON.stringify(rec),
      rec.screened_at,
    ],
  );
}

/**
 * The stored record by lowercase address (undefined: never screened); 503 REGISTRY_UNAVAILABLE when
 * the store does not answer.
 */
export async function loadRecord(db: Db, key: string): Promise<TokenRecord | undefined> {
  let rows: { record: string }[];
  try {
    rows = await db.query<{ record: string }>("SELECT record FROM app.tokens WHERE address = $1", [key]);
  } catch {
    throw unavailable();
  }
  return rows[0] ? (JSON.parse(rows[0].record) as TokenRecord) : undefined;
}

/** How many other stored tokens call themselves `symbol` (any case) than the core asset at `coreAddress`. */
export async function othersWithSymbol(db: Db, symbol: string, coreAddress: string): Promise<number> {
  const [{ n }] = (await db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM app.tokens WHERE lower(symbol) = lower($1) AND address <> $2",
    [symbol, coreAddress.toLowerCase()],
  )) as [{ n: string }];
  return Number(n);
}

/** The WHERE clause and its parameters for a filter (LIKE's own characters in text are matched literally). */
function whereOf(f: RecordFilter): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const m = f.match;
  if (m?.by === "address") {
    params.push(m.value.toLowerCase());
    where.push(`address = $${params.length}`);
  } else if (m?.by === "prefix") {
    params.push(`${m.value.toLowerCase()}%`);
    where.push(`address LIKE $${params.length}`);
  } else if (m?.by === "text") {
    params.push(`%${m.value.toLowerCase().replace(/[\\%_]/g, (x) => `\\${x}`)}%`);
    where.push(`(lower(symbol) LIKE $${params.length} OR lower(name) LIKE $${params.length})`);
  }
  if (f.tier) params.push(f.tier), where.push(`tier = $${params.length}`);
  if (f.kind) params.push(f.kind), where.push(`kind = $${params.length}`);
  return { where, params };
}

/**
 * Stored records matching the filter, tradable tiers first, then by symbol; 503 REGISTRY_UNAVAILABLE
 * when the store does not answer.
 */
export async function findRecords(db: Db, f: RecordFilter): Promise<TokenRecord[]> {
  const { where, params } = whereOf(f);
  params.push(f.limit);
  const rows = await db
    .query<{ record: string }>(
      `SELECT record FROM app.tokens ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY (tier = 'blocked'), tier, lower(symbol), address LIMIT $${params.length}`,
      params,
    )
    .catch(() => {
      throw unavailable();
    });
  return rows.map((r) => JSON.parse(r.record) as TokenRecord);
}

/** The registry counted now: totals, by tier, kind, risk and blocked reason (`at` by the given clock). */
export async function countRegistry(db: Db, clock: () => number): Promise<TokenCounts> {
  const at = clock();
  const q = <T>(sql: string) => db.query<T>(sql);
  const [totals] = await q<{ total: string; tradable: string }>(
    "SELECT count(*)::text AS total, count(*) FILTER (WHERE tradable)::text AS tradable FROM app.tokens",
  );
  const group = async (sql: string) =>
    Object.fromEntries((await q<{ k: string; n: string }>(sql)).map((r) => [r.k, Number(r.n)]));
  return {
    at,
    body: {
      total: Number(totals!.total),
      tradable: Number(totals!.tradable),
      by_tier: await group("SELECT tier AS k, count(*)::text AS n FROM app.tokens GROUP BY tier"),
      by_kind: await group("SELECT kind AS k, count(*)::text AS n FROM app.tokens GROUP BY kind"),
      by_risk: await group("SELECT r AS k, count(*)::text AS n FROM app.tokens, unnest(risk_codes) AS r GROUP BY r"),
      blocked_by_reason: await group(
        `SELECT blocked_reason AS k, count(*)::text AS n FROM app.tokens
         WHERE blocked_reason IS NOT NULL GROUP BY blocked_reason`,
      ),
      generated_at: Math.floor(at / 1000),
    },
  };
}
