import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatUnits, parseEther, parseUnits } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { freshenMarket, startIndexedDevnet } from "../helpers/stack.js";
import type { Devnet } from "../helpers/devnet.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startWebhookStandIn } from "../../devnet/webhookStandIn.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { MAX_AGENTS_PER_WALLET } from "../../api/hosted/index.js";
import { runSetup, walletSignatures } from "../helpers/sessions.js";
import { createExecutorKeys } from "../../cosigner/executors.js";
import type { ExecutorPort } from "../../api/ports/executors.js";
import { getAddress, parseTransaction, verifyMessage, type Address } from "viem";
import { stockMarketOpen } from "../../lib/marketHours.js";
import { stockAttestationText } from "../../lib/stockAttestation.js";
import { erc20Abi } from "../../abis/erc20.js";

/**
 * Hosted paper agents on a devnet with the real indexer: the rule brain and a webhook brain (the
 * Standard Webhooks stand-in verifies every delivery), ticked by the scheduler on a driven
 * clock; every owner route, and another wallet's key refused on each.
 */
let dn: Devnet;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
let hook: Awaited<ReturnType<typeof startWebhookStandIn>>;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
let key: string;
let otherKey: string;
let owner: ReturnType<typeof privateKeyToAccount>;

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: freshenMarket });
  dn = chain.dn;
  store = await freshStore();
  hook = await startWebhookStandIn({ now: clock });
  api = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: store.db,
    clock,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    hostedScheduler: { intervalMs: 0 },
  });
  const agent = agentOf(api, dn);
  owner = privateKeyToAccount(generatePrivateKey());
  key = await agent.signIn(owner);
  otherKey = await agent.signIn(privateKeyToAccount(generatePrivateKey()));
}, 120_000);
afterAll(async () => {
  await api?.close();
  await hook?.close();
  await store?.drop();
  await chain?.stop();
});

const call = (method: "GET" | "POST", path: string, body?: unknown, k = key) =>
  api.call(method, `/api/v1/hosted${path}`, method === "POST" ? (body ?? {}) : undefined, {
    authorization: `Bearer ${k}`,
  });
const ruleAgent = (o: Record<string, unknown> = {}) => ({
  brain: "rule",
  params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 },
  interval_s: 60,
  pairs: ["ETH/USDG"],
  limits: { max_trade_usd: 1000, max_day_usd: 5000, max_position_usd: 8000 },
  ...o,
});
const runDue = () => api.app.services.hosted.scheduler.runDue();
const logsOf = async (id: string, q = "") => (await call("GET", `/${id}/logs${q}`)).json;
/**
 * A wallet with 5 ETH and 500 USDG, signed in, and its live agent with a webhook brain that orders
 * $15 of `order` every tick; the executor funded with 0.5 ETH for gas.
 */
async function liveWebhookAgent(
  path: string,
  o: { pairs: string[]; max_day_usd: number; order: { token_in: string; token_out: string } },
) {
  const wallet = privateKeyToAccount(generatePrivateKey());
  await dn.test.setBalance({ address: wallet.address, value: parseEther("5") });
  await dn.mined(
    await dn.walletFor(dn.deployer).writeContract({
      address: dn.token("USDG"),
      abi: (await import("../../abis/erc20.js")).mintableAbi,
      functionName: "mint",
      args: [wallet.address, parseUnits("500", 6)],
    }),
  );
  const k = await agentOf(api, dn).signIn(wallet);
  const hc = (method: "GET" | "POST", p: string, body?: unknown) =>
    api.call(method, `/api/v1/hosted${p}`, method === "POST" ? (body ?? {}) : undefined, {
      authorization: `Bearer ${k}`,
    });
  const made = await hc("POST", "", {
    brain: "webhook",
    params: { url: hook.url(path) },
    interval_s: 60,
    pairs: o.pairs,
    limits: { max_trade_usd: 20, max_day_usd: o.max_day_usd, max_position_usd: 1000 },
    mode: "live",
  });
  expect(made.status, made.text).toBe(201);
  const a = made.json;
  hook.secret(path, a.webhook_secret);
  hook.script(path, () => ({ json: { orders: [{ ...o.order, amount_usd: 15 }] } }));
  await dn.mined(await dn.walletFor(dn.deployer).sendTransaction({ to: a.executor, value: parseEther("0.5") }));
  return { wallet, k, hc, a };
}

/** The chain's clock where the service's is (tests move the service's on). */
const syncChain = async () => {
  const t = Math.floor(clock() / 1000);
  if (t > Number((await dn.pub.getBlock()).timestamp)) await dn.test.setNextBlockTimestamp({ timestamp: BigInt(t) });
  await dn.test.mine({ blocks: 1 });
};

