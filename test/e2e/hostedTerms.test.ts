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
import { startGatewayStandIn } from "../../devnet/gatewayStandIn.js";
import { runSetup, walletSignatures } from "../helpers/sessions.js";
import { approveForRouter, poolKeyOf, routerSwap } from "../helpers/trades.js";

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
let gw: Awaited<ReturnType<typeof startGatewayStandIn>>;
let key: string;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: withTwapHistory });
  const dn = chain.dn;
  store = await freshStore();
  hook = await startWebhookStandIn({ now: clock });
  gw = await startGatewayStandIn({ models: ["stand-in/small"] });
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
      ai: {
        ...base.ai,
        gatewayUrl: gw.url,
        gatewayKey: gw.apiKey,
        models: [{ id: "stand-in/small", price: { input: 1, output: 2, structured: null, source: "test table" } }],
      },
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
  await gw?.close();
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

/**
 * A wallet with 5 ETH and 500 USDG, signed in, and its live agent on SHIFT/USDG made by `body`
 * (a webhook brain scripted to buy $15 of SHIFT each tick unless `body` names another brain); its
 * executor funded with 0.5 ETH; a session that accepts SHIFT's severe risk attached; resumed.
 */
async function liveShiftAgent(path: string, body: Record<string, unknown> = {}) {
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
  const hc = (method: "GET" | "POST", p: string, b?: unknown) =>
    api.call(method, `/api/v1/hosted${p}`, method === "POST" ? (b ?? {}) : undefined, {
      authorization: `Bearer ${k}`,
    });
  const made = await hc("POST", "", {
    brain: "webhook",
    params: { url: hook.url(path) },
    interval_s: 60,
    pairs: ["SHIFT/USDG"],
    limits: { max_trade_usd: 20, max_day_usd: 40, max_position_usd: 1000 },
    mode: "live",
    ...body,
  });
  expect(made.status, made.text).toBe(201);
  const a = made.json;
  if (a.webhook_secret) {
    hook.secret(path, a.webhook_secret);
    hook.script(path, () => ({ json: { orders: [{ token_in: "USDG", token_out: "SHIFT", amount_usd: 15 }] } }));
  }
  await dn.mined(await deployer.sendTransaction({ to: a.executor, value: parseEther("0.5") }));
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
  const { body: switchOn, auth } = await walletSignatures(wallet, st.json);
  const on = await agentOf(api, dn).post("/live/session/grant", switchOn, k);
  expect(on.status, on.text).toBe(200);
  await runSetup({ dn }, wallet, st.json.setup.steps, auth);
  expect((await hc("POST", `/${a.id}/session`, { session_id: st.json.session_id })).status).toBe(200);
  expect((await hc("POST", `/${a.id}/resume`)).json).toMatchObject({ live: true, trading: true });
  const rootHash = st.json.sign.delegation.delegation_hash as `0x${string}`;
  return { wallet, k, hc, a, sessionId: st.json.session_id as string, rootHash };
}

/** The next tick of every due agent, with the chain's clock where the service's is. */
async function nextTick() {
  offsetMs += 60_000;
  await syncChain();
  await api.app.services.hosted.scheduler.runDue();
}

/** The wallet's SHIFT and USDG, and what the co-signer has counted for its session. */
async function fundsOf(wallet: Address, rootHash: `0x${string}`) {
  const read = (token: Address) =>
    chain.dn.pub.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [wallet] });
  return {
    shift: await read(shiftOf()),
    usdg: await read(chain.dn.token("USDG")),
    cosigned: await api.app.services.cosigner!.usage(rootHash, wallet),
  };
}
const shiftOf = () => (chain.dn.universe.devnet!.fixtures as Record<string, Address>).proxyToken!;

describe("a hosted agent's risk terms on its live orders", () => {
  it("holds RISKS_MISSING before session/trade when the session accepts a risk the agent does not: the wallet's " +
    "funds never move", async () => {
    // The owner's session accepts SHIFT's severe risk; the agent's terms (accept_risks []) do not.
    const { wallet, hc, a } = await liveShiftAgent("/shift");
    await nextTick();
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
    const held = await chain.dn.pub.readContract({
      address: shiftOf(),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [wallet.address],
    });
    expect(held).toBe(0n);
  }, 90_000);
});

