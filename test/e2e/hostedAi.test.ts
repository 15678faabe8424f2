import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { freshenMarket, startIndexedDevnet } from "../helpers/stack.js";
import type { Devnet } from "../helpers/devnet.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startGatewayStandIn, type Call } from "../../devnet/gatewayStandIn.js";
import { estimatePromptTokens, worstCaseUsd, type ModelPrice } from "../../api/ports/gateway.js";
import { MAX_COMPLETION_TOKENS } from "../../api/hosted/ai.js";
import type { AiConfig } from "../../lib/config.js";
import { aiCalls, aiSpendUsd, hostedTickLag, hostedTicks } from "../../lib/metrics.js";

/**
 * The AI-model brain on a devnet with the real indexer and quoter, against the OpenAI-compatible
 * stand-in gateway through the real `openai` client: valid answers trade on the paper book, every
 * refused answer and failed call holds with its code and spends what SPEC says, budgets run out,
 * the pool and the owner's own funding (with fallback) pay, and concurrent ticks of one owner on
 * two instances over PostgreSQL never pass the owner's day cap.
 */
let dn: Devnet;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let gw: Awaited<ReturnType<typeof startGatewayStandIn>>;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
const DAY_MS = 86_400_000;
/**
 * Budgets and spend are counted per UTC day, and the test moves its clock about half an hour: within two hours of
 * midnight the clock starts three hours back, so the test's calls share one day however late it runs (at 23:55
 * its second call fell on the next day: one call today, and a fresh budget that made a call the test held).
 */
let offsetMs = DAY_MS - (Date.now() % DAY_MS) < 2 * 3_600_000 ? -3 * 3_600_000 : 0;
const clock = () => Date.now() + offsetMs;

const SMALL: ModelPrice = { input: 1, output: 2, structured: null, source: "test table" };
const LARGE: ModelPrice = { input: 10, output: 30, structured: 40, source: "test table" };
const aiConfig = (): AiConfig => ({
  gatewayUrl: gw.url,
  gatewayKey: gw.apiKey,
  standIn: false,
  models: [
    { id: "stand-in/small", price: SMALL },
    { id: "stand-in/large", price: LARGE },
  ],
  pool: {
    usdDay: 1,
    ownerShareMaxUsd: 0.5,
    liveShareUsd: 0.5,
    trialShareUsd: 0.3,
    trialDays: 7,
    trialPoolPct: 100,
    models: ["stand-in/small"],
    minIntervalS: 300,
    agentsPerOwner: 50,
  },
  ownKeysSecret: "test-own-keys-secret-0123456789abcdef",
  callTimeoutMs: 600,
});

const serve = (db: Awaited<ReturnType<typeof freshStore>>["db"]) =>
  serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db,
    clock,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    hostedScheduler: { intervalMs: 0 },
    config: { ai: aiConfig() },
  });

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: freshenMarket });
  dn = chain.dn;
  gw = await startGatewayStandIn({ models: ["stand-in/small", "stand-in/large"] });
  store = await freshStore();
  api = await serve(store.db);
}, 120_000);
afterAll(async () => {
  await api?.close();
  await gw?.close();
  await store?.drop();
  await chain?.stop();
});