describe("a paper agent with the rule brain", () => {
  let id: string;
  it("is created active with every field, ticks on its interval and fills at the quoter's output after the " +
    "fee", async () => {
    const r = await call("POST", "", ruleAgent({ name: "rebalancer" }));
    expect(r.status, r.text).toBe(201);
    id = r.json.id;
    expect(r.json).toMatchObject({
      name: "rebalancer",
      brain: "rule",
      mode: "paper",
      live: false,
      status: "active",
      pause_reason: null,
      trading: true,
      session_id: null,
      executor: null,
      interval_s: 60,
      pairs: ["ETH/USDG"],
      session_terms: null,
      last_decision: null,
    });
    expect(id).toMatch(/^ha_/);
    // What its trades pay: major at the owner's 30-day volume tier (no volume yet: the posted 25 bps).
    expect(r.json.terms).toMatchObject({
      fee_schedule: 2,
      fees: { major_max_bps: 25, major_min_bps: 25, other_bps: 50 },
    });
    expect(r.json.webhook_secret).toBeUndefined();

    const block = await dn.pub.getBlockNumber();
    expect(await runDue()).toBe(1);
    const logs = await logsOf(id);
    const trade = logs.rows.find((x: any) => x.kind === "trade");
    expect(trade).toMatchObject({
      token_in: "USDG",
      token_out: "ETH",
      fee_class: "major",
      fee_bps: 25,
      mode: "paper",
      tick: 1,
    });
    // Deterministic: the V4Quoter's output for the input less the fee, at the tick's block.
    const pool = dn.universe.pools.find((p) => p.symbol0 === "ETH" && p.symbol1 === "USDG")!;
    const amountIn = BigInt(trade.amount_in);
    expect(amountIn).toBe(parseUnits("1000", 6));
    const fee = (amountIn * 25n) / 10_000n;
    expect(trade.fee).toBe(fee.toString());
    const quoted = await quoteExactInputSingle(
      dn.pub,
      dn.universe.contracts.v4Quoter,
      pool,
      pool.currency0.toLowerCase() === dn.token("USDG").toLowerCase(),
      amountIn - fee,
      BigInt(trade.block),
    );
    expect(trade.amount_out).toBe(quoted.toString());
    expect(trade.block).toBeGreaterThanOrEqual(Number(block));
    const d = (await call("GET", `/${id}`)).json;
    expect(d.paper_book).toEqual({
      ETH: { atoms: quoted.toString(), decimals: 18 },
      USDG: { atoms: (parseUnits("10000", 6) - amountIn).toString(), decimals: 6 },
    });
    expect(d.last_trade).toMatchObject({ token_in: "USDG", token_out: "ETH" });
    expect(d.pnl.start_usd).toBeCloseTo(10_000, 0);
    expect(d.pnl.usd).toBeLessThan(0); // the fee and the pool's spread

    // Not due again before its interval; due after it.
    offsetMs += 30_000;
    expect(await runDue()).toBe(0);
    offsetMs += 30_000;
    expect(await runDue()).toBe(1);
    const second = (await logsOf(id, "?kinds=trade")).rows;
    expect(second.map((x: any) => x.tick)).toEqual([2, 1]);
  }, 120_000);

  it("pages its logs by before and kinds, and refuses bad paging", async () => {
    const all = await logsOf(id);
    expect(all.rows.length).toBeGreaterThanOrEqual(4);
    const first = await logsOf(id, "?limit=1");
    expect(first.rows).toHaveLength(1);
    expect(first.next_before).toBe(first.rows[0].id);
    const next = await logsOf(id, `?limit=1&before=${first.next_before}`);
    expect(next.rows[0].id).toBeLessThan(first.rows[0].id);
    expect((await logsOf(id, "?kinds=decision")).rows.every((x: any) => x.kind === "decision")).toBe(true);
    for (const q of ["?limit=0", "?limit=201", "?kinds=bogus", "?before=x", "?page=2"])
      expect((await call("GET", `/${id}/logs${q}`)).status, q).toBe(400);
  });

  it("pauses (OWNER) without ticking, resumes, stops for good, and deletes", async () => {
    const p = await call("POST", `/${id}/pause`);
    expect(p.json).toMatchObject({ status: "paused", pause_reason: { code: "OWNER" }, trading: false });
    offsetMs += 120_000;
    expect(await runDue()).toBe(0);
    expect((await call("POST", `/${id}/pause`, { why: 1 })).json.error).toMatchObject({
      code: "UNKNOWN_FIELD",
      message: "unknown field why; this route takes no body",
    });
    const r = await call("POST", `/${id}/resume`);
    expect(r.json).toMatchObject({ status: "active", pause_reason: null });
    expect(await runDue()).toBe(1);
    const s = await call("POST", `/${id}/stop`);
    expect(s.json).toMatchObject({ status: "stopped", session_revoke: null });
    for (const path of ["/resume", "/pause", "/stop"])
      expect([(await call("POST", `/${id}${path}`)).status, path]).toEqual([409, path]);
    expect((await call("POST", `/${id}/update`, { name: "x" })).json.error.code).toBe("STOPPED");
    offsetMs += 120_000;
    expect(await runDue()).toBe(0);
    const del = await call("POST", `/${id}/delete`);
    expect(del.json).toMatchObject({ id, deleted: true });
    expect((await call("GET", `/${id}`)).status).toBe(404);
    expect((await call("GET", "")).json.agents.map((a: any) => a.id)).not.toContain(id);
    expect((await call("GET", `/${id}/executor`)).json.error.code).toBe("NO_EXECUTOR");
  });
});

describe("a paper agent with a webhook brain", () => {
  let id: string;
  let secret: string;
  const path = "/brain-1";
  it("signs each delivery per Standard Webhooks; the stand-in verifies it and its orders fill", async () => {
    const r = await call("POST", "", {
      brain: "webhook",
      params: { url: hook.url(path) },
      interval_s: 60,
      pairs: ["ETH/USDG", "WBTC/USDG"],
      limits: { max_trade_usd: 200, max_day_usd: 1000, max_position_usd: 5000 },
      paper_book: { USDG: "5000" },
    });
    expect(r.status, r.text).toBe(201);
    ({ id, webhook_secret: secret } = r.json);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await call("GET", `/${id}`)).json.webhook_secret).toBeUndefined();
    hook.secret(path, secret);
    hook.script(path, () => ({
      json: { orders: [{ token_in: "USDG", token_out: "WBTC", amount_usd: 150 }], note: "buy btc" },
    }));
    expect(await runDue()).toBe(1);
    const d = hook.deliveries.at(-1)!;
    expect(d).toMatchObject({ verified: true, id: `${id}:1` });
    expect(d.body).toMatchObject({ agent: { id, pairs: ["ETH/USDG", "WBTC/USDG"] }, tick: 1 });
    expect(d.body.book.USDG.amount).toBe("5000");
    const trade = (await logsOf(id, "?kinds=trade")).rows[0];
    expect(trade).toMatchObject({ token_in: "USDG", token_out: "WBTC", fee_class: "major" });
    expect(Number(formatUnits(BigInt(trade.amount_in), 6))).toBeCloseTo(150, 4);
  }, 60_000);

  it("a stand-in holding another secret refuses the delivery: logged, nothing trades; a rotated secret takes effect " +
    "at once", async () => {
    const tradesBefore = (await logsOf(id, "?kinds=trade")).rows.length;
    hook.secret(path, `whsec_${Buffer.alloc(32, 7).toString("base64")}`);
    offsetMs += 60_000;
    await runDue();
    expect(hook.deliveries.at(-1)!.verified).toBe(false);
    expect((await logsOf(id, "?kinds=error")).rows[0]).toMatchObject({ code: "PARTNER_REJECTED", tick: 2 });
    // Rotate: the answer shows the new secret once; the old one stops at once.
    const rot = await call("POST", `/${id}/rotate-webhook-secret`);
    expect(rot.json.webhook_secret).toMatch(/^whsec_/);
    expect(rot.json.webhook_secret).not.toBe(secret);
    hook.secret(path, secret);
    offsetMs += 60_000;
    await runDue();
    expect(hook.deliveries.at(-1)!.verified).toBe(false);
    hook.secret(path, rot.json.webhook_secret);
    offsetMs += 60_000;
    await runDue();
    expect(hook.deliveries.at(-1)!.verified).toBe(true);
    expect((await logsOf(id, "?kinds=trade")).rows.length).toBe(tradesBefore + 1);
  }, 60_000);

  it("holds orders of one tick that together pass max_position_usd (the book runs with each fill)", async () => {
    hook.script(path, () => ({
      json: { orders: [1, 2, 3].map(() => ({ token_in: "USDG", token_out: "ETH", amount_usd: 200 })) },
    }));
    await call("POST", `/${id}/update`, { limits: { max_trade_usd: 200, max_day_usd: 20_000, max_position_usd: 450 } });
    offsetMs += 60_000;
    await runDue();
    const rows = (await logsOf(id, "?limit=3")).rows;
    expect(rows.map((r: any) => [r.kind, r.code])).toEqual([
      ["hold", "MAX_POSITION"],
      ["trade", null],
      ["trade", null],
    ]);
    await call("POST", `/${id}/update`, { limits: { max_trade_usd: 200, max_day_usd: 1000, max_position_usd: 5000 } });
  }, 60_000);

  it("refuses answers that are not exactly orders inside the agent's pairs and limits: logged, nothing " +
    "trades", async () => {
    const cases: [unknown, string][] = [
      ["not json", "AI_MALFORMED"],
      [[1, 2], "AI_MALFORMED"],
      [{ orders: [], extra: 1 }, "AI_SCHEMA"],
      [{ orders: [{ token_in: "USDG", token_out: "NVDA", amount_usd: 10 }] }, "AI_TOKEN"],
      [{ orders: [{ token_in: "ETH", token_out: "WBTC", amount_usd: 10 }] }, "AI_PAIR"],
      [{ orders: [{ token_in: "USDG", token_out: "ETH", amount_usd: 201 }] }, "AI_SIZE"],
      [
        { orders: Array.from({ length: 6 }, () => ({ token_in: "USDG", token_out: "ETH", amount_usd: 5 })) },
        "AI_TOO_MANY",
      ],
    ];
    const trades = (await logsOf(id, "?kinds=trade")).rows.length;
    for (const [answer, code] of cases) {
      hook.script(path, () => (typeof answer === "string" ? { text: answer } : { json: answer }));
      offsetMs += 60_000;
      await runDue();
      const last = (await logsOf(id, "?limit=1")).rows[0];
      expect([last.code, JSON.stringify(answer)]).toEqual([code, JSON.stringify(answer)]);
    }
    expect((await logsOf(id, "?kinds=trade")).rows.length).toBe(trades);
  }, 120_000);

  it("times a slow webhook out (PARTNER_TIMEOUT) without delaying another agent's tick", async () => {
    const quick = await call("POST", "", ruleAgent({ name: "quick" }));
    hook.script(path, () => ({ delayMs: 11_000, json: { orders: [] } }));
    offsetMs += 60_000;
    const t0 = Date.now();
    await runDue();
    expect(Date.now() - t0).toBeLessThan(14_000);
    expect((await logsOf(id, "?limit=1")).rows[0]).toMatchObject({ code: "PARTNER_TIMEOUT" });
    expect((await logsOf(quick.json.id)).rows.length).toBeGreaterThan(0);
    await call("POST", `/${quick.json.id}/delete`);
    hook.script(path, () => ({ json: { orders: [] } }));
  }, 60_000);
});