describe("a live agent's orders held before anything moves (issue 28)", () => {
  const accepts = { accept_risks: ["NO_INDEPENDENT_MARK"] };

  it("holds INSUFFICIENT_FUNDS with the executor view's top_up when its executor cannot pay one redeem: " +
    "nothing is co-signed or relayed", async () => {
    const { wallet, hc, a, rootHash } = await liveShiftAgent("/gas", accepts);
    await chain.dn.test.setBalance({ address: a.executor, value: 1_000n });
    const before = await fundsOf(wallet.address, rootHash);
    await nextTick();
    const rows = (await hc("GET", `/${a.id}/logs`)).json.rows as any[];
    const hold = rows.find((x) => x.kind === "hold");
    expect(hold, JSON.stringify(rows)).toMatchObject({
      code: "INSUFFICIENT_FUNDS",
      order: { token_in: "USDG", token_out: "SHIFT" },
      executor: a.executor,
      balance_wei: "1000",
      top_up: { to: a.executor },
    });
    expect(BigInt(hold.top_up.wei)).toBe(BigInt(hold.min_balance_wei) - 1_000n);
    // The executor view says the same.
    const view = (await hc("GET", `/${a.id}/executor`)).json;
    expect(view).toMatchObject({ enough: false, balance_wei: "1000", top_up: { to: a.executor } });
    expect(rows.filter((x) => x.kind === "trade")).toEqual([]);
    expect(await chain.dn.pub.getTransactionCount({ address: a.executor })).toBe(0);
    expect(await fundsOf(wallet.address, rootHash)).toEqual(before);
  }, 90_000);

  it("holds AI_NOT_LIVE, with no model call and nothing spent, when a live AI agent's session is no longer " +
    "active", async () => {
    const ai = {
      brain: "partner_llm",
      params: { strategy: "Buy SHIFT with USDG.", model: "stand-in/small" },
      interval_s: 300,
      ...accepts,
    };
    const { k, hc, a, sessionId } = await liveShiftAgent("/ai", ai);
    const revoked = await agentOf(api, chain.dn).post("/live/session/revoke", { session_id: sessionId }, k);
    expect(revoked.status, revoked.text).toBe(200);
    const calls = gw.calls.length;
    await nextTick();
    const rows = (await hc("GET", `/${a.id}/logs`)).json.rows as any[];
    expect(rows[0], JSON.stringify(rows)).toMatchObject({ kind: "hold", code: "AI_NOT_LIVE" });
    expect(gw.calls.length).toBe(calls);
    const spent = (await hc("GET", `/${a.id}/spend`)).json;
    expect(spent.rows[0]).toMatchObject({ status: "hold", code: "AI_NOT_LIVE", cost_usd: 0 });
    expect(spent.ai.today.calls).toBe(0);
  }, 90_000);

  it("holds MIN_OUT_FLOOR with the co-signer's signer_checks when the co-signer refuses the price: SHIFT's pool " +
    "has moved far from the owner-signed mark; the wallet's funds never move", async () => {
    const dn = chain.dn;
    const { wallet, hc, a, rootHash } = await liveShiftAgent("/price", accepts);
    // Someone buys 25,000 USDG of SHIFT: its pool's price goes to about 2.25 USDG, the signed mark stays at 1.
    const whale = privateKeyToAccount(generatePrivateKey());
    await dn.test.setBalance({ address: whale.address, value: parseEther("1") });
    const usdg = dn.token("USDG");
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: usdg,
        abi: mintableAbi,
        functionName: "mint",
        args: [whale.address, parseUnits("25000", 6)],
      }),
    );
    await approveForRouter(dn, whale, usdg);
    const pushed = await routerSwap(dn, whale, {
      poolKey: poolKeyOf(dn, "SHIFT", "USDG"),
      tokenIn: usdg,
      tokenOut: shiftOf(),
      amountIn: parseUnits("25000", 6),
      minOut: 0n,
      feeBips: 0n,
      feeRecipient: whale.address,
    });
    expect(pushed.status).toBe("success");
    // Forty minutes on: the pool's 30-minute price (the API's reference mid) is the new one, the mark
    // the owner signed at grant is not, and the co-signer prices what the wallet buys at the lower.
    // (The chain alone moves on: it runs ahead of the service's clock here, see withTwapHistory.)
    await dn.test.increaseTime({ seconds: 40 * 60 });
    await dn.test.mine({ blocks: 1 });
    await chain.ix.waitFor(await dn.pub.getBlockNumber());
    const before = await fundsOf(wallet.address, rootHash);
    await nextTick();
    const rows = (await hc("GET", `/${a.id}/logs`)).json.rows as any[];
    const hold = rows.find((x) => x.kind === "hold");
    expect(hold, JSON.stringify(rows)).toMatchObject({
      code: "MIN_OUT_FLOOR",
      refusal: "REFUSED",
      order: { token_in: "USDG", token_out: "SHIFT" },
    });
    expect(hold.signer_checks.map((c: { rule: string }) => c.rule)).toContain("SIGNED_MARK_PRICE");
    expect(rows.filter((x) => x.kind === "trade")).toEqual([]);
    expect(await fundsOf(wallet.address, rootHash)).toEqual(before);
  }, 90_000);
});
