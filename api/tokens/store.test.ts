import { afterEach, describe, expect, it } from "vitest";
import { openMigratedMemory } from "../ports/store/memory.js";
import type { Address } from "viem";
import type { Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import { Refusal } from "../errors/index.js";
import type { Risk, TokenRecord } from "./screen.js";
import { countRegistry, findRecords, loadRecord, othersWithSymbol, storeRecord } from "./store.js";

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close().catch(() => {});
});

/** A migrated registry of its own (a real PGlite in memory). */
async function registry(): Promise<Db> {
  const db = await openMigratedMemory();
  opened.push(db);
  await migrate(db);
  return db;
}

/** Mixed-case addresses that differ in their first byte. */
const addr = (n: number) => `0x${n.toString(16).padStart(2, "0")}${"Ab".repeat(19)}` as Address;
const risk = (code: Risk["code"]): Risk => ({ code, severity: "info", detail: code });

/** A screened record as screenToken writes one (only the fields the registry's columns read matter here). */
function record(n: number, o: Partial<TokenRecord> & { implementation?: string | null } = {}): TokenRecord {
  const { implementation = null, ...rest } = o;
  return {
    address: addr(n),
    symbol: `T${n}`,
    name: `Token ${n}`,
    kind: "erc20",
    tier: "C",
    tradable: true,
    blocked_reason: null,
    stock_beacon: false,
    risks: [],
    flags: { implementation },
    screened_at: 1_700_000_000 + n,
    screen_status: "SCREENED",
    ...rest,
  } as TokenRecord;
}

describe("storeRecord and loadRecord", () => {
  it("keeps the record exactly as screened, NUL included, and finds it by lowercase address", async () => {
    const db = await registry();
    const rec = record(1, {
      symbol: "A\u0000B",
      name: "odd\u0000name",
      risks: [risk("UPGRADEABLE")],
      implementation: "0xABCDEF0000000000000000000000000000000001",
    });
    await storeRecord(db, rec);
    expect(await loadRecord(db, rec.address.toLowerCase())).toEqual(rec);
    expect(await loadRecord(db, rec.address)).toBeUndefined();
    // The columns carry U+FFFD where the record has NUL; the implementation is stored lowercase.
    const [row] = await db.query<{ symbol: string; name: string; implementation: string; risk_codes: string[] }>(
      "SELECT symbol, name, implementation, risk_codes FROM app.tokens",
    );
    expect(row).toEqual({
      symbol: "A\uFFFDB",
      name: "odd\uFFFDname",
      implementation: "0xabcdef0000000000000000000000000000000001",
      risk_codes: ["UPGRADEABLE"],
    });
  });

  it("replaces an earlier screen of the same token (the last screen wins)", async () => {
    const db = await registry();
    await storeRecord(db, record(2, { tier: "C" }));
    await storeRecord(db, record(2, { tier: "blocked", tradable: false, blocked_reason: "HONEYPOT" }));
    expect(await loadRecord(db, addr(2).toLowerCase())).toMatchObject({ tier: "blocked", blocked_reason: "HONEYPOT" });
    expect(await db.query("SELECT address FROM app.tokens")).toHaveLength(1);
  });

  it("answers 503 REGISTRY_UNAVAILABLE when the store does not answer", async () => {
    const db = await registry();
    await db.close();
    const err = await loadRecord(db, addr(3).toLowerCase()).catch((e) => e);
    expect(err).toBeInstanceOf(Refusal);
    expect([err.code, err.retryAfterS]).toEqual(["REGISTRY_UNAVAILABLE", 5]);
    expect((await findRecords(db, { limit: 5 }).catch((e) => e)).code).toBe("REGISTRY_UNAVAILABLE");
  });
});