describe("the owner's routes", () => {
  it(
    "refuse unknown fields, contradicting terms, stock tokens for paper, bad settings; live and AI agents answer " +
      "that their service is not running",
    async () => {
      const cases: [Record<string, unknown>, number, string][] = [
        [ruleAgent({ colour: "red" }), 400, "UNKNOWN_FIELD"],
        [
          ruleAgent({ limits: { max_trade_usd: 10, max_day_usd: 20, max_position_usd: 100, extra: 1 } }),
          400,
          "UNKNOWN_FIELD",
        ],
        [ruleAgent({ params: { targets: { ETH: 0.5, USDG: 0.5 }, extra: 1 } }), 400, "UNKNOWN_FIELD"],
        [ruleAgent({ accept_risks: ["HONEYPOT"], policies: { block_risks: ["HONEYPOT"] } }), 422, "BAD_TERMS"],
        [ruleAgent({ pairs: ["TSLA/USDG"], params: { targets: { TSLA: 0.5, USDG: 0.5 } } }), 422, "TOKEN_STOCK"],
        [ruleAgent({ params: { targets: { ETH: 0.7, USDG: 0.5 } } }), 400, "BAD_REQUEST"],
        [ruleAgent({ pairs: ["ETH/NOPE"] }), 400, "BAD_REQUEST"],
        [ruleAgent({ interval_s: 5 }), 400, "BAD_REQUEST"],
        [ruleAgent({ limits: { max_trade_usd: 10, max_day_usd: 5, max_position_usd: 100 } }), 400, "BAD_REQUEST"],
        [ruleAgent({ mode: "live", paper_book: { USDG: "10" } }), 400, "BAD_REQUEST"],
        [ruleAgent({ brain: "partner_llm", params: {} }), 503, "HOSTED_UNAVAILABLE"],
      ];
      for (const [body, status, code] of cases) {
        const r = await call("POST", "", body);
        expect([r.status, r.json.error?.code, JSON.stringify(body)]).toEqual([status, code, JSON.stringify(body)]);
      }
    },
  );

  it(`allows ${MAX_AGENTS_PER_WALLET} agents per wallet, then 429 TOO_MANY_AGENTS`, async () => {
    const k = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
    const made = await Promise.all(
      Array.from({ length: MAX_AGENTS_PER_WALLET + 3 }, () => call("POST", "", ruleAgent(), k)),
    );
    expect(made.filter((r) => r.status === 201)).toHaveLength(MAX_AGENTS_PER_WALLET);
    expect(made.filter((r) => r.status === 429).map((r) => r.json.error.code)).toEqual([
      "TOO_MANY_AGENTS",
      "TOO_MANY_AGENTS",
      "TOO_MANY_AGENTS",
    ]);
    // Deleting one frees its place.
    await call("POST", `/${made.find((r) => r.status === 201)!.json.id}/delete`, {}, k);
    expect((await call("POST", "", ruleAgent(), k)).status).toBe(201);
    for (const a of (await call("GET", "", undefined, k)).json.agents) await call("POST", `/${a.id}/delete`, {}, k);
  }, 60_000);

  it("answer 403 FORBIDDEN to another wallet's key on every route, and change nothing", async () => {
    const mine = (
      await call("POST", "", {
        brain: "webhook",
        params: { url: hook.url("/brain-x") },
        interval_s: 60,
        pairs: ["ETH/USDG"],
        limits: { max_trade_usd: 10, max_day_usd: 100, max_position_usd: 100 },
      })
    ).json;
    const routes: ["GET" | "POST", string, unknown?][] = [
      ["GET", ""],
      ["POST", "/update", { name: "stolen" }],
      ["POST", "/session", { session_id: "s_1" }],
      ["POST", "/pause"],
      ["POST", "/resume"],
      ["POST", "/stop"],
      ["POST", "/delete"],
      ["GET", "/logs"],
      ["GET", "/executor"],
      ["POST", "/stock-attestation", { session_id: "s_1", issued: 1, expires: 2, signature: "0x00" }],
      ["POST", "/stock-attestation/revoke"],
      ["POST", "/refund-gas"],
      ["POST", "/rotate-executor"],
      ["POST", "/rotate-webhook-secret"],
    ];
    for (const [method, p, body] of routes) {
      const r = await call(method, `/${mine.id}${p}`, body, otherKey);
      expect([r.status, r.json.error?.code, p]).toEqual([403, "FORBIDDEN", p]);
    }
    const after = (await call("GET", `/${mine.id}`)).json;
    expect(after).toMatchObject({ name: mine.name, status: "active" });
    // me/sessions lists the owner's agents, and not to another wallet.
    const me = (await api.call("GET", "/api/v1/me/sessions", undefined, { authorization: `Bearer ${key}` })).json;
    expect(me.hosted_available).toBe(true);
    expect(me.hosted.find((h: any) => h.id === mine.id)).toEqual({
      id: mine.id,
      name: mine.name,
      status: "active",
      strategy: "webhook",
      mode: "paper",
      live: false,
      trading: true,
      pairs: ["ETH/USDG"],
      session_id: null,
      pause_reason: null,
    });
    expect(
      (await api.call("GET", "/api/v1/me/sessions", undefined, { authorization: `Bearer ${otherKey}` })).json.hosted,
    ).toEqual([]);
    expect((await call("GET", "", undefined, otherKey)).json.agents).toEqual([]);
    // The owner gets the paper agent's answers.
    expect((await call("POST", `/${mine.id}/session`, { session_id: "s_1" })).json.error.code).toBe("PAPER_AGENT");
    expect((await call("POST", `/${mine.id}/rotate-executor`)).json.error.code).toBe("PAPER_AGENT");
    expect((await call("POST", `/${mine.id}/refund-gas`)).json.error.code).toBe("NO_EXECUTOR");
    expect((await call("POST", `/${mine.id}/update`, { live: true })).json.error.code).toBe("PAPER_AGENT");
    expect((await call("POST", `/${mine.id}/session`, { session_id: "s_1", x: 1 })).json.error.code).toBe(
      "UNKNOWN_FIELD",
    );
    expect((await call("GET", "/ha_doesnotexist")).status).toBe(404);
    await call("POST", `/${mine.id}/delete`);
  });

  it("updates settings it takes, checks them like create, and rejects a rotate for a rule brain", async () => {
    const a = (await call("POST", "", ruleAgent())).json;
    const u = await call("POST", `/${a.id}/update`, {
      name: "renamed",
      interval_s: 120,
      limits: { max_trade_usd: 50, max_day_usd: 500, max_position_usd: 1000 },
    });
    expect(u.json).toMatchObject({ name: "renamed", interval_s: 120, limits: { max_trade_usd: 50 } });
    expect((await call("POST", `/${a.id}/update`, { pairs: ["NVDA/USDG"] })).json.error.code).toBe("TOKEN_STOCK");
    expect((await call("POST", `/${a.id}/update`, { bogus: 1 })).json.error.code).toBe("UNKNOWN_FIELD");
    expect((await call("POST", `/${a.id}/rotate-webhook-secret`)).json.error.code).toBe("NOT_WEBHOOK");
    await call("POST", `/${a.id}/delete`);
  });
});

