import { sqlIndexedReads } from "../../api/ports/indexed.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil.js";
import { openPglite, type Db } from "../../api/ports/store/db.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { parseAbi, domainSeparator, type Address } from "viem";
import {
  CONTRACTS_4663,
  DELEGATION_4663,
  FEEDS_4663,
  TOKENS_4663,
  STOCK_IMPLEMENTATION_4663,
} from "../../lib/addressBook.js";

let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;

/** A Ponder-shaped checkpoint for block n at time t. */
const checkpoint = (block: number, ts: number) =>
  String(ts).padStart(10, "0") +
  "4663".padStart(16, "0") +
  String(block).padStart(16, "0") +
  `${"0".repeat(16)}9${"0".repeat(16)}`;

/**
 * Ponder's progress: its latest checkpoint at `block`, its safe one `behind` blocks earlier, and whether it is ready
 * (`_ponder_meta`'s is_ready; 0 while a restarted indexer recovers). null: no checkpoint yet.
 */
async function setIndexerHead(db: Db, block: number | null, opts: { ready?: boolean; behind?: number } = {}) {
  await db.query("DELETE FROM _ponder_checkpoint");
  await db.query("UPDATE _ponder_meta SET value = jsonb_set(value, '{is_ready}', to_jsonb($1::int))", [
    opts.ready === false ? 0 : 1,
  ]);
  if (block !== null) {
    const safe = checkpoint(block - (opts.behind ?? 0), 1_700_000_000);
    await db.query(
      "INSERT INTO _ponder_checkpoint (chain_name, chain_id, latest_checkpoint, safe_checkpoint, " +
        "finalized_checkpoint) VALUES ('robinhood', 4663, $1, $2, $2)",
      [checkpoint(block, 1_700_000_000), safe],
    );
  }
}

beforeAll(async () => {
  dn = await startDevnet();
  store = await freshStore();
  // The tables Ponder keeps its progress and its state in (the columns Ponder 0.16 writes).
  await store.db.query(
    "CREATE TABLE _ponder_checkpoint (chain_name text PRIMARY KEY, chain_id integer, latest_checkpoint varchar(75), " +
      "safe_checkpoint varchar(75), finalized_checkpoint varchar(75))",
  );
  await store.db.query("CREATE TABLE _ponder_meta (key text PRIMARY KEY, value jsonb)");
  await store.db.query(`INSERT INTO _ponder_meta VALUES ('app', '{"is_ready": 1, "is_locked": 1}')`);
  api = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: store.db,
    indexed: sqlIndexedReads((text, params) => store.db.query(text, params)),
  });
});
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await dn?.stop();
});

describe("GET /api/v1/config", () => {
  it("answers every config field that exists, from the devnet's addresses", async () => {
    const res = await api.call("GET", "/api/v1/config");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = res.json;
    const u = dn.universe;
    expect(body.chain_id).toBe(4663);
    expect(body.router).toBe(u.contracts.universalRouter);
    expect(body.permit_contract).toBe("0x000000000022D473030F116dDEE9F6B43aC78BA3");
    expect(body.multicall).toBe("0xcA11bde05977b3631167028862bE2a173976CA11");
    expect(Object.keys(body.tokens).sort()).toEqual(["ETH", "NVDA", "ORBIO", "TSLA", "USDG", "WBTC", "WETH"]);
    expect(body.tokens.USDG).toEqual({
      address: u.tokens.USDG!.address,
      decimals: 6,
      kind: "stable",
      native: false,
      feed: u.tokens.USDG!.feed ?? null,
    });
    expect(body.tokens.ETH.feed).toBe(u.tokens.ETH!.feed);
    expect(body.tokens.ETH.native).toBe(true);
    expect(body.auth).toMatchObject({
      challenge_ttl_s: 300,
      key_ttl_s: 2592000,
      key_prefix: "pit_w_",
      require_partner_agent: false,
      version: "1",
    });
    expect(body.auth.domain).toBe(api.config.authDomain);
    expect(body.fee).toMatchObject({
      schedule: 2,
      other_bps: 50,
      shield_add_bps: 10,
      max_bps: 100,
      recipient: u.devnet!.accounts.platform,
    });
    expect(body.fee.major_tiers[0]).toEqual({ min_30d_volume_usd: 0, bps: 25 });
    expect(body.fee.major_symbols.sort()).toEqual(["ETH", "NVDA", "TSLA", "USDG", "WBTC", "WETH"]);
    expect(body.fee.major_tiers.at(-1).bps).toBe(10);
    expect(body.risks.HONEYPOT).toBe("severe");
    expect(body.high_price_impact_bps).toBe(1000);
    expect(body.price_impact_bps).toBe(300);
    expect(body.limits).toMatchObject({
      max_notional_usd: 10_000,
      permit_trade_expiry_s: 1800,
      default_approval_budget_usd: 25,
    });
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
    // The canonical pools clients pin: every hookless universe pool between config tokens, none of a fixture token.
    const core = new Set(Object.values(body.tokens).map((t: any) => t.address.toLowerCase()));
    const canonical = u.pools.filter(
      (p) => BigInt(p.hooks) === 0n && core.has(p.currency0.toLowerCase()) && core.has(p.currency1.toLowerCase()),
    );
    expect(canonical.map((p) => `${p.symbol0}/${p.symbol1}`).sort()).toEqual([
      "ETH/USDG",
      "TSLA/USDG",
      "USDG/NVDA",
      "USDG/ORBIO",
      "USDG/WBTC",
    ]);
    expect(body.universe.pools).toEqual(
      canonical.map((p) => ({
        id: p.id,
        currency0: p.currency0,
        currency1: p.currency1,
        fee: p.fee,
        tick_spacing: p.tickSpacing,
        hooks: p.hooks,
      })),
    );
  });

  it("is identical across app restarts with the same config (clients pin it)", async () => {
    const answers: string[] = [];
    for (let i = 0; i < 2; i++) {
      const instance = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: store.db,
        config: { authDomain: "api.example.test" },
      });
      answers.push((await instance.call("GET", "/api/v1/config")).text);
      await instance.close();
    }
    expect(answers[0]).toBe(answers[1]);
    expect(JSON.parse(answers[0]!).auth.domain).toBe("api.example.test");
  });
});

