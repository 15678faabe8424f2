import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { startIndexedDevnet, withTwapHistory } from "../helpers/stack.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { loadConfig } from "../../lib/config.js";
import { erc20Abi, mintableAbi } from "../../abis/erc20.js";
import { startWebhookStandIn } from "../../devnet/webhookStandIn.js";
import { runSetup, walletSignatures } from "../helpers/sessions.js";

/**
 * A hosted agent's risk terms decide every order (issue 28): on a devnet whose server lists the
 * upgradeable proxy fixture as a core token (SHIFT: no oracle, so NO_INDEPENDENT_MARK, severe, and
 * UPGRADEABLE, info, in its registry record), a paper agent that does not accept a severe risk, or
 * blocks one it carries, never trades it and logs the hold code; Shield's fee is charged on paper
 * fills only when the agent asked for Shield.
 */
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
let hook: Awaited<ReturnType<typeof startWebhookStandIn>>;
let key: string;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: withTwapHistory });
  const dn = chain.dn;
  store = await freshStore("pglite");
  hook = await startWebhookStandIn({ now: clock });
  const base = loadConfig({ ANVIL_PORT: String(dn.anvil.port) });
  const shift = (dn.universe.devnet!.fixtures as Record<string, Address>).proxyToken!;
  api = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: store.db,
    clock,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    hostedScheduler: { intervalMs: 0 },
    config: {
      tokens: {
        ...base.tokens,
        SHIFT: {
          symbol: "SHIFT",
          address: shift,
          decimals: 18,
          kind: "crypto",
          native: false,
          name: "Shift",
          feed: null,
        },
      },
    },
  });
  key = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
}, 120_000);
afterAll(async () => {
  await api?.close();
  await hook?.close();
  await store?.drop();
  await chain?.stop();
});

const call = (method: "GET" | "POST", path: string, body?: unknown) =>
  api.call(method, `/api/v1/hosted${path}`, method === "POST" ? (body ?? {}) : undefined, {
    authorization: `Bearer ${key}`,
  });
/** A paper rule agent holding 200 USDG that wants half of it in `sym`: its first tick orders $100 of it. */
async function agent(sym: string, terms: Record<string, unknown> = {}) {
  const r = await call("POST", "", {
    brain: "rule",
    params: { targets: { [sym]: 0.5, USDG: 0.5 }, band_bps: 200 },
    interval_s: 60,
    pairs: [`${sym}/USDG`],
    limits: { max_trade_usd: 500, max_day_usd: 5000, max_position_usd: 5000 },
    paper_book: { USDG: "200" },
    ...terms,
  });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}
const logsOf = async (id: string) => (await call("GET", `/${id}/logs`)).json.rows as any[];

describe("a hosted agent's risk terms on its paper orders", () => {
  it("holds RISKS_MISSING or TOKEN_BLOCKED for a token its terms refuse, and trades it when they allow", async () => {
    const record = (await api.call("GET", "/api/v1/tokens/SHIFT", undefined, { authorization: `Bearer ${key}` })).json;
    expect(record.risks.map((x: any) => x.code).sort()).toEqual(["NO_INDEPENDENT_MARK", "UPGRADEABLE"]);
    const unaccepted = await agent("SHIFT");
    const blocked = await agent("SHIFT", {
      accept_risks: ["NO_INDEPENDENT_MARK"],
      policies: { block_risks: ["UPGRADEABLE"] },
    });
    const allowed = await agent("SHIFT", { accept_risks: ["NO_INDEPENDENT_MARK"] });
    expect(await api.app.services.hosted.scheduler.runDue()).toBe(3);

    for (const [id, code, refusal] of [
      [unaccepted, "RISKS_MISSING", "RISK_NOT_ACCEPTED"],
      [blocked, "TOKEN_BLOCKED", "RISK_BLOCKED"],
    ] as const) {
      const rows = await logsOf(id);
      expect(rows.filter((x) => x.kind === "trade")).toEqual([]);
      expect(rows.find((x) => x.kind === "hold")).toMatchObject({
        code,
        refusal,
        order: { token_in: "USDG", token_out: "SHIFT" },
      });
      const d = (await call("GET", `/${id}`)).json;
      expect(d.paper_book.USDG.atoms).toBe("200000000");
      expect(d.last_trade).toBeNull();
      // It shows what it waits on (the hold since its tick, its next tick); a paper agent has no session or live stats.
      const hold = rows.find((x) => x.kind === "hold");
      expect(d).toMatchObject({ session_terms: null, live_stats: null });
      expect(d.watch).toMatchObject({
        hold: { code, since: Math.floor(hold.at / 1000), tick: hold.tick },
        session_ending: null,
        executor_gas: null,
      });
      expect(d.watch.next_tick_at).toBeGreaterThan(Math.floor(hold.at / 1000));
    }
    const trade = (await logsOf(allowed)).find((x) => x.kind === "trade");
    expect(trade).toMatchObject({ token_in: "USDG", token_out: "SHIFT", mode: "paper", shield: false });
  }, 60_000);

  it("charges Shield's 10 bps on a paper fill only when the agent asked for Shield", async () => {
    const shielded = await agent("ETH", { shield: true });
    const plain = await agent("ETH");
    expect((await call("GET", `/${shielded}`)).json.terms).toMatchObject({
      shield: true,
      fees: { major_max_bps: 35 },
    });
    expect(await api.app.services.hosted.scheduler.runDue()).toBeGreaterThanOrEqual(2);
    for (const [id, bps, shield] of [
      [shielded, 35, true],
      [plain, 25, false],
    ] as const) {
      const trade = (await logsOf(id)).find((x) => x.kind === "trade");
      expect(trade).toMatchObject({ fee_class: "major", fee_tier: 25, fee_bps: bps, shield });
      expect(trade.fee).toBe(((BigInt(trade.amount_in) * BigInt(bps)) / 10_000n).toString());
    }
  }, 60_000);
});