describe("a live agent's executor, held by the signing service", () => {
  let live: any;
  const fund = async (to: Address, eth: string) =>
    dn.mined(await dn.walletFor(dn.deployer).sendTransaction({ to, value: parseEther(eth) }));

  it("comes back paused with its executor and an attestation the executor signed; it waits for a session", async () => {
    const r = await call("POST", "", ruleAgent({ mode: "live", name: "live one" }));
    expect(r.status, r.text).toBe(201);
    live = r.json;
    expect(live).toMatchObject({
      mode: "live",
      status: "paused",
      pause_reason: { code: "NO_SESSION" },
      trading: false,
      session_root_hash: null,
      stock_attestation: null,
      gas_refund: null,
    });
    expect(live.executor).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(live.paper_book).toBeUndefined();
    const att = live.executor_attestation;
    expect(att).toMatchObject({ executor: live.executor, agent_id: live.id, owner: owner.address, chain_id: 4663 });
    expect(await verifyMessage({ address: live.executor, message: att.message, signature: att.signature })).toBe(true);
    expect(JSON.stringify(r.json)).not.toMatch(/sealed|private/i);
    expect((await call("POST", `/${live.id}/resume`)).json.error.code).toBe("NO_SESSION");
    expect((await call("POST", `/${live.id}/resume`)).status).toBe(409);
    expect((await call("POST", `/${live.id}/session`, { session_id: "s_x" })).json.error.code).toBe("NO_SESSION");
    expect((await call("POST", `/${live.id}/update`, { live: true })).json.error.code).toBe("NO_SESSION");
    // The kill switch holds live agents before anything else.
    api.config.hostedKillSwitch = true;
    try {
      expect((await call("POST", `/${live.id}/resume`)).json.error.code).toBe("KILLED");
      expect((await call("POST", `/${live.id}/update`, { live: true })).json.error.code).toBe("KILLED");
    } finally {
      api.config.hostedKillSwitch = false;
    }
    offsetMs += 120_000;
    await runDue();
    expect((await logsOf(live.id)).rows).toEqual([]);
    const view = (await call("GET", `/${live.id}/executor`)).json;
    expect(view).toMatchObject({
      executor: live.executor,
      balance_wei: "0",
      enough: false,
      refund: { available: false, why_not: "STOP_FIRST", last: null },
    });
    expect(BigInt(view.top_up.wei)).toBe(BigInt(view.min_balance_wei));
    expect(view.executor_attestation.signature).toBe(att.signature);
    // The agent shows it waits on gas (paused: no next tick), has no session and has not traded live.
    const d = (await call("GET", `/${live.id}`)).json;
    expect(d).toMatchObject({
      session_terms: null,
      live_stats: { trades: 0, pending: 0, volume_usd: 0, fees_usd: 0, profit_usd: 0, positions: {} },
      watch: {
        next_tick_at: null,
        hold: null,
        session_ending: null,
        executor_gas: { executor: live.executor, balance_wei: "0", enough: false, top_up: { to: live.executor } },
      },
    });
    expect(BigInt(d.watch.executor_gas.top_up.wei)).toBe(BigInt(d.watch.executor_gas.min_balance_wei));
    expect(BigInt(d.watch.executor_gas.min_balance_wei)).toBeGreaterThan(0n);
  });

  it("a session naming another owner's hosted executor is refused (EXECUTOR_OWNER)", async () => {
    const stranger = await dn.freshWallet(parseEther("1"));
    const k = await agentOf(api, dn).signIn(stranger);
    const r = await agentOf(api, dn).post(
      "/live/session/grant",
      {
        wallet: stranger.address,
        executor: live.executor,
        tokens: ["ETH", "USDG"],
        max_trade_usd: 10,
        max_day_usd: 20,
        max_trades: 2,
        expires_in_s: 3_600,
      },
      k,
    );
    expect([r.status, r.json.error?.code]).toEqual([403, "EXECUTOR_OWNER"]);
  });

  it("refund-gas: STOP_FIRST while it runs, SESSION_ACTIVE while a session to it can be co-signed; then one plain " +
    "transfer to the owner, mined, and nothing left to refund", async () => {
    await fund(live.executor, "0.5");
    expect((await call("POST", `/${live.id}/refund-gas`)).json.error.code).toBe("STOP_FIRST");
    // The owner grants a session to the executor and switches it on.
    await dn.test.setBalance({ address: owner.address, value: parseEther("1") });
    const st = await agentOf(api, dn).post(
      "/live/session/grant",
      {
        wallet: owner.address,
        executor: live.executor,
        tokens: ["ETH", "USDG"],
        max_trade_usd: 10,
        max_day_usd: 20,
        max_trades: 2,
        expires_in_s: 3_600,
      },
      key,
    );
    expect(st.status, st.text).toBe(200);
    const on = await agentOf(api, dn).post("/live/session/grant", (await walletSignatures(owner, st.json)).body, key);
    expect(on.status, on.text).toBe(200);
    const stop = await call("POST", `/${live.id}/stop`);
    expect(stop.json.status).toBe("stopped");
    expect((await call("POST", `/${live.id}/refund-gas`)).json.error.code).toBe("SESSION_ACTIVE");
    expect((await agentOf(api, dn).post("/live/session/revoke", { session_id: st.json.session_id }, key)).status).toBe(
      200,
    );
    expect((await call("POST", `/${live.id}/refund-gas`, { to: dn.deployer.address })).json.error.code).toBe(
      "UNKNOWN_FIELD",
    );
    expect((await call("POST", `/${live.id}/refund-gas`, undefined, otherKey)).json.error.code).toBe("FORBIDDEN");

    const before = await dn.pub.getBalance({ address: owner.address });
    const r = await call("POST", `/${live.id}/refund-gas`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      id: live.id,
      executor: live.executor,
      to: owner.address,
      balance_wei: parseEther("0.5").toString(),
      status: "mined",
      already: false,
      closed: true,
      relay_error: null,
      gas: 21000,
    });
    expect(BigInt(r.json.value_wei)).toBe(parseEther("0.5") - BigInt(r.json.max_cost_wei));
    const tx = parseTransaction(r.json.raw);
    expect(tx).toMatchObject({ type: "eip1559", chainId: 4663, value: BigInt(r.json.value_wei) });
    expect(getAddress(tx.to!)).toBe(owner.address);
    expect(tx.data).toBeUndefined();
    expect((await dn.pub.getBalance({ address: owner.address })) - before).toBe(BigInt(r.json.value_wei));
    // What is left is less than another transfer's gas.
    expect((await call("POST", `/${live.id}/refund-gas`)).json.error.code).toBe("REFUND_GAS");
    const d = (await call("GET", `/${live.id}`)).json;
    expect(d.gas_refund).toMatchObject({ tx_hash: r.json.tx_hash, status: "mined" });
    // Deleted, its executor and refund stay viewable.
    await call("POST", `/${live.id}/delete`);
    expect((await call("GET", `/${live.id}/executor`)).json.refund.last).toMatchObject({
      tx_hash: r.json.tx_hash,
      status: "mined",
    });
  }, 60_000);

  it("a refund still unmined is answered again as the same signed transaction (already)", async () => {
    const a = (await call("POST", "", ruleAgent({ mode: "live" }))).json;
    await fund(a.executor, "0.2");
    await call("POST", `/${a.id}/stop`);
    await dn.test.setAutomine(false);
    try {
      const first = await call("POST", `/${a.id}/refund-gas`);
      expect(first.json).toMatchObject({ status: "sent", already: false });
      const again = await call("POST", `/${a.id}/refund-gas`);
      expect(again.json).toMatchObject({
        status: "sent",
        already: true,
        tx_hash: first.json.tx_hash,
        raw: first.json.raw,
      });
    } finally {
      await dn.test.setAutomine(true);
      await dn.test.mine({ blocks: 1 });
    }
    expect((await dn.pub.getBalance({ address: a.executor })) < parseEther("0.0001")).toBe(true);
  }, 60_000);

  it("rotate-executor: a new executor, the old one retired; the agent pauses until a session is attached", async () => {
    const a = (await call("POST", "", ruleAgent({ mode: "live" }))).json;
    const r = await call("POST", `/${a.id}/rotate-executor`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      retired_executor: a.executor,
      status: "paused",
      pause_reason: { code: "ROTATED" },
      session_revoke: null,
    });
    expect(r.json.executor).not.toBe(a.executor);
    expect(
      await verifyMessage({
        address: r.json.executor,
        message: r.json.executor_attestation.message,
        signature: r.json.executor_attestation.signature,
      }),
    ).toBe(true);
    expect((await call("GET", `/${a.id}/executor`)).json.executor).toBe(r.json.executor);
    expect((await call("POST", `/${a.id}/rotate-executor`, undefined, otherKey)).json.error.code).toBe("FORBIDDEN");
    // The retired executor takes no new session, even from its owner.
    const g = await agentOf(api, dn).post(
      "/live/session/grant",
      {
        wallet: owner.address,
        executor: a.executor,
        tokens: ["ETH", "USDG"],
        max_trade_usd: 10,
        max_day_usd: 20,
        max_trades: 2,
        expires_in_s: 3_600,
      },
      key,
    );
    expect([g.status, g.json.error?.code]).toEqual([409, "EXECUTOR_CLOSED"]);
    // A live agent is stopped before it is deleted; its retired executor's gas still goes back to the owner.
    expect((await call("POST", `/${a.id}/delete`)).json.error.code).toBe("STOP_FIRST");
    await dn.mined(await dn.walletFor(dn.deployer).sendTransaction({ to: a.executor, value: parseEther("0.05") }));
    await call("POST", `/${a.id}/stop`);
    const refund = await call("POST", `/${a.id}/refund-gas`);
    expect(refund.json).toMatchObject({ executor: a.executor, to: owner.address, status: "mined" });
  });
});