type Owner = {
  key: string;
  call: (method: "GET" | "POST", path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
};
async function newOwner(a: Api = api): Promise<Owner> {
  const key = await agentOf(a, dn).signIn(privateKeyToAccount(generatePrivateKey()));
  return {
    key,
    call: (method, path, body) =>
      a.call(method, `/api/v1/hosted${path}`, method === "POST" ? (body ?? {}) : undefined, {
        authorization: `Bearer ${key}`,
      }),
  };
}
const aiAgent = (params: Record<string, unknown> = {}, o: Record<string, unknown> = {}) => ({
  brain: "partner_llm",
  params: { strategy: "Buy ETH with USDG when the book is mostly USDG.", model: "stand-in/small", ...params },
  interval_s: 300,
  pairs: ["ETH/USDG"],
  limits: { max_trade_usd: 100, max_day_usd: 1000, max_position_usd: 5000 },
  ...o,
});
const buy = (usd = 50) => ({ orders: [{ token_in: "USDG", token_out: "ETH", amount_usd: usd }], note: "more ETH" });
/** Creates the agent and runs its first tick (an agent is due at once). */
async function createAndTick(o: Owner, body: Record<string, unknown>, a: Api = api) {
  const r = await o.call("POST", "", body);
  expect(r.status, r.text).toBe(201);
  expect(await a.app.services.hosted.scheduler.runDue()).toBeGreaterThanOrEqual(1);
  return r.json;
}
const logs = async (o: Owner, id: string, q = "") => (await o.call("GET", `/${id}/logs${q}`)).json.rows as any[];
const spend = async (o: Owner, id: string, q = "") => (await o.call("GET", `/${id}/spend${q}`)).json;
/** The worst case our service reserves for the call the stand-in saw. */
const worstOf = (c: Call, price: ModelPrice) =>
  worstCaseUsd(
    estimatePromptTokens(String(c.messages[0]!.content) + String(c.messages[1]!.content)),
    MAX_COMPLETION_TOKENS,
    price,
  );
const close6 = (x: number) => Math.round(x * 1e6) / 1e6;
/** This process's metrics (docs/running.md "Metrics"): AI spend and calls paid by the pool, ticks committed. */
const counted = async () => {
  const of = (m: { get(): Promise<{ values: { labels: object; value: number; metricName?: string }[] }> }) =>
    m.get().then((g) => g.values);
  const find = (vs: { labels: object; value: number }[], labels: Record<string, string>) =>
    vs.find((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))?.value ??
    0;
  return {
    usd: find(await of(aiSpendUsd), { funding: "service" }),
    calls: find(await of(aiCalls), { funding: "service", status: "ok" }),
    ticks: find(await of(hostedTicks), { outcome: "committed" }),
    lagged: (await of(hostedTickLag)).find((v) => v.metricName === "pit_hosted_tick_lag_seconds_count")?.value ?? 0,
  };
};

describe("GET hosted/ai and the AI agent's routes", () => {
  it("lists the models with prices, templates, limits and funding; create checks the AI params", async () => {
    const o = await newOwner();
    const info = await o.call("GET", "/ai");
    expect(info.status, info.text).toBe(200);
    expect(info.json).toMatchObject({
      enabled: true,
      min_interval_s: 300,
      max_orders: 5,
      strategy_max: 2000,
      budget_default_usd: 1,
      budget_max_usd: 20,
      app_fee_pct: 0,
    });
    // A configured gateway's models are not marked as stand-ins (only npm start's devnet gateway is).
    expect(info.json.models.map((m: any) => [m.id, m.price.input, m.price.output, m.available, m.stand_in])).toEqual([
      ["stand-in/small", 1, 2, true, false],
      ["stand-in/large", 10, 30, true, false],
    ]);
    expect(info.json.templates.map((t: any) => t.id)).toEqual(["rebalance", "trend", "dca"]);
    expect(info.json.funding.own).toMatchObject({ available: true, connected: false, sub_hint: null, today_usd: 0 });
    expect(info.json.funding.service).toMatchObject({
      available: true,
      pool_state: "open",
      pool_usd: 1,
      trial_open: true,
      trial_days: 7,
      models: ["stand-in/small"],
      min_interval_s: 300,
    });
    const bad = async (body: Record<string, unknown>, code: string) => {
      const r = await o.call("POST", "", body);
      expect([r.status, r.json.error?.code], r.text).toEqual([
        code === "UNKNOWN_FIELD" || code === "BAD_REQUEST" ? 400 : 422,
        code,
      ]);
    };
    await bad(aiAgent({}, { interval_s: 120 }), "BAD_REQUEST");
    await bad(aiAgent({ model: "gpt-unlisted" }), "BAD_REQUEST");
    await bad(aiAgent({ temperature: 2 }), "UNKNOWN_FIELD");
    await bad(aiAgent({ budget_usd_day: 21 }), "BAD_REQUEST");
    await bad(aiAgent({ max_orders: 6 }), "BAD_REQUEST");
    await bad(aiAgent({ strategy: undefined }), "BAD_REQUEST");
    // A template stands in for the strategy.
    const t = await o.call("POST", "", aiAgent({ strategy: undefined, template: "dca" }));
    expect(t.status, t.text).toBe(201);
    expect(t.json.ai).toMatchObject({
      model: "stand-in/small",
      funding: "service",
      fallback_own: true,
      budget_usd_day: 1,
      template: "dca",
      today_usd: 0,
    });
    // Not an AI agent: NOT_AI; another wallet: FORBIDDEN.
    const rule = await o.call("POST", "", {
      brain: "rule",
      params: { targets: { ETH: 0.5, USDG: 0.5 } },
      interval_s: 60,
      pairs: ["ETH/USDG"],
      limits: { max_trade_usd: 10, max_day_usd: 100, max_position_usd: 100 },
    });
    expect(await o.call("GET", `/${rule.json.id}/spend`).then((r) => [r.status, r.json.error.code])).toEqual([
      409,
      "NOT_AI",
    ]);
    const other = await newOwner();
    expect(await other.call("GET", `/${t.json.id}/spend`).then((r) => [r.status, r.json.error.code])).toEqual([
      403,
      "FORBIDDEN",
    ]);
    expect(await o.call("GET", `/${t.json.id}/spend?limit=0`).then((r) => [r.status, r.json.error.code])).toEqual([
      400,
      "BAD_REQUEST",
    ]);
    for (const id of [t.json.id, rule.json.id]) await o.call("POST", `/${id}/stop`);
  });
});

describe("a paper AI agent", () => {
  it(
    "trades from a valid answer, paid by the pool; its spend row is the usage's cost, or the gateway's cost " +
      "header",
    async () => {
      const o = await newOwner();
      gw.script(() => ({ json: buy(50), usage: { prompt_tokens: 1000, completion_tokens: 50 } }));
      const before = gw.calls.length;
      const metricsBefore = await counted();
      const a = await createAndTick(o, aiAgent());
      const call = gw.calls.at(-1)!;
      expect(gw.calls.length).toBe(before + 1);
      expect(call).toMatchObject({
        authorized: true,
        key: gw.apiKey,
        model: "stand-in/small",
        max_completion_tokens: MAX_COMPLETION_TOKENS,
      });
      expect(call.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
      // The model reads the state and the strategy, never a key or an address.
      const prompt = JSON.stringify(call.messages);
      expect(prompt).toContain("Buy ETH with USDG");
      expect(prompt).not.toContain(gw.apiKey);
      expect(prompt).not.toMatch(/0x[0-9a-fA-F]{40}/);

      const rows = await logs(o, a.id);
      expect(rows.find((r) => r.kind === "decision")).toMatchObject({
        orders: buy(50).orders,
        note: "more ETH",
        source: "service",
      });
      expect(rows.find((r) => r.kind === "trade")).toMatchObject({
        mode: "paper",
        token_in: "USDG",
        token_out: "ETH",
        fee_bps: 25,
      });
      let s = await spend(o, a.id);
      expect(s.rows[0]).toMatchObject({
        source: "service",
        model: "stand-in/small",
        status: "ok",
        code: null,
        prompt_tokens: 1000,
        completion_tokens: 50,
        cost_usd: 0.0011,
        cost_source: "usage",
      });
      expect(s.rows[0].ms).toBeGreaterThanOrEqual(0);

      gw.script(() => ({ json: { orders: [], note: "hold" }, costUsd: 0.0042 }));
      offsetMs += 300_000;
      await api.app.services.hosted.scheduler.runDue();
      s = await spend(o, a.id);
      expect(s.rows[0]).toMatchObject({ status: "ok", cost_usd: 0.0042, cost_source: "header" });
      expect(s.ai).toMatchObject({
        model: "stand-in/small",
        funding: "service",
        budget_usd_day: 1,
        budget_left_usd: close6(1 - 0.0053),
        today: { usd: 0.0053, calls: 2, by_source: { service: 0.0053, own: 0 } },
      });
      expect(s.ai.pool).toMatchObject({ eligible: true, kind: "trial", share_usd: 0.3, owner_used_usd: 0.0053 });
      expect(s.ai.last.id).toBe(s.rows[0].id);
      // A header under the usage at the price table does not lower what the budgets count.
      gw.script(() => ({
        json: { orders: [], note: "hold" },
        costUsd: 0,
        usage: { prompt_tokens: 1000, completion_tokens: 50 },
      }));
      offsetMs += 300_000;
      await api.app.services.hosted.scheduler.runDue();
      expect((await spend(o, a.id)).rows[0]).toMatchObject({ status: "ok", cost_usd: 0.0011, cost_source: "usage" });
      // Paged by before.
      const p1 = await spend(o, a.id, "?limit=2");
      expect(p1.rows).toHaveLength(2);
      expect((await spend(o, a.id, `?limit=1&before=${p1.next_before}`)).rows[0].cost_usd).toBe(0.0011);
      expect((await o.call("GET", `/${a.id}`)).json.ai.today_usd).toBe(0.0064);
      // The same three calls in pit_ai_spend_usd_total and pit_ai_calls_total (funding service), their ticks in
      // pit_hosted_ticks_total and pit_hosted_tick_lag_seconds (at least: another owner's agent may tick beside).
      const metricsAfter = await counted();
      expect(metricsAfter.usd - metricsBefore.usd).toBeGreaterThanOrEqual(0.0064 - 1e-9);
      expect(metricsAfter.calls - metricsBefore.calls).toBeGreaterThanOrEqual(3);
      expect(metricsAfter.ticks - metricsBefore.ticks).toBeGreaterThanOrEqual(3);
      expect(metricsAfter.lagged - metricsBefore.lagged).toBeGreaterThanOrEqual(3);
      // The pool's day shows in /stats.
      await api.app.services.stats.refresh();
      const stats = await api.call("GET", "/api/v1/stats");
      expect(stats.json.ai_pool).toMatchObject({
        pool_usd: 1,
        owners_funded: expect.any(Number),
        agents_funded: expect.any(Number),
      });
      expect(stats.json.ai_pool.left_usd).toBeLessThanOrEqual(close6(1 - 0.0064));
      await o.call("POST", `/${a.id}/stop`);
    },
  );

  it("refuses every answer that is not exactly orders inside its pairs and limits, and every failed call: logged " +
    "with its code, spent as SPEC says, nothing traded", async () => {
    const o = await newOwner();
    const usage = { prompt_tokens: 800, completion_tokens: 40 };
    const usageCost = (800 * 1 + 40 * 2) / 1e6;
    const cases: {
      reply: Parameters<typeof gw.script>[0];
      code: string;
      kind: "error" | "hold";
      status: string;
      cost: "usage" | "worst" | "zero";
    }[] = [
      {
        reply: () => ({ content: "I would buy ETH now.", usage }),
        code: "AI_MALFORMED",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      {
        reply: () => ({ content: "[1,2]", usage }),
        code: "AI_MALFORMED",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      {
        reply: () => ({ json: { ...buy(10), confidence: 0.9 }, usage }),
        code: "AI_SCHEMA",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      {
        reply: () => ({
          json: { orders: [{ token_in: "USDG", token_out: "NVDA", amount_usd: 10 }], note: "x" },
          usage,
        }),
        code: "AI_TOKEN",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      {
        reply: () => ({ json: { orders: [{ token_in: "ETH", token_out: "WBTC", amount_usd: 10 }], note: "x" }, usage }),
        code: "AI_PAIR",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      { reply: () => ({ json: buy(0.5), usage }), code: "AI_SIZE", kind: "error", status: "invalid", cost: "usage" },
      { reply: () => ({ json: buy(101), usage }), code: "AI_SIZE", kind: "error", status: "invalid", cost: "usage" },
      {
        reply: () => ({ json: { orders: [...buy(5).orders, ...buy(6).orders, ...buy(7).orders], note: "x" }, usage }),
        code: "AI_TOO_MANY",
        kind: "error",
        status: "invalid",
        cost: "usage",
      },
      {
        reply: () => ({ json: buy(10), delayMs: 2_000 }),
        code: "PARTNER_TIMEOUT",
        kind: "error",
        status: "error",
        cost: "worst",
      },
      { reply: () => ({ status: 500 }), code: "PARTNER_GATEWAY_ERROR", kind: "error", status: "error", cost: "worst" },
      // The gateway answers, but the model behind it is down: a failed call that may have run upstream.
      { reply: () => ({ status: 502 }), code: "PARTNER_UNAVAILABLE", kind: "error", status: "error", cost: "worst" },
      { reply: () => ({ status: 429 }), code: "PARTNER_RATE", kind: "hold", status: "error", cost: "zero" },
      { reply: () => ({ status: 401 }), code: "PARTNER_REJECTED", kind: "error", status: "error", cost: "zero" },
    ];
    for (const c of cases) {
      gw.script(c.reply);
      const a = await createAndTick(o, aiAgent({ max_orders: 2 }, { pairs: ["ETH/USDG", "WBTC/USDG"] }));
      const rows = await logs(o, a.id);
      expect(
        rows.filter((r) => r.kind === "trade"),
        c.code,
      ).toEqual([]);
      expect(rows[0], c.code).toMatchObject({ kind: c.kind, code: c.code });
      const row = (await spend(o, a.id)).rows[0];
      expect(row, c.code).toMatchObject({ status: c.status, code: c.code, source: "service" });
      const want = c.cost === "usage" ? usageCost : c.cost === "worst" ? worstOf(gw.calls.at(-1)!, SMALL) : 0;
      expect(row.cost_usd, c.code).toBeCloseTo(want, 9);
      expect(row.cost_source, c.code).toBe(c.cost === "worst" ? "bound" : "usage");
      await o.call("POST", `/${a.id}/stop`);
    }
    // A timed-out call's worst case stays counted: the owner's share shows it.
    const info = (await o.call("GET", "/ai")).json;
    expect(info.funding.service.today_usd).toBeGreaterThan(8 * usageCost);
  }, 120_000);

  it("holds AI_BUDGET, with no call, once today's budget cannot hold the next call's worst case", async () => {
    const o = await newOwner();
    gw.script(() => ({ json: { orders: [], note: "wait" }, costUsd: 0.009 }));
    const a = await createAndTick(o, aiAgent({ budget_usd_day: 0.01 }));
    expect((await spend(o, a.id)).rows[0]).toMatchObject({ status: "ok", cost_usd: 0.009 });
    const calls = gw.calls.length;
    offsetMs += 300_000;
    await api.app.services.hosted.scheduler.runDue();
    expect(gw.calls.length).toBe(calls);
    expect((await logs(o, a.id))[0]).toMatchObject({ kind: "hold", code: "AI_BUDGET" });
    const s = await spend(o, a.id);
    expect(s.rows[0]).toMatchObject({ status: "hold", code: "AI_BUDGET", cost_usd: 0, source: null });
    expect(s.ai.budget_left_usd).toBeCloseTo(0.001, 9);
    await o.call("POST", `/${a.id}/stop`);
  });
});

describe("funding: the service's pool, then the owner's own gateway account", () => {
  it(
    "falls back to the owner's own key when the pool is spent (pool_hold), holds NOT_CONNECTED, AI_POOL_SPENT " +
      "without fallback, DISCONNECTED after disconnect",
    async () => {
      const owner = await newOwner();
      // Another owner's call spends what is left of today's pool (the gateway's cost header).
      const spender = await newOwner();
      gw.script(() => ({ json: { orders: [], note: "x" }, costUsd: 1 }));
      const s1 = await createAndTick(spender, aiAgent());
      await spender.call("POST", `/${s1.id}/stop`);
      expect((await owner.call("GET", "/ai")).json.funding.service).toMatchObject({
        pool_state: "spent",
        pool_left_usd: 0,
      });

      gw.script(() => ({ json: buy(20), usage: { prompt_tokens: 500, completion_tokens: 30 } }));
      const a = await createAndTick(owner, aiAgent());
      expect((await logs(owner, a.id))[0]).toMatchObject({
        kind: "hold",
        code: "NOT_CONNECTED",
        pool_hold: "AI_POOL_SPENT",
      });
      expect((await spend(owner, a.id)).ai.pool).toMatchObject({ eligible: false, why_not: "AI_POOL_SPENT" });
      const strict = await createAndTick(owner, aiAgent({ fallback_own: false }));
      expect((await logs(owner, strict.id))[0]).toMatchObject({ kind: "hold", code: "AI_POOL_SPENT" });

      // Connected: the owner's key pays (the stand-in sees it), the decision carries pool_hold.
      const ownKey = `sk-own-${generatePrivateKey().slice(2, 26)}`;
      gw.addKey(ownKey);
      const c = await owner.call("POST", "/ai/own", { api_key: ownKey, day_cap_usd: 2 });
      expect(c.status, c.text).toBe(200);
      expect(c.json).toMatchObject({ connected: true, sub_hint: `…${ownKey.slice(-4)}`, day_cap_usd: 2 });
      expect(JSON.stringify(c.json)).not.toContain(ownKey);
      expect(
        await owner.call("POST", "/ai/own", { api_key: ownKey, extra: 1 }).then((r) => [r.status, r.json.error.code]),
      ).toEqual([400, "UNKNOWN_FIELD"]);
      // The key is sealed at rest.
      const [stored] = await store.db.query<{ sealed_key: string }>(
        "SELECT sealed_key FROM app.ai_own WHERE sub_hint IS NOT NULL",
      );
      expect(stored!.sealed_key).not.toContain(ownKey.slice(3));
      offsetMs += 300_000;
      await api.app.services.hosted.scheduler.runDue();
      expect(gw.calls.at(-1)!.key).toBe(ownKey);
      const rows = await logs(owner, a.id);
      expect(rows.find((r) => r.kind === "decision")).toMatchObject({ source: "own", pool_hold: "AI_POOL_SPENT" });
      expect(rows.find((r) => r.kind === "trade")).toMatchObject({ token_out: "ETH" });
      const row = (await spend(owner, a.id)).rows[0];
      expect(row).toMatchObject({
        source: "own",
        status: "ok",
        pool_hold: "AI_POOL_SPENT",
        cost_usd: (500 + 30 * 2) / 1e6,
      });
      expect((await owner.call("GET", "/ai")).json.funding.own.today_usd).toBeGreaterThan(0);

      // An owner-funded agent pays with the own key from the start, the pool is not asked.
      const own = await createAndTick(owner, aiAgent({ funding: "own" }));
      const ownRow = (await spend(owner, own.id)).rows[0];
      expect(ownRow).toMatchObject({ source: "own", status: "ok" });
      expect(ownRow.pool_hold).toBeUndefined();
      expect((await spend(owner, own.id)).ai.pool).toBeNull();

      const d = await owner.call("POST", "/ai/own/disconnect");
      expect(d.json).toMatchObject({ connected: false, disconnected: true });
      offsetMs += 300_000;
      await api.app.services.hosted.scheduler.runDue();
      expect((await logs(owner, own.id))[0]).toMatchObject({ kind: "hold", code: "DISCONNECTED" });
      for (const id of [a.id, strict.id, own.id]) await owner.call("POST", `/${id}/stop`);
    },
  );
});

describe("concurrent ticks of one owner on two instances over PostgreSQL", () => {
  it("never reserve past the owner's own day cap: each call's worst case is held before it runs", async () => {
    const pg = await freshStore("postgres");
    const one = await serve(pg.db);
    const two = await serve(await pg.reopen());
    try {
      const owner = await newOwner(one);
      const ownKey = `sk-own-${generatePrivateKey().slice(2, 26)}`;
      gw.addKey(ownKey);
      // Slow answers: every tick reserves before any settles.
      gw.script(() => ({ json: { orders: [], note: "x" }, delayMs: 300 }));
      const probe = await owner.call(
        "POST",
        "",
        aiAgent({ funding: "own", fallback_own: false, model: "stand-in/large" }),
      );
      await owner.call("POST", `/${probe.json.id}/stop`);
      expect((await owner.call("POST", "/ai/own", { api_key: ownKey, day_cap_usd: 0.05 })).status).toBe(200);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await owner.call("POST", "", aiAgent({ funding: "own", model: "stand-in/large", budget_usd_day: 1 }));
        expect(r.status, r.text).toBe(201);
        ids.push(r.json.id);
      }
      const callsBefore = gw.calls.filter((c) => c.key === ownKey).length;
      const [x, y] = await Promise.all([
        one.app.services.hosted.scheduler.runDue(),
        two.app.services.hosted.scheduler.runDue(),
      ]);
      expect(x + y).toBe(12);
      const made = gw.calls.filter((c) => c.key === ownKey).slice(callsBefore);
      const worst = Math.min(...made.map((c) => worstOf(c, LARGE)));
      // The cap holds the worst case of every call that ran: no more calls than fit, the rest held.
      expect(made.length).toBeGreaterThan(0);
      expect(made.length * worst).toBeLessThanOrEqual(0.05 + 1e-9);
      const [sum] = await pg.db.query<{ n: string }>(
        "SELECT coalesce(sum(cost_nusd), 0)::text AS n FROM app.ai_spend WHERE source = 'own'",
      );
      expect(Number(sum!.n) / 1e9).toBeLessThanOrEqual(0.05);
      const holds = await pg.db.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM app.ai_spend WHERE code = 'OWN_DAY_CAP'",
      );
      expect(Number(holds[0]!.n)).toBe(12 - made.length);
    } finally {
      await one.close();
      await two.close();
      await pg.drop();
    }
  }, 120_000);
});