describe("the devnet at chain 4663's addresses (lib/addressBook.ts)", () => {
  it("names every shared contract in /config at its production address", async () => {
    const body = (await api.call("GET", "/api/v1/config")).json;
    expect(body.router).toBe(CONTRACTS_4663.universalRouter);
    expect(body.permit_contract).toBe(CONTRACTS_4663.permit2);
    expect(body.pool_manager).toBe(CONTRACTS_4663.poolManager);
    expect(body.v4_quoter).toBe(CONTRACTS_4663.v4Quoter);
    expect(body.multicall).toBe(CONTRACTS_4663.multicall3);
    expect(body.session.delegation_manager).toBe(CONTRACTS_4663.delegationManager);
    expect(body.session.stateless_delegator).toBe(CONTRACTS_4663.statelessDelegator);
    expect(body.session.enforcers).toEqual(DELEGATION_4663.enforcers);
    for (const symbol of ["WETH", "USDG", "TSLA", "NVDA"] as const)
      expect(body.tokens[symbol].address, symbol).toBe(TOKENS_4663[symbol]);
    const feeds = { ETH: "ETH", WETH: "ETH", USDG: "USDG", WBTC: "BTC", TSLA: "TSLA", NVDA: "NVDA" } as const;
    for (const [symbol, feed] of Object.entries(feeds)) expect(body.tokens[symbol].feed, symbol).toBe(FEEDS_4663[feed]);
    // Fixtures of our own with no chain-4663 counterpart keep devnet addresses and are not in the book.
    const book = new Set(
      [
        ...Object.values(CONTRACTS_4663),
        ...Object.values(TOKENS_4663),
        ...Object.values(FEEDS_4663),
        ...Object.values(DELEGATION_4663.enforcers),
      ].map((a) => a.toLowerCase()),
    );
    for (const own of [body.tokens.WBTC.address, body.tokens.ORBIO.address, body.universe.launchpad])
      expect(book.has(own.toLowerCase()), own).toBe(false);
    const u = dn.universe.contracts;
    expect(u.stockBeacon).toBe(CONTRACTS_4663.stockBeacon);
    expect(u.stateView).toBe(CONTRACTS_4663.stateView);
    expect(u.positionManager).toBe(CONTRACTS_4663.positionManager);
    expect(dn.universe.devnet!.fixtures.stockImplementation).toBe(STOCK_IMPLEMENTATION_4663);
  });

  it("carries the real addresses in the placed contracts' immutables and EIP-712 domains", async () => {
    const read = (address: Address, sig: string, functionName: string) =>
      dn.pub.readContract({ address, abi: parseAbi([sig]), functionName }) as Promise<unknown>;
    const pm = "function poolManager() view returns (address)";
    const c = CONTRACTS_4663;
    for (const at of [c.universalRouter, c.v4Quoter, c.stateView, c.positionManager])
      expect(await read(at, pm, "poolManager"), at).toBe(c.poolManager);
    expect(await read(c.positionManager, "function permit2() view returns (address)", "permit2")).toBe(c.permit2);
    // EIP-712 domains cached at construction name the address the contract sits at, not where it was built.
    const positionsDomain = domainSeparator({
      domain: { name: "Uniswap v4 Positions NFT", chainId: 4663, verifyingContract: c.positionManager },
    });
    const ds = "function DOMAIN_SEPARATOR() view returns (bytes32)";
    expect(await read(c.positionManager, ds, "DOMAIN_SEPARATOR")).toBe(positionsDomain);
    // ERC-5267: the contract a domain names is where the contract sits (the router, 2.1, signs routes under its own).
    const eip712 =
      "function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])";
    const verifying = async (at: Address) => ((await read(at, eip712, "eip712Domain")) as readonly unknown[])[4];
    expect(await verifying(c.delegationManager)).toBe(c.delegationManager);
    expect(await verifying(c.universalRouter)).toBe(c.universalRouter);
    // The router holds the PositionManager it settles through.
    const posm = "function V4_POSITION_MANAGER() view returns (address)";
    expect(await read(c.universalRouter, posm, "V4_POSITION_MANAGER")).toBe(c.positionManager);
    // Each enforcer and deleGator holds code at its published address.
    const addresses = [...Object.values(DELEGATION_4663.enforcers), ...Object.values(DELEGATION_4663.implementations)];
    for (const at of [...addresses, DELEGATION_4663.entryPoint, DELEGATION_4663.simpleFactory])
      expect(((await dn.pub.getCode({ address: at })) ?? "0x").length, at).toBeGreaterThan(2);
  });
});