/**
 * What a live agent shows once its trade is mined: live_stats summing its mined trades as me/trades
 * lists them (path hosted), its terms at the owner's tier, its session's terms, and its watch.
 */
async function expectShown(
  k: string,
  hc: (method: "GET" | "POST", p: string, body?: unknown) => ReturnType<Api["call"]>,
  id: string,
  sessionId: string,
) {
  const rows = ((await agentOf(api, dn).get("/me/trades?limit=100", k)).json.trades as any[]).filter(
    (t) => t.path === "hosted" && t.status === "mined",
  );
  const net: Record<string, bigint> = {};
  for (const t of rows) {
    net[t.token_in.symbol] = (net[t.token_in.symbol] ?? 0n) - BigInt(t.amount_in);
    net[t.token_out.symbol] = (net[t.token_out.symbol] ?? 0n) + BigInt(t.amount_out);
  }
  const trades = ((await hc("GET", `/${id}/logs?kinds=trade`)).json.rows as any[]).filter((r) =>
    rows.some((t) => t.tx_hash === r.tx_hash),
  );
  const usd = trades.reduce((x, r) => x + r.amount_usd, 0);
  const fees = trades.reduce((x, r) => x + (r.amount_usd * r.fee_bps) / 10_000, 0);
  const d = (await hc("GET", `/${id}`)).json;
  expect(rows.length).toBeGreaterThan(0);
  expect(d.live_stats).toMatchObject({
    trades: rows.length,
    pending: 0,
    volume_usd: Math.round(usd * 100) / 100,
    fees_usd: Math.round(fees * 100) / 100,
  });
  expect(
    Object.fromEntries(Object.entries(d.live_stats.positions).map(([sym, p]: [string, any]) => [sym, BigInt(p.atoms)])),
  ).toEqual(net);
  expect(d.live_stats.profit_usd).toBeCloseTo(d.live_stats.realised_usd + d.live_stats.open_usd, 2);
  expect(d.terms).toMatchObject({ fee_schedule: 2, fees: { major_max_bps: 25, major_min_bps: 25, other_bps: 50 } });
  expect(d.session_terms).toEqual({
    fee_schedule: 2,
    fees: { major_max_bps: 25, major_min_bps: 10, other_bps: 50 },
    accept_risks: [],
    shield: false,
    policies: { block_risks: [], shield_policies: [] },
  });
  // Running: its next slot; its session (an hour long) ends within the hour; its executor has gas; no hold.
  const [due] = await store.db.query<{ next_tick_ms: string }>(
    "SELECT next_tick_ms FROM app.hosted_schedule WHERE agent_id = $1",
    [id],
  );
  expect(d.watch).toEqual({
    next_tick_at: Math.ceil(Number(due!.next_tick_ms) / 1000),
    hold: null,
    session_ending: { session_id: sessionId, expires: d.session_expires, seconds_left: expect.any(Number) },
    executor_gas: null,
  });
  const left = d.session_expires - Math.floor(clock() / 1000);
  expect(d.watch.session_ending.seconds_left).toBeGreaterThanOrEqual(left);
  expect(d.watch.session_ending.seconds_left).toBeLessThanOrEqual(Math.min(left + 5, 3_600));
}