describe("findRecords", () => {
  async function stocked() {
    const db = await registry();
    await storeRecord(db, record(1, { symbol: "zeta", tier: "A", kind: "core" }));
    await storeRecord(db, record(2, { symbol: "Alpha", tier: "C" }));
    await storeRecord(db, record(3, { symbol: "beta", tier: "blocked", tradable: false, blocked_reason: "NO_ROUTE" }));
    await storeRecord(db, record(4, { symbol: "50%_OFF", name: "half", tier: "B" }));
    await storeRecord(db, record(5, { symbol: "500OFF", name: "x", tier: "C" }));
    return db;
  }
  const symbols = (rs: TokenRecord[]) => rs.map((r) => r.symbol);

  it("orders tradable tiers first, then by symbol ignoring case, and stops at the limit", async () => {
    const db = await stocked();
    expect(symbols(await findRecords(db, { limit: 10 }))).toEqual(["zeta", "50%_OFF", "500OFF", "Alpha", "beta"]);
    expect(symbols(await findRecords(db, { limit: 2 }))).toEqual(["zeta", "50%_OFF"]);
  });

  it("matches symbol or name text literally (% and _ are no wildcards), an address prefix, one address", async () => {
    const db = await stocked();
    expect(symbols(await findRecords(db, { match: { by: "text", value: "0%_" }, limit: 10 }))).toEqual(["50%_OFF"]);
    expect(symbols(await findRecords(db, { match: { by: "text", value: "HALF" }, limit: 10 }))).toEqual(["50%_OFF"]);
    expect(symbols(await findRecords(db, { match: { by: "prefix", value: "0x03AB" }, limit: 10 }))).toEqual(["beta"]);
    expect(symbols(await findRecords(db, { match: { by: "address", value: addr(2) }, limit: 10 }))).toEqual(["Alpha"]);
  });

  it("narrows by tier and kind together with the match", async () => {
    const db = await stocked();
    expect(symbols(await findRecords(db, { tier: "C", limit: 10 }))).toEqual(["500OFF", "Alpha"]);
    expect(symbols(await findRecords(db, { kind: "core", limit: 10 }))).toEqual(["zeta"]);
    expect(symbols(await findRecords(db, { match: { by: "text", value: "off" }, tier: "C", limit: 10 }))).toEqual([
      "500OFF",
    ]);
  });
});

describe("othersWithSymbol", () => {
  it("counts other tokens calling themselves the core symbol, in any case, never the core asset itself", async () => {
    const db = await registry();
    await storeRecord(db, record(1, { symbol: "USDG" }));
    await storeRecord(db, record(2, { symbol: "usdg" }));
    await storeRecord(db, record(3, { symbol: "USDG2" }));
    expect(await othersWithSymbol(db, "USDG", addr(1))).toBe(1);
    expect(await othersWithSymbol(db, "USDG", addr(9))).toBe(2);
  });
});

describe("countRegistry", () => {
  it("counts totals, tradable, and by tier, kind, risk and blocked reason, stamped by the clock given", async () => {
    const db = await registry();
    expect((await countRegistry(db, () => 5_500)).body).toEqual({
      total: 0,
      tradable: 0,
      by_tier: {},
      by_kind: {},
      by_risk: {},
      blocked_by_reason: {},
      generated_at: 5,
    });
    await storeRecord(db, record(1, { tier: "A", kind: "core" }));
    await storeRecord(db, record(2, { tier: "C", risks: [risk("LOW_LIQUIDITY"), risk("UPGRADEABLE")] }));
    await storeRecord(
      db,
      record(3, {
        tier: "blocked",
        tradable: false,
        blocked_reason: "HONEYPOT",
        risks: [risk("HONEYPOT"), risk("LOW_LIQUIDITY")],
      }),
    );
    const c = await countRegistry(db, () => 1_700_000_123_456);
    expect(c.at).toBe(1_700_000_123_456);
    expect(c.body).toEqual({
      total: 3,
      tradable: 2,
      by_tier: { A: 1, C: 1, blocked: 1 },
      by_kind: { core: 1, erc20: 2 },
      by_risk: { LOW_LIQUIDITY: 2, UPGRADEABLE: 1, HONEYPOT: 1 },
      blocked_by_reason: { HONEYPOT: 1 },
      generated_at: 1_700_000_123,
    });
  });
});