/** The chain's clock where the service's is, when the service's is ahead (the test moves it on). */
async function syncChain() {
  const t = BigInt(Math.floor(clock() / 1000));
  if (t > (await chain.dn.pub.getBlock()).timestamp) await chain.dn.test.setNextBlockTimestamp({ timestamp: t });
  await chain.dn.test.mine({ blocks: 1 });
}

describe("a hosted agent's risk terms on its live orders", () => {
  it("holds RISKS_MISSING before session/trade when the session accepts a risk the agent does not: the wallet's " +
    "funds never move", async () => {
    const dn = chain.dn;
    await syncChain();
    const wallet = privateKeyToAccount(generatePrivateKey());
    await dn.test.setBalance({ address: wallet.address, value: parseEther("5") });
    const usdg = dn.token("USDG");
    const deployer = dn.walletFor(dn.deployer);
    await dn.mined(
      await deployer.writeContract({
        address: usdg,
        abi: mintableAbi,
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
      params: { url: hook.url("/shift") },
      interval_s: 60,
      pairs: ["SHIFT/USDG"],
      limits: { max_trade_usd: 20, max_day_usd: 40, max_position_usd: 1000 },
      mode: "live",
    });
    expect(made.status, made.text).toBe(201);
    const a = made.json;
    hook.secret("/shift", a.webhook_secret);
    hook.script("/shift", () => ({ json: { orders: [{ token_in: "USDG", token_out: "SHIFT", amount_usd: 15 }] } }));
    await dn.mined(await deployer.sendTransaction({ to: a.executor, value: parseEther("0.5") }));
    // The owner's session accepts SHIFT's severe risk; the agent's terms (accept_risks []) do not.
    const grant = {
      wallet: wallet.address,
      executor: a.executor,
      tokens: ["SHIFT", "USDG"],
      expires_in_s: 3_600,
      max_trade_usd: 50,
      max_day_usd: 120,
      max_trades: 5,
      accept_risks: ["NO_INDEPENDENT_MARK"],
    };
    const st = await agentOf(api, dn).post("/live/session/grant", grant, k);
    expect(st.status, st.text).toBe(200);
    const { body, auth } = await walletSignatures(wallet, st.json);
    const on = await agentOf(api, dn).post("/live/session/grant", body, k);
    expect(on.status, on.text).toBe(200);
    await runSetup({ dn }, wallet, st.json.setup.steps, auth);
    expect((await hc("POST", `/${a.id}/session`, { session_id: st.json.session_id })).status).toBe(200);
    expect((await hc("POST", `/${a.id}/resume`)).json).toMatchObject({ live: true, trading: true });

    offsetMs += 60_000;
    await syncChain();
    await api.app.services.hosted.scheduler.runDue();
    const rows = (await hc("GET", `/${a.id}/logs`)).json.rows as any[];
    expect(
      rows.find((x) => x.kind === "hold"),
      JSON.stringify(rows),
    ).toMatchObject({
      code: "RISKS_MISSING",
      refusal: "RISK_NOT_ACCEPTED",
      order: { token_in: "USDG", token_out: "SHIFT" },
    });
    expect(rows.filter((x) => x.kind === "trade")).toEqual([]);
    const shift = (dn.universe.devnet!.fixtures as Record<string, Address>).proxyToken!;
    const held = await dn.pub.readContract({
      address: shift,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [wallet.address],
    });
    expect(held).toBe(0n);
  }, 90_000);
});