describe("a live agent trading through its session", () => {
  it("attaches a session granted to its executor, trades it through the co-signer, its executor signs, the trade is " +
    "mined for the owner's wallet", async () => {
    await syncChain();
    const { wallet, k, hc, a } = await liveWebhookAgent("/live-brain", {
      pairs: ["ETH/USDG"],
      max_day_usd: 40,
      order: { token_in: "ETH", token_out: "USDG" },
    });

    const grant = async (executor: Address, limits: Record<string, unknown>) => {
      const st = await agentOf(api, dn).post(
        "/live/session/grant",
        { wallet: wallet.address, executor, tokens: ["ETH", "USDG"], expires_in_s: 3_600, ...limits },
        k,
      );
      expect(st.status, st.text).toBe(200);
      const { body, auth } = await walletSignatures(wallet, st.json);
      const on = await agentOf(api, dn).post("/live/session/grant", body, k);
      expect(on.status, on.text).toBe(200);
      return { id: st.json.session_id as string, steps: st.json.setup.steps, auth };
    };
    // Refusals first: unknown, another executor's, too narrow for the agent's limits.
    expect((await hc("POST", `/${a.id}/session`, { session_id: "s_nope" })).json.error.code).toBe("NO_SESSION");
    const elsewhere = await grant(privateKeyToAccount(generatePrivateKey()).address, {
      max_trade_usd: 50,
      max_day_usd: 120,
      max_trades: 5,
    });
    await runSetup({ dn }, wallet, elsewhere.steps, elsewhere.auth);
    expect((await hc("POST", `/${a.id}/session`, { session_id: elsewhere.id })).json.error.code).toBe("BAD_SESSION");
    const narrow = await grant(a.executor, { max_trade_usd: 10, max_day_usd: 100, max_trades: 5 });
    const out = await hc("POST", `/${a.id}/session`, { session_id: narrow.id });
    expect([out.status, out.json.error.code]).toEqual([422, "OUTSIDE_SESSION"]);
    // Someone else's key cannot attach the owner's session.
    expect(
      (
        await api.call(
          "POST",
          `/api/v1/hosted/${a.id}/session`,
          { session_id: narrow.id },
          { authorization: `Bearer ${otherKey}` },
        )
      ).json.error.code,
    ).toBe("FORBIDDEN");

    // Terms wider than the session's: Shield off where the session binds it (the limits fit).
    const shielded = await grant(a.executor, { max_trade_usd: 50, max_day_usd: 120, max_trades: 5, shield: true });
    const unshielded = await hc("POST", `/${a.id}/session`, { session_id: shielded.id });
    expect([unshielded.status, unshielded.json.error.code]).toEqual([422, "OUTSIDE_SESSION"]);
    expect(unshielded.json.error.message).toMatch(
      /terms are wider than the session's: shield: the session binds Shield/,
    );

    const s = await grant(a.executor, { max_trade_usd: 50, max_day_usd: 120, max_trades: 5 });
    const at = await hc("POST", `/${a.id}/session`, { session_id: s.id });
    expect(at.status, at.text).toBe(200);
    expect(at.json).toMatchObject({ session_id: s.id, status: "paused", live: false });
    // Paused, the owner may widen the terms; resume and live=true then refuse them, naming the term.
    expect((await hc("POST", `/${a.id}/update`, { accept_risks: ["NO_INDEPENDENT_MARK"] })).status).toBe(200);
    for (const wider of [hc("POST", `/${a.id}/resume`), hc("POST", `/${a.id}/update`, { live: true })]) {
      const r = await wider;
      expect([r.status, r.json.error?.code]).toEqual([422, "OUTSIDE_SESSION"]);
      expect(r.json.error.message).toMatch(/accept_risks: the agent accepts NO_INDEPENDENT_MARK, which the session/);
    }
    expect((await hc("GET", `/${a.id}`)).json).toMatchObject({ status: "paused", live: false });
    expect((await hc("POST", `/${a.id}/update`, { accept_risks: [] })).status).toBe(200);
    const on = await hc("POST", `/${a.id}/resume`);
    expect(on.json).toMatchObject({ status: "active", live: true, trading: true });
    // Limits or terms wider than the session are refused while it runs on it.
    expect(
      (await hc("POST", `/${a.id}/update`, { limits: { max_trade_usd: 60, max_day_usd: 120, max_position_usd: 1000 } }))
        .json.error.code,
    ).toBe("OUTSIDE_SESSION");
    const shield = await hc("POST", `/${a.id}/update`, { shield: true });
    expect([shield.status, shield.json.error?.code]).toEqual([422, "OUTSIDE_SESSION"]);
    expect(shield.json.error.message).toMatch(/shield: the agent asks for Shield/);
    expect((await hc("GET", `/${a.id}`)).json.terms).toMatchObject({ shield: false, accept_risks: [] });

    offsetMs += 60_000;
    await syncChain();
    await runDue();
    const logs = (await hc("GET", `/${a.id}/logs`)).json.rows;
    const trade = logs.find((r: any) => r.kind === "trade");
    expect(trade, JSON.stringify(logs)).toMatchObject({
      mode: "live",
      token_in: "ETH",
      token_out: "USDG",
      session_id: s.id,
      fee_class: "major",
    });
    const receipt = await dn.mined(trade.tx_hash);
    expect(receipt.status).toBe("success");
    expect(getAddress(receipt.from)).toBe(a.executor);
    expect(getAddress(receipt.to!)).toBe(dn.universe.contracts.delegationManager);
    // Listed for the owner's wallet, as a hosted trade of its session.
    let listed: any;
    for (let i = 0; i < 100; i++) {
      listed = ((await agentOf(api, dn).get("/me/trades", k)).json.trades as any[]).find(
        (t) => t.tx_hash === trade.tx_hash,
      );
      if (listed?.status === "mined") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(listed).toMatchObject({ status: "mined", path: "hosted", session_id: s.id });
    await expectShown(k, hc, a.id, s.id);
    // The same slot again trades nothing more (its tick row was claimed before the trade).
    expect((await hc("GET", `/${a.id}/logs?kinds=trade`)).json.rows).toHaveLength(1);

    // Stock attestation: the owner's signature over exactly this agent, executor, session, root, issue time and expiry.
    const detail = (await hc("GET", `/${a.id}`)).json;
    expect(detail).toMatchObject({
      session_id: s.id,
      stock_attestation: null,
      stock_attestation_not_before: null,
      stock_tokens: [],
    });
    expect(detail.session_root_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const { stockAttestationText } = await import("../../lib/stockAttestation.js");
    const nowS = () => Math.floor(clock() / 1000);
    const attest = async (
      o: { session_id?: string; issued?: number; expires?: number; by?: ReturnType<typeof privateKeyToAccount> } = {},
    ) => {
      const body = {
        session_id: o.session_id ?? s.id,
        issued: o.issued ?? nowS(),
        expires: o.expires ?? nowS() + 1_800,
      };
      const text = stockAttestationText({
        agent: a.id,
        executor: a.executor,
        session_id: body.session_id,
        root_hash: detail.session_root_hash,
        issued: body.issued,
        expires: body.expires,
      });
      return hc("POST", `/${a.id}/stock-attestation`, {
        ...body,
        signature: await (o.by ?? wallet).signMessage({ message: text }),
      });
    };
    const codeOf = async (p: Promise<any>) => {
      const r = await p;
      return [r.status, r.json.error?.code];
    };
    expect(await codeOf(attest({ session_id: narrow.id }))).toEqual([409, "SESSION_MISMATCH"]);
    expect(await codeOf(attest({ expires: nowS() + 60 }))).toEqual([422, "BAD_EXPIRY"]);
    expect(await codeOf(attest({ expires: nowS() + 7_200 }))).toEqual([422, "BAD_EXPIRY"]); // after the session's end
    expect(await codeOf(attest({ issued: nowS() - 7_200 }))).toEqual([422, "STOCK_ATTESTATION"]);
    expect(await codeOf(attest({ by: privateKeyToAccount(generatePrivateKey()) }))).toEqual([422, "STOCK_ATTESTATION"]);
    expect(
      await codeOf(
        hc("POST", `/${a.id}/stock-attestation`, {
          session_id: s.id,
          issued: nowS(),
          expires: nowS() + 1_800,
          signature: `0x${"11".repeat(65)}`,
          x: 1,
        }),
      ),
    ).toEqual([400, "UNKNOWN_FIELD"]);
    const issued = nowS() - 5;
    const ok = await attest({ issued });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.stock_attestation).toMatchObject({ session_id: s.id, issued, valid: true, why_not: null });
    expect(await codeOf(attest({ issued }))).toEqual([409, "STOCK_ATTESTATION_OLD"]);
    const rv = await hc("POST", `/${a.id}/stock-attestation/revoke`);
    expect(rv.json).toMatchObject({
      revoked: true,
      signer_revoked: true,
      stock_attestation: { valid: false, why_not: "REVOKED" },
    });
    expect(await codeOf(attest({ issued: rv.json.stock_attestation_not_before }))).toEqual([
      409,
      "STOCK_ATTESTATION_OLD",
    ]);
    expect(
      (
        await api.call(
          "POST",
          `/api/v1/hosted/${a.id}/stock-attestation/revoke`,
          {},
          { authorization: `Bearer ${otherKey}` },
        )
      ).json.error.code,
    ).toBe("FORBIDDEN");

    // Stop revokes the attached session at the service and answers the on-chain steps; nothing trades on it any more.
    const stop = await hc("POST", `/${a.id}/stop`);
    expect(stop.json).toMatchObject({ status: "stopped", session_revoke: { session_id: s.id } });
    expect(stop.json.session_revoke.on_chain.map((x: any) => x.kind)).toContain("disable_delegation");
    const after = await agentOf(api, dn).post(
      "/live/session/trade",
      { session_id: s.id, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
      k,
    );
    expect([after.status, after.json.error?.code]).toEqual([409, "SESSION_REVOKED"]);
  }, 120_000);
});

describe("a live agent trading a stock token", () => {
  it("holds STOCK_ATTESTATION without the owner's attestation (the signing service refuses to sign one too), trades " +
    "under it, and not after its revoke", async () => {
    // Inside the US stock-token session (a run on a weekend moves the clocks on to Sunday 20:00 New York), with fresh
    // feeds.
    while (!stockMarketOpen(Math.floor(clock() / 1000))) offsetMs += 3_600_000;
    await syncChain();
    await freshenMarket(dn);
    offsetMs += 180_000;
    await syncChain();
    // The grant reads the ETH mark from the indexer: it must hold the fresh rounds (the loop above may have moved
    // the clocks hours on, past every older round).
    await chain.ix.waitFor(await dn.pub.getBlockNumber());
    const { wallet, k, hc, a } = await liveWebhookAgent("/stock-brain", {
      pairs: ["TSLA/USDG"],
      max_day_usd: 100,
      order: { token_in: "USDG", token_out: "TSLA" },
    });
    const st = await agentOf(api, dn).post(
      "/live/session/grant",
      {
        wallet: wallet.address,
        executor: a.executor,
        tokens: ["TSLA", "USDG"],
        expires_in_s: 3_600,
        max_trade_usd: 50,
        max_day_usd: 120,
        max_trades: 5,
      },
      k,
    );
    expect(st.status, st.text).toBe(200);
    const { body, auth } = await walletSignatures(wallet, st.json);
    expect((await agentOf(api, dn).post("/live/session/grant", body, k)).status).toBe(200);
    await runSetup({ dn }, wallet, st.json.setup.steps, auth);
    expect((await hc("POST", `/${a.id}/session`, { session_id: st.json.session_id })).status).toBe(200);
    expect((await hc("POST", `/${a.id}/resume`)).json).toMatchObject({ status: "active", live: true });
    const tsla = () =>
      dn.pub.readContract({
        address: dn.token("TSLA"),
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [wallet.address],
      });

    // No attestation: the tick holds, nothing is sent.
    offsetMs += 60_000;
    await syncChain();
    await runDue();
    const held = (await hc("GET", `/${a.id}/logs?kinds=hold,trade`)).json.rows;
    expect(
      held.map((r: any) => r.code ?? r.kind),
      JSON.stringify(held),
    ).toEqual(["STOCK_ATTESTATION"]);
    // The signing service is a gate of its own: a co-signed stock redeem is not signed by the executor without the
    // attestation.
    const services = api.app.services;
    const built = await agentOf(api, dn).post(
      "/live/session/trade",
      {
        session_id: st.json.session_id,
        token_in: "USDG",
        token_out: "TSLA",
        notional_usd: 10,
        owner_attests_non_us: true,
      },
      k,
    );
    expect(built.status, built.text).toBe(200);
    const ask = {
      to: built.json.tx.to,
      data: built.json.tx.data,
      chainId: 4663,
      nonce: 0,
      gas: BigInt(built.json.tx.gas),
      maxFeePerGas: 10n ** 9n,
      maxPriorityFeePerGas: 1n,
      feeBps: built.json.fee_bps,
    };
    await expect(services.executors!.signTrade(a.executor, ask)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });

    // Attested: the next tick trades the stock token for the owner's wallet.
    const detail = (await hc("GET", `/${a.id}`)).json;
    const nowS = Math.floor(clock() / 1000);
    const grant = { session_id: st.json.session_id, issued: nowS - 5, expires: nowS + 1_800 };
    const text = stockAttestationText({
      agent: a.id,
      executor: a.executor,
      root_hash: detail.session_root_hash,
      ...grant,
    });
    const att = await hc("POST", `/${a.id}/stock-attestation`, {
      ...grant,
      signature: await wallet.signMessage({ message: text }),
    });
    expect(att.status, att.text).toBe(200);
    // Attested, but fees far over the chain's base fee are not signed (an API cannot burn the executor's gas on fees).
    const base = (await dn.pub.getBlock()).baseFeePerGas ?? 0n;
    const huge = (base > 10n ** 9n ? base : 10n ** 9n) * 1_000n;
    await expect(services.executors!.signTrade(a.executor, { ...ask, maxFeePerGas: huge })).rejects.toMatchObject({
      code: "TX_REFUSED",
    });
    await expect(
      services.executors!.signTrade(a.executor, { ...ask, maxPriorityFeePerGas: ask.maxFeePerGas + 1n }),
    ).rejects.toMatchObject({ code: "TX_REFUSED" });
    expect(await services.executors!.signTrade(a.executor, ask)).toMatch(/^0x02/);
    offsetMs += 60_000;
    await syncChain();
    await runDue();
    const trade = (await hc("GET", `/${a.id}/logs?kinds=trade`)).json.rows[0];
    expect(trade, JSON.stringify((await hc("GET", `/${a.id}/logs`)).json.rows.slice(0, 4))).toMatchObject({
      mode: "live",
      token_in: "USDG",
      token_out: "TSLA",
      session_id: st.json.session_id,
    });
    expect((await dn.mined(trade.tx_hash)).status).toBe("success");
    expect(await tsla()).toBeGreaterThan(0n);

    // Revoked: here and at the signing service; the next tick holds and the executor signs no stock redeem.
    const rv = await hc("POST", `/${a.id}/stock-attestation/revoke`);
    expect(rv.json).toMatchObject({ revoked: true, signer_revoked: true });
    const before = await tsla();
    offsetMs += 60_000;
    await syncChain();
    await runDue();
    const last = (await hc("GET", `/${a.id}/logs?kinds=hold,trade&limit=1`)).json.rows[0];
    expect(last).toMatchObject({ kind: "hold", code: "STOCK_ATTESTATION" });
    const again = await agentOf(api, dn).post(
      "/live/session/trade",
      {
        session_id: st.json.session_id,
        token_in: "USDG",
        token_out: "TSLA",
        notional_usd: 10,
        owner_attests_non_us: true,
      },
      k,
    );
    await expect(services.executors!.signTrade(a.executor, { ...ask, data: again.json.tx.data })).rejects.toMatchObject(
      { code: "STOCK_ATTESTATION" },
    );
    expect(await tsla()).toBe(before);
    await hc("POST", `/${a.id}/stop`);
  }, 120_000);
});

describe("a signing service that answers something else than the refund asked for", () => {
  it("is refused (SIGNED_MISMATCH) and nothing is relayed", async () => {
    const own = await freshStore();
    const real = createExecutorKeys({ db: own.db, secret: "x".repeat(40), chainId: 4663, clock, payout: null });
    const thief = getAddress("0x000000000000000000000000000000000000dEaD");
    // It signs with the executor's key, but pays someone else.
    const lying: ExecutorPort = {
      ...real,
      async signRefund(executor, ask) {
        const raw = await real.signRefund(executor, ask);
        const tx = parseTransaction(raw);
        expect(tx.to).toBeTruthy();
        return (await import("viem")).serializeTransaction({ ...tx, to: thief } as never) as `0x${string}`;
      },
    };
    const other = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: own.db,
      clock,
      indexed: chain.ix.liveReads().reads,
      limiter: new RateLimiter(clock, 10_000, false),
      hostedScheduler: { intervalMs: 0 },
      executors: lying,
    });
    try {
      const k = await agentOf(other, dn).signIn(privateKeyToAccount(generatePrivateKey()));
      const a = (
        await other.call("POST", "/api/v1/hosted", ruleAgent({ mode: "live" }), { authorization: `Bearer ${k}` })
      ).json;
      await dn.mined(await dn.walletFor(dn.deployer).sendTransaction({ to: a.executor, value: parseEther("0.1") }));
      await other.call("POST", `/api/v1/hosted/${a.id}/stop`, {}, { authorization: `Bearer ${k}` });
      const before = await dn.pub.getBalance({ address: thief });
      const r = await other.call("POST", `/api/v1/hosted/${a.id}/refund-gas`, {}, { authorization: `Bearer ${k}` });
      expect([r.status, r.json.error?.code]).toEqual([502, "SIGNED_MISMATCH"]);
      expect(await dn.pub.getBalance({ address: thief })).toBe(before);
      expect(await dn.pub.getBalance({ address: a.executor })).toBe(parseEther("0.1"));
    } finally {
      await other.close();
      await own.drop();
    }
  });
});
