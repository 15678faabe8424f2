import { PGlite } from "@electric-sql/pglite";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app.js";
import { sqlIndexedReads } from "../../api/indexed.js";
import { createChainClient } from "../../lib/chain.js";
import { loadConfig } from "../../lib/config.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { freePort } from "../../devnet/anvil.js";

let dn: Devnet;
let pg: PGlite;
const logger = pino({ level: "silent" });

/** A Ponder-shaped checkpoint for block n at time t. */
const checkpoint = (block: number, ts: number) =>
  `${String(ts).padStart(10, "0")}${"4663".padStart(16, "0")}${String(block).padStart(16, "0")}${"0".repeat(16)}9${"0".repeat(16)}`;

async function setIndexerHead(block: number | null) {
  await pg.query("DELETE FROM _ponder_checkpoint");
  if (block !== null) {
    await pg.query("INSERT INTO _ponder_checkpoint (chain_name, chain_id, latest_checkpoint) VALUES ('robinhood', 4663, $1)", [checkpoint(block, 1_700_000_000)]);
  }
}

function appFor(rpcUrl: string, db = pg) {
  const config = { ...loadConfig({ ANVIL_PORT: new URL(rpcUrl).port }) };
  const query = async (sql: string, params?: unknown[]) => (await db.query<Record<string, unknown>>(sql, params)).rows;
  return createApp({ config, logger, chain: createChainClient(config), indexed: sqlIndexedReads(query), pingDatabase: async () => void (await query("SELECT 1")) });
}

beforeAll(async () => {
  dn = await startDevnet();
  pg = new PGlite();
  // The table Ponder keeps its progress in (same columns as Ponder 0.16 writes).
  await pg.query("CREATE TABLE _ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint, latest_checkpoint varchar(75))");
});
afterAll(async () => {
  await dn?.stop();
  await pg?.close();
});

describe("GET /api/v1/config", () => {
  it("answers every config field that exists, from the devnet's addresses", async () => {
    const res = await appFor(dn.anvil.rpcUrl).request("/api/v1/config");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as any;
    const u = dn.universe;
    expect(body.chain_id).toBe(4663);
    expect(body.router).toBe(u.contracts.universalRouter);
    expect(body.permit_contract).toBe("0x000000000022D473030F116dDEE9F6B43aC78BA3");
    expect(body.multicall).toBe("0xcA11bde05977b3631167028862bE2a173976CA11");
    expect(Object.keys(body.tokens).sort()).toEqual(["ETH", "NVDA", "ORBIO", "TSLA", "USDG", "WBTC", "WETH"]);
    expect(body.tokens.USDG).toEqual({ address: u.tokens.USDG!.address, decimals: 6, kind: "stable", native: false });
    expect(body.tokens.ETH.native).toBe(true);
    expect(body.auth).toMatchObject({ challenge_ttl_s: 300, key_ttl_s: 2592000, key_prefix: "pit_w_", require_partner_agent: false });
    expect(body.fee).toMatchObject({ schedule: 2, other_bps: 50, shield_add_bps: 10, max_bps: 100, recipient: u.devnet!.accounts.platform });
    expect(body.fee.major_tiers[0]).toEqual({ min_30d_volume_usd: 0, bps: 25 });
    expect(body.fee.major_tiers.at(-1).bps).toBe(10);
    expect(body.risks.HONEYPOT).toBe("severe");
    expect(body.high_price_impact_bps).toBe(1000);
    expect(body.price_impact_bps).toBe(300);
    expect(body.limits).toMatchObject({ max_notional_usd: 10_000, permit_trade_expiry_s: 1800, default_approval_budget_usd: 25 });
    expect(body.limits.approval_modes).toEqual(["budget", "exact", "unlimited"]);
    expect(body.session).toMatchObject({
      cosigner: u.devnet!.accounts.cosigner,
      delegation_manager: u.contracts.delegationManager,
      stateless_delegator: u.contracts.statelessDelegator,
      leaf_ttl_s: 120,
    });
    expect(body.session.enforcers.ExactCalldataEnforcer).toBe(u.contracts.enforcers.ExactCalldataEnforcer);
    expect(typeof body.submit_enabled).toBe("boolean");
    expect(body.universe.tiers).toEqual(["A", "B", "C", "blocked"]);
  });

  it("is identical across app restarts with the same config (clients pin it)", async () => {
    const a = await (await appFor(dn.anvil.rpcUrl).request("/api/v1/config")).text();
    const b = await (await appFor(dn.anvil.rpcUrl).request("/api/v1/config")).text();
    expect(a).toBe(b);
  });
});

describe("GET /api/v1/health", () => {
  it("is ok when chain, database and indexer agree", async () => {
    const head = Number(await dn.pub.getBlockNumber());
    await setIndexerHead(head);
    const res = await appFor(dn.anvil.rpcUrl).request("/api/v1/health");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ status: "ok", service: "pit-trading-service", version: "0.1.0" });
    expect(body.checks.indexer).toMatchObject({ ok: true, block: head, lag_blocks: 0 });
  });

  it("is degraded (still 200) when the indexer lags or has not started", async () => {
    await dn.test.mine({ blocks: 40 });
    const head = Number(await dn.pub.getBlockNumber());
    await setIndexerHead(head - 40);
    let res = await appFor(dn.anvil.rpcUrl).request("/api/v1/health");
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("degraded");
    await setIndexerHead(null);
    res = await appFor(dn.anvil.rpcUrl).request("/api/v1/health");
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("degraded");
  });

  it("is down (503) when the chain cannot be reached or the database is closed", async () => {
    await setIndexerHead(1);
    const nothing = `http://127.0.0.1:${await freePort()}`;
    let res = await appFor(nothing).request("/api/v1/health");
    expect(res.status).toBe(503);
    expect((await res.json()) as any).toMatchObject({ status: "down", checks: { chain: { ok: false } } });

    const closed = new PGlite();
    await closed.close();
    res = await appFor(dn.anvil.rpcUrl, closed).request("/api/v1/health");
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).checks.database.ok).toBe(false);
  });
});

describe("conventions already in place", () => {
  it("answers unknown routes 404 and wrong methods 405 as JSON with no-store", async () => {
    const app = appFor(dn.anvil.rpcUrl);
    let res = await app.request("/api/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
    res = await app.request("/elsewhere");
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
    res = await app.request("/api/v1/config", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(405);
    expect(((await res.json()) as any).error.code).toBe("METHOD_NOT_ALLOWED");
  });
});