describe("GET /api/v1/health", () => {
  it("is ok when chain, database and indexer agree", async () => {
    const head = Number(await dn.pub.getBlockNumber());
    await setIndexerHead(store.db, head);
    const res = await api.call("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "ok", service: "pit-trading-service", version: "0.1.0" });
    expect(res.json.checks.indexer).toMatchObject({ ok: true, block: head, lag_blocks: 0 });
    // The prebuilt libsecp256k1 binary loads on this machine (lib/secp.test.ts forces the fallback).
    expect(res.json.checks.signatures).toEqual({ backend: "native" });
  });

  it("is degraded (still 200) when the indexer lags or has not started", async () => {
    await dn.test.mine({ blocks: 40 });
    const head = Number(await dn.pub.getBlockNumber());
    await setIndexerHead(store.db, head - 40);
    let res = await api.call("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("degraded");
    await setIndexerHead(store.db, null);
    res = await api.call("GET", "/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("degraded");
  });

  it("reads a recovering indexer at its safe checkpoint, where its rows are, not the latest it left", async () => {
    const head = Number(await dn.pub.getBlockNumber());
    // A restarted indexer has reverted its rows to the safe checkpoint; its latest still names the dead one's
    // head.
    await setIndexerHead(store.db, head, { ready: false, behind: 40 });
    const res = await api.call("GET", "/api/v1/health");
    expect(res.json.status).toBe("degraded");
    expect(res.json.checks.indexer).toMatchObject({ ok: false, block: head - 40, lag_blocks: 40 });
    await setIndexerHead(store.db, head, { ready: true, behind: 40 });
    const ready = await api.call("GET", "/api/v1/health");
    expect(ready.json.checks.indexer).toMatchObject({ ok: true, block: head, lag_blocks: 0 });
  });

  it("is down (503) when the chain cannot be reached or the database is closed", async () => {
    await setIndexerHead(store.db, 1);
    const noChain = await serveApi({ rpcUrl: `http://127.0.0.1:${await freePort()}`, db: store.db });
    let res = await noChain.call("GET", "/api/v1/health");
    await noChain.close();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.json).toMatchObject({ status: "down", checks: { chain: { ok: false } } });

    const closed = await openPglite();
    await closed.close();
    const noDb = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: closed });
    res = await noDb.call("GET", "/api/v1/health");
    await noDb.close();
    expect(res.status).toBe(503);
    expect(res.json.checks.database.ok).toBe(false);
  });
});

describe("conventions", () => {
  it("answers unknown routes 404 and wrong methods 405 as JSON with no-store", async () => {
    let res = await api.call("GET", "/api/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json.error.code).toBe("NOT_FOUND");
    res = await api.call("GET", "/elsewhere");
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("NOT_FOUND");
    res = await api.call("POST", "/api/v1/config", {});
    expect(res.status).toBe(405);
    expect(res.json.error.code).toBe("METHOD_NOT_ALLOWED");
  });
});
