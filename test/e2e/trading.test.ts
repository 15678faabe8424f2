import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFunctionData, keccak256, parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import type { Indexer } from "../helpers/indexer.js";
import type { Api } from "../helpers/api.js";
import { agentOf, type PlanTx } from "../helpers/agent.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";
import { serveApi } from "../helpers/api.js";
import { approveForRouter, poolKeyOf, routerSwap } from "../helpers/trades.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startAggregatorStandIn } from "../../devnet/aggregatorStandIn.js";
import { erc20Abi } from "../../abis/erc20.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";
import { launchpadAbi } from "../../abis/fixtures.js";

/** Agents end to end: sign in, prepare, sign locally, submit, receipt, me/trades from the relay watcher's outcomes. */
let dn: Devnet;
let ix: Indexer;
let api: Api;
type Account = ReturnType<typeof privateKeyToAccount>;
const fx = () =>
  dn.universe.devnet!.fixtures as Record<string, Address> & { proxyToken: Address; launchToken: Address };

let signIn: (api: Api, a: Account) => Promise<string>;
let post: ReturnType<typeof agentOf>["post"];
let get: ReturnType<typeof agentOf>["get"];
let sign: (a: Account, tx: PlanTx, nonceOffset?: number) => Promise<Hex>;

/** Sends a plan's approve steps from the wallet itself (an agent may also relay them through submit). */
async function sendSteps(a: Account, steps: any[], kind = "approve") {
  for (const s of steps.filter((x: any) => x.kind === kind))
    await dn.mined(await dn.pub.sendRawTransaction({ serializedTransaction: await sign(a, s.tx) }));
}

/** What the relay watcher recorded for a relayed hash (the app store's outcome: fee token and amount). */
const recorded = (hash: Hex) => api.app.services.ledger.outcomeByHash(hash);
const platformEth = (blockNumber: bigint) => dn.pub.getBalance({ address: api.config.feeRecipient, blockNumber });

async function waitSettled(key: string, hash: Hex) {
  await dn.mined(hash);
  await ix.waitFor(await dn.pub.getBlockNumber());
  for (let i = 0; i < 100; i++) {
    const t = (await get("/me/trades", key)).json.trades.find((x: any) => x.tx_hash === hash);
    if (t && t.status !== "pending") return t;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("trade never left pending");
}

/**
 * The price impact a quote reports for `swapIn` atoms of `tokenIn` into a full-range V4 pool, from the
 * chain's own liquidity and price (x·y = k on the virtual reserves): distance from the mid beyond
 * the pool's fee, in bps, as route rows round it.
 */
async function fullRangeImpactBps(
  pool: ReturnType<typeof poolKeyOf>,
  tokenIn: Address,
  swapIn: bigint,
): Promise<number> {
  const stateView = dn.universe.contracts.stateView;
  const [[sqrtPriceX96], liquidity] = await Promise.all([
    dn.pub.readContract({ address: stateView, abi: stateViewAbi, functionName: "getSlot0", args: [pool.id] }),
    dn.pub.readContract({ address: stateView, abi: stateViewAbi, functionName: "getLiquidity", args: [pool.id] }),
  ]);
  const sqrtP = Number(sqrtPriceX96) / 2 ** 96;
  const reserveIn =
    tokenIn.toLowerCase() === pool.currency0.toLowerCase() ? Number(liquidity) / sqrtP : Number(liquidity) * sqrtP;
  const fee = pool.fee / 1e6;
  const dx = Number(swapIn) * (1 - fee);
  const vsMidBps = Math.round(10_000 * (1 - ((1 - fee) * reserveIn) / (reserveIn + dx)));
  return vsMidBps - Math.round(pool.fee / 100);
}

async function prepare(key: string, body: Record<string, unknown>) {
  const p = await post("/live/prepare", body, key);
  expect(p.status, JSON.stringify(p.json)).toBe(200);
  return p.json;
}

let stack: Stack;
beforeAll(async () => {
  // PGlite, as npm start embeds it: the main trading path over the store a fresh machine runs.
  stack = await startStack({ store: "pglite", before: freshenMarket });
  ({ dn, ix, api } = stack);
  const agent = stack.agent;
  signIn = (_api, a) => agent.signIn(a);
  ({ post, get } = agent);
  sign = (a, tx, nonceOffset = 0) => agent.sign(a, tx, { nonceOffset });
}, 120_000);
afterAll(() => stack?.stop());

describe("live/quote", () => {
  it("ranks routes with mid, marks, gas and the fee disclosures, and never refuses for risk", async () => {
    const a = await dn.freshWallet();
    const key = await signIn(api, a);
    const q = await post(
      "/live/quote",
      { token_in: "ETH", token_out: "TSLA", notional_usd: 100, venues: ["v4", "curve", "zeroex"] },
      key,
    );
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    // ETH->TSLA has no direct pool: the route goes through USDG.
    expect(q.json.best).toMatchObject({ venue: "v4", ok: true, label: "v4 via USDG" });
    expect(q.json.best.id.split(",")).toHaveLength(2);
    expect(Number(q.json.amount_in)).toBeCloseTo((100 / 3000) * 1e18, -12);
    expect(q.json.notional_usd).toBe(100);
    expect(q.json.marks.token_in).toMatchObject({ usd: 3000, source: "oracle" });
    expect(q.json.mid.price).toBeGreaterThan(0);
    expect(BigInt(q.json.gas_price_wei)).toBeGreaterThan(0n);
    expect(q.json.eth_usd).toBe(3000);
    // An aggregator is a comparison row, unavailable on the devnet.
    expect(q.json.routes.find((r: any) => r.venue === "zeroex")).toMatchObject({ ok: false, quote_only: true });
    // TSLA is a stock token: the quote discloses the geofence refusal a prepare would give.
    expect(q.json.policy_ok).toBe(false);
    expect(q.json.policy.code).toBe("GEOFENCE");
    expect(q.json).toMatchObject({
      fee_class: "major",
      fee_bps: 25,
      fee_tier: 25,
      fee_side: "input",
      fee_token: zeroAddress,
      shield: false,
      shield_available: true,
    });
    expect(q.json.risks).toEqual([]);
    // fast: the pair's recent winner is quoted alone.
    const f = await post("/live/quote", { token_in: "ETH", token_out: "TSLA", notional_usd: 100, fast: true }, key);
    expect(f.json.fast).toEqual({ used_recent_winner: true });
    expect(f.json.routes.map((r: any) => r.id)).toEqual([q.json.best.id]);
  });

  it("quotes configured aggregators for comparison (never built), and marks an unavailable one", async () => {
    const zeroex = await startAggregatorStandIn();
    const oneinch = await startAggregatorStandIn();
    zeroex.price(2_990n * 10n ** 6n, 10n ** 18n); // 2,990 USDG per ETH
    oneinch.down();
    const withAggs = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
      config: { aggregatorUrls: { zeroex: zeroex.url, oneinch: oneinch.url } },
    });
    try {
      const a = await dn.freshWallet();
      const key = await agentOf(withAggs, dn).signIn(a);
      const q = await withAggs.call(
        "POST",
        "/api/v1/live/quote",
        {
          token_in: "ETH",
          token_out: "USDG",
          amount_in: parseEther("1").toString(),
          venues: ["v4", "zeroex", "oneinch", "odos"],
        },
        { authorization: `Bearer ${key}` },
      );
      expect(q.status, JSON.stringify(q.json)).toBe(200);
      const rows = Object.fromEntries(q.json.routes.map((r: any) => [r.venue, r]));
      expect(rows.zeroex).toMatchObject({ ok: true, quote_only: true, amount_out: (2_990n * 10n ** 6n).toString() });
      expect(rows.zeroex.vs_mid_bps).toBe(-33); // 2,990 against the pool's 3,000
      expect(rows.oneinch).toMatchObject({ ok: false, quote_only: true });
      expect(rows.odos).toMatchObject({ ok: false, error: "not configured on this server" });
      expect(q.json.best.venue).toBe("v4");
      const p = await withAggs.call(
        "POST",
        "/api/v1/live/prepare",
        {
          wallet: a.address,
          token_in: "ETH",
          token_out: "USDG",
          amount_in: parseEther("1").toString(),
          route_id: "zeroex",
        },
        { authorization: `Bearer ${key}` },
      );
      expect(p.status).toBe(422);
      expect(p.json.error.code).toBe("QUOTE_ONLY");
    } finally {
      await withAggs.close();
      await zeroex.close();
      await oneinch.close();
    }
  });

  it("quotes an address-named token with impact and guard, and discloses its severe risks", async () => {
    const a = await dn.freshWallet();
    const key = await signIn(api, a);
    const q = await post("/live/quote", { token_in: "USDG", token_out: fx().proxyToken, notional_usd: 100 }, key);
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    // $100 (less the 50 bps input fee) into the SHIFT pool's 50,000 USDG side: about 20 bps.
    const expected = await fullRangeImpactBps(
      poolKeyOf(dn, "USDG", "SHIFT"),
      dn.token("USDG"),
      (BigInt(q.json.amount_in) * 9_950n) / 10_000n,
    );
    expect(expected).toBeGreaterThan(10);
    expect(
      Math.abs(q.json.best.impact_bps - expected),
      `impact ${q.json.best.impact_bps}, pool depth gives ${expected}`,
    ).toBeLessThanOrEqual(1);
    expect(q.json.best.guard_bps).toBe(300);
    expect(q.json.fee_class).toBe("other");
    expect(q.json.fee_bps).toBe(50);
    expect(q.json.risks.map((r: any) => r.code)).toContain("NO_INDEPENDENT_MARK");
    expect(q.json.policy).toMatchObject({ ok: false, code: "RISK_NOT_ACCEPTED", unaccepted: ["NO_INDEPENDENT_MARK"] });
  });
});

describe("trades through the Universal Router", () => {
  it("ETH -> USDG: input-side fee, relayed, mined with the actual amount out and the fee indexed", async () => {
    const a = await dn.freshWallet(parseEther("10"));
    const key = await signIn(api, a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.1").toString(),
    });
    expect(p).toMatchObject({
      ready: true,
      execution: "router",
      fee_class: "major",
      fee_side: "input",
      fee_token: zeroAddress,
      policy_ok: true,
    });
    expect(p.fee).toMatchObject({
      bps: 25,
      side: "input",
      command: "TRANSFER",
      recipient: api.config.feeRecipient,
      amount: ((parseEther("0.1") * 25n) / 10_000n).toString(),
    });
    expect(p.steps.map((s: any) => s.kind)).toEqual(["swap"]);
    expect(p.steps[0].decoded.commands).toBe("TRANSFER,V4_SWAP,SWEEP");
    expect(p.simulation).toMatchObject({ ok: true, funded_by_overrides: false });
    expect(BigInt(p.simulation.amount_out)).toBe(BigInt(p.amount_out_expected));
    expect(p.simulation.fee_transfer.amount).toBe(p.fee.amount);
    expect(BigInt(p.amount_out_min)).toBe((BigInt(p.amount_out_expected) * 9950n) / 10_000n);
    expect(p.deadline).toBeGreaterThan(Math.floor(Date.now() / 1000));
    expect(p.timings.total_ms).toBeGreaterThan(0);
    const before = await dn.pub.readContract({
      address: dn.token("USDG"),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [a.address],
    });
    const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json.as_built).toBe(true);
    const t = await waitSettled(key, s.json.tx_hash);
    const after = await dn.pub.readContract({
      address: dn.token("USDG"),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [a.address],
    });
    expect(t).toMatchObject({
      status: "mined",
      path: "agent",
      amount_out_kind: "actual",
      amount_in: parseEther("0.1").toString(),
      amount_out: (after - before).toString(),
    });
    expect(t.token_in).toMatchObject({ token: "ETH", symbol: "ETH", decimals: 18 });
    expect(t.token_out).toMatchObject({ token: "USDG", decimals: 6 });
    const receipt = await dn.pub.getTransactionReceipt({ hash: s.json.tx_hash });
    expect(t.block).toBe(Number(receipt.blockNumber));
    // The ETH fee as recorded is what reached the platform wallet in that block.
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      feeToken: zeroAddress,
      feeAmount: p.fee.amount,
      amountIn: parseEther("0.1").toString(),
    });
    expect((await platformEth(receipt.blockNumber)) - (await platformEth(receipt.blockNumber - 1n))).toBe(
      BigInt(p.fee.amount),
    );
  });

  it("USDG -> ETH with a Permit2 signature: approve, sign the permit, second call, relay", async () => {
    const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("1000", 6)]]);
    const key = await signIn(api, a);
    const body = { wallet: a.address, token_in: "USDG", token_out: "ETH", amount_in: parseUnits("200", 6).toString() };
    const first = await prepare(key, body);
    expect(first.ready).toBe(false);
    expect(first.simulation).toBeNull();
    expect(first.steps.map((s: any) => s.kind)).toEqual(["approve", "sign_permit"]);
    // Budget mode: the approval covers the trade or $25, whichever is more.
    expect(first.approval).toEqual({
      mode: "budget",
      budget: 25,
      allowance_left: "0",
      reason: "no allowance yet",
      left_after_trade: "0",
    });
    expect(decodeFunctionData({ abi: erc20Abi, data: first.steps[0].tx.data }).args).toEqual([
      PERMIT2_ADDRESS,
      parseUnits("200", 6),
    ]);
    expect(first.fee_side).toBe("input");
    expect(first.fee_token).toBe(dn.token("USDG"));
    const typed = first.permit.typed_data;
    expect(typed.message).toMatchObject({
      spender: dn.universe.contracts.universalRouter,
      details: { token: dn.token("USDG"), amount: parseUnits("200", 6).toString() },
    });
    await sendSteps(a, first.steps);
    const signature = await a.signTypedData({
      domain: typed.domain,
      types: typed.types,
      primaryType: "PermitSingle",
      message: {
        details: { ...typed.message.details, amount: BigInt(typed.message.details.amount) },
        spender: typed.message.spender,
        sigDeadline: BigInt(typed.message.sigDeadline),
      },
    });
    // A signature by someone else is refused.
    const other = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
    const forged = await other.signTypedData({
      domain: typed.domain,
      types: typed.types,
      primaryType: "PermitSingle",
      message: {
        details: { ...typed.message.details, amount: BigInt(typed.message.details.amount) },
        spender: typed.message.spender,
        sigDeadline: BigInt(typed.message.sigDeadline),
      },
    });
    const bad = await post("/live/prepare", { ...body, permit_signature: forged, permit_now: first.permit_now }, key);
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe("BAD_SIGNATURE");
    const second = await prepare(key, { ...body, permit_signature: signature, permit_now: first.permit_now });
    expect(second.ready).toBe(true);
    expect(second.steps.map((s: any) => s.kind)).toEqual(["swap"]);
    expect(second.steps[0].decoded.commands).toBe("PERMIT2_PERMIT,PERMIT2_TRANSFER_FROM,TRANSFER,V4_SWAP,SWEEP");
    expect(second.simulation.ok).toBe(true);
    const ethBefore = await dn.pub.getBalance({ address: a.address });
    const s = await post("/live/submit", { raw_tx: await sign(a, second.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual" });
    const receipt = await dn.pub.getTransactionReceipt({ hash: s.json.tx_hash });
    const ethAfter = await dn.pub.getBalance({ address: a.address });
    expect(BigInt(t.amount_out)).toBe(ethAfter - ethBefore + receipt.gasUsed * receipt.effectiveGasPrice);
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      feeToken: dn.token("USDG"),
      feeAmount: second.fee.amount,
      amountIn: parseUnits("200", 6).toString(),
    });
  });

  it(
    "exact approval leaves nothing behind; a 30-day permit by transaction with a budget leaves what revoke " + "clears",
    async () => {
      const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("100", 6)]]);
      const key = await signIn(api, a);
      const fresh = await post("/live/revoke", { wallet: a.address }, key);
      expect(fresh.json).toMatchObject({ nothing_to_revoke: true, ready: false, steps: [], simulation: null });
      const exact = await prepare(key, {
        wallet: a.address,
        token_in: "USDG",
        token_out: "ETH",
        amount_in: parseUnits("20", 6).toString(),
        approval_mode: "exact",
        permit_mode: "transaction",
      });
      expect(decodeFunctionData({ abi: erc20Abi, data: exact.steps[0].tx.data }).args[1]).toBe(parseUnits("20", 6));
      expect(exact.approval.left_after_trade).toBe("0");
      const body = {
        wallet: a.address,
        token_in: "USDG",
        token_out: "ETH",
        amount_in: parseUnits("50", 6).toString(),
        approval_budget_usd: 100,
        permit_scope: "30d",
        permit_mode: "transaction",
      };
      const p = await prepare(key, body);
      expect(p.approval).toMatchObject({
        mode: "budget",
        budget: 100,
        left_after_trade: parseUnits("50", 6).toString(),
      });
      expect(decodeFunctionData({ abi: permit2Abi, data: p.steps[1].tx.data }).args[2]).toBe(parseUnits("100", 6));
      expect(p.ready).toBe(true);
      expect(p.steps.map((s: any) => s.kind)).toEqual(["approve", "approve", "swap"]);
      expect(p.steps[1].tx.to).toBe(PERMIT2_ADDRESS);
      // The simulation runs the approvals first, from the wallet's real balances.
      expect(p.simulation).toMatchObject({ ok: true, funded_by_overrides: false });
      await sendSteps(a, p.steps);
      const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
      expect(s.status, JSON.stringify(s.json)).toBe(200);
      expect((await waitSettled(key, s.json.tx_hash)).status).toBe("mined");
      // The router now holds a live permit allowance: revoke answers approve(0) + lockdown.
      const r = await post("/live/revoke", { wallet: a.address }, key);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.nothing_to_revoke).toBe(false);
      expect(r.json.steps.map((x: any) => x.decoded.function)).toEqual(["approve", "lockdown"]);
      expect(r.json.before[0]).toMatchObject({
        allowance: parseUnits("50", 6).toString(),
        router_permit: { amount: parseUnits("50", 6).toString(), live: true },
      });
      expect(r.json.simulation.ok).toBe(true);
      expect(r.json.simulation.after[0]).toMatchObject({ allowance: "0", router_permit_amount: "0" });
      // Sent for real, nothing remains.
      for (const step of r.json.steps)
        await dn.mined(await dn.pub.sendRawTransaction({ serializedTransaction: await sign(a, step.tx) }));
      expect((await post("/live/revoke", { wallet: a.address }, key)).json.nothing_to_revoke).toBe(true);
    },
  );

  it("a stock token needs owner_attests_non_us; with it, USDG -> TSLA is mined", async () => {
    const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("500", 6)]]);
    const key = await signIn(api, a);
    const body = {
      wallet: a.address,
      token_in: "USDG",
      token_out: "TSLA",
      amount_in: parseUnits("100", 6).toString(),
      permit_mode: "transaction",
    };
    const refused = await post("/live/prepare", body, key);
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe("GEOFENCE");
    const p = await prepare(key, { ...body, owner_attests_non_us: true });
    expect(p.checks).toEqual(expect.arrayContaining(["GEOFENCE", "STOCK_PAUSED", "WALLET_BLOCKED", "TOKEN_TIER"]));
    expect(p.fee_class).toBe("major");
    await sendSteps(a, p.steps);
    const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual" });
    expect(BigInt(t.amount_out)).toBeGreaterThanOrEqual(BigInt(p.amount_out_min));
    expect(t.amount_out).toBe(
      (
        await dn.pub.readContract({
          address: dn.token("TSLA"),
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [a.address],
        })
      ).toString(),
    );
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      feeToken: dn.token("USDG"),
      feeAmount: p.fee.amount,
    });
  });

  it("an address-named token (other class, 50 bps) with its severe risk accepted", async () => {
    const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("500", 6)]]);
    const key = await signIn(api, a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "USDG",
      token_out: fx().proxyToken,
      amount_in: parseUnits("40", 6).toString(),
      permit_mode: "transaction",
      accept_risks: ["NO_INDEPENDENT_MARK"],
    });
    expect(p).toMatchObject({
      fee_class: "other",
      fee_bps: 50,
      fee_side: "input",
      accepted_risks: ["NO_INDEPENDENT_MARK"],
    });
    const expected = await fullRangeImpactBps(
      poolKeyOf(dn, "USDG", "SHIFT"),
      dn.token("USDG"),
      (parseUnits("40", 6) * 9_950n) / 10_000n,
    );
    expect(expected).toBeGreaterThan(5);
    expect(
      Math.abs(p.route.impact_bps - expected),
      `impact ${p.route.impact_bps}, pool depth gives ${expected}`,
    ).toBeLessThanOrEqual(1);
    expect(p.tokens.token_out).toMatchObject({ token: fx().proxyToken.toLowerCase(), symbol: "SHIFT" });
    await sendSteps(a, p.steps);
    const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual" });
    expect(t.token_out.address.toLowerCase()).toBe(fx().proxyToken.toLowerCase());
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      feeToken: dn.token("USDG"),
      feeAmount: p.fee.amount,
    });
  });
});

describe("launchpad curve buys", () => {
  it("two_step: the fee transfer goes first, then the curve buy, relayed in order", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await signIn(api, a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: fx().launchToken,
      amount_in: parseEther("0.05").toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
    });
    expect(p).toMatchObject({ execution: "curve", ready: true, fee_side: "input", fee_token: zeroAddress });
    expect(p.steps.map((s: any) => s.kind)).toEqual(["fee_transfer", "swap"]);
    expect(p.fee).toMatchObject({ command: "FEE_TRANSFER", amount: ((parseEther("0.05") * 50n) / 10_000n).toString() });
    expect(p.simulation.ok).toBe(true);
    expect(p.simulation.fee_transfer.amount).toBe(p.fee.amount);
    // The swap alone is refused: its fee must go first.
    const swapRaw = await sign(a, p.steps[1].tx, 1);
    const alone = await post("/live/submit", { raw_tx: swapRaw }, key);
    expect(alone.status).toBe(422);
    expect(alone.json.error).toMatchObject({ code: "FEE_FIRST", sent: [] });
    const s = await post("/live/submit", { raw_txs: [await sign(a, p.steps[0].tx), swapRaw] }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json.tx_hashes).toHaveLength(2);
    expect(s.json.fee_first).toBe(true);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual" });
    expect(t.amount_out).toBe(
      (
        await dn.pub.readContract({
          address: fx().launchToken,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [a.address],
        })
      ).toString(),
    );
    // The fee went first in its own transaction: recorded as paid, and it is what reached the platform wallet.
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({ feeToken: zeroAddress, feeAmount: p.fee.amount });
    const feeReceipt = await dn.pub.getTransactionReceipt({ hash: s.json.tx_hashes[0] });
    expect((await platformEth(feeReceipt.blockNumber)) - (await platformEth(feeReceipt.blockNumber - 1n))).toBe(
      BigInt(p.fee.amount),
    );
  });

  it("batch: a 7702-delegated wallet pays fee and buy in one transaction", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await signIn(api, a);
    const body = {
      wallet: a.address,
      token_in: "ETH",
      token_out: fx().launchToken,
      amount_in: parseEther("0.05").toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
      curve_fee_mode: "batch",
    };
    const refused = await post("/live/prepare", body, key);
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe("FEE_MODE");
    // Upgrade the wallet to the pinned stateless delegator (a type-4 transaction carried by anyone).
    const auth = await a.signAuthorization({
      contractAddress: dn.universe.contracts.statelessDelegator,
      chainId: 4663,
      nonce: await dn.pub.getTransactionCount({ address: a.address }),
    });
    const carrier = await dn.freshWallet(parseEther("1"));
    await dn.mined(
      await dn.walletFor(carrier).sendTransaction({ to: a.address, data: "0x", authorizationList: [auth] }),
    );
    const p = await prepare(key, body);
    expect(p).toMatchObject({ execution: "batch", ready: true });
    expect(p.steps.map((s: any) => s.kind)).toEqual(["swap"]);
    expect(p.tx.to).toBe(a.address);
    expect(p.wallet_state.delegated).toBe(true);
    expect(p.simulation.fee_transfer.amount).toBe(p.fee.amount);
    const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual" });
    expect(BigInt(t.amount_out)).toBeGreaterThan(0n);
    expect(t.amount_out).toBe(
      (
        await dn.pub.readContract({
          address: fx().launchToken,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [a.address],
        })
      ).toString(),
    );
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      feeToken: zeroAddress,
      feeAmount: p.fee.amount,
      amountIn: parseEther("0.05").toString(),
    });
  });
});

describe("attack: a curve buy relayed without its own fee (issue 25 §1)", () => {
  const curveBody = (a: Account) => ({
    wallet: a.address,
    token_in: "ETH",
    token_out: fx().launchToken,
    amount_in: parseEther("0.05").toString(),
    accept_risks: ["NO_INDEPENDENT_MARK"],
  });
  const held = (a: Account) =>
    dn.pub.readContract({ address: fx().launchToken, abi: erc20Abi, functionName: "balanceOf", args: [a.address] });
  const sendRaw = async (raw: Hex) =>
    (await dn.mined(await dn.pub.sendRawTransaction({ serializedTransaction: raw }))).transactionHash;

  /** The swap was refused FEE_FIRST, never reached the chain, and no trade of it is listed. */
  async function refused(a: Account, key: string, r: { status: number; json: any }, swapRaw: Hex, before: bigint) {
    expect(r.status, JSON.stringify(r.json)).toBe(422);
    expect(r.json.error.code).toBe("FEE_FIRST");
    expect(await held(a)).toBe(before);
    expect(await dn.pub.getTransaction({ hash: keccak256(swapRaw) }).catch(() => null)).toBeNull();
    expect((await get("/me/trades?refused=1", key)).json.trades.map((t: any) => t.tx_hash)).not.toContain(
      keccak256(swapRaw),
    );
  }

  it(
    "one mined fee pays for one plan: two instances racing on it relay one swap; a third plan is " + "refused",
    async () => {
      const a = await dn.freshWallet(parseEther("5"));
      const key = await signIn(api, a);
      // Three plans of the same amount (their swaps differ by slippage): each one's fee transfer is the same
      // transaction shape.
      const [p1, p2, p3] = [
        await prepare(key, { ...curveBody(a), slippage_bps: 50 }),
        await prepare(key, { ...curveBody(a), slippage_bps: 60 }),
        await prepare(key, { ...curveBody(a), slippage_bps: 70 }),
      ];
      expect(new Set([p1, p2, p3].map((p: any) => JSON.stringify(p.steps[0].tx))).size).toBe(1);
      expect(new Set([p1, p2, p3].map((p: any) => p.steps[1].tx.data)).size).toBe(3);
      const fee = await sendRaw(await sign(a, p1.steps[0].tx));
      const other = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: ix.liveReads().reads,
        limiter: new RateLimiter(Date.now, 10_000, false),
      });
      try {
        const [s1, s2] = [await sign(a, p1.steps[1].tx), await sign(a, p2.steps[1].tx)];
        const both = await Promise.all([
          post("/live/submit", { raw_tx: s1, fee_tx_hash: fee }, key),
          other.call(
            "POST",
            "/api/v1/live/submit",
            { raw_tx: s2, fee_tx_hash: fee },
            { authorization: `Bearer ${key}` },
          ),
        ]);
        expect(both.map((r) => r.status).sort(), JSON.stringify(both.map((r) => r.json))).toEqual([200, 422]);
        const won = both.find((r) => r.status === 200)!;
        await waitSettled(key, won.json.tx_hash);
        const after = await held(a);
        expect(after).toBeGreaterThan(0n);
        await refused(a, key, both.find((r) => r.status === 422)!, both[0].status === 422 ? s1 : s2, after);
        const s3 = await sign(a, p3.steps[1].tx);
        await refused(a, key, await post("/live/submit", { raw_tx: s3, fee_tx_hash: fee }, key), s3, after);
      } finally {
        await other.close();
      }
    },
  );

  it(
    "a pending fee (a nonce that never comes), a reverted fee and a fee mined before the plan pay for " + "nothing",
    async () => {
      const a = await dn.freshWallet(parseEther("5"));
      const key = await signIn(api, a);
      // Mined before the plan was built: the right value from the wallet to the recipient.
      const early = await sendRaw(
        await sign(a, {
          to: api.config.feeRecipient,
          data: "0x",
          value: ((parseEther("0.05") * 50n) / 10_000n).toString(),
          chain_id: 4663,
        }),
      );
      const p = await prepare(key, curveBody(a));
      const swap = async () => sign(a, p.steps[1].tx);
      let raw = await swap();
      await refused(a, key, await post("/live/submit", { raw_tx: raw, fee_tx_hash: early }, key), raw, 0n);
      // Pending for ever: signed 1,000 nonces ahead, the node holds it unmined.
      const pending = await dn.pub.sendRawTransaction({ serializedTransaction: await sign(a, p.steps[0].tx, 1_000) });
      raw = await swap();
      await refused(a, key, await post("/live/submit", { raw_tx: raw, fee_tx_hash: pending }, key), raw, 0n);
      // Reverted: the recipient refuses ETH for one block (its code swapped for a bare REVERT).
      const code = (await dn.pub.getCode({ address: api.config.feeRecipient })) ?? "0x";
      await dn.test.setCode({ address: api.config.feeRecipient, bytecode: "0x60006000fd" });
      let reverted: Hex;
      try {
        reverted = await dn.pub.sendRawTransaction({ serializedTransaction: await sign(a, p.steps[0].tx) });
        expect((await dn.mined(reverted)).status).toBe("reverted");
      } finally {
        await dn.test.setCode({ address: api.config.feeRecipient, bytecode: code });
      }
      raw = await swap();
      await refused(a, key, await post("/live/submit", { raw_tx: raw, fee_tx_hash: reverted }, key), raw, 0n);
    },
  );

  it(
    "raw_txs: a fee at a nonce that never comes, or under the base fee, is refused before anything is " + "sent",
    async () => {
      const a = await dn.freshWallet(parseEther("5"));
      const key = await signIn(api, a);
      const p = await prepare(key, curveBody(a));
      const far = await sign(a, p.steps[0].tx, 1_000);
      let swap = await sign(a, p.steps[1].tx);
      const r1 = await post("/live/submit", { raw_txs: [far, swap] }, key);
      await refused(a, key, r1, swap, 0n);
      expect(r1.json.error.sent).toEqual([]);
      const nonce = await dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" });
      const baseFee = (await dn.pub.getBlock()).baseFeePerGas!;
      const fee = p.steps[0].tx;
      const cheap = await a.signTransaction({
        chainId: 4663,
        to: fee.to,
        data: fee.data,
        value: BigInt(fee.value),
        nonce,
        gas: 100_000n,
        maxFeePerGas: baseFee - 1n,
        maxPriorityFeePerGas: 0n,
      });
      swap = await sign(a, p.steps[1].tx, 1);
      const r2 = await post("/live/submit", { raw_txs: [cheap, swap] }, key);
      await refused(a, key, r2, swap, 0n);
      expect(r2.json.error.sent).toEqual([]);
    },
  );
});

describe("a trade the chain reverts", () => {
  it("is listed as reverted with nothing out when the price moved past its minimum", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await signIn(api, a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.5").toString(),
    });
    // A whale sells ETH first: the plan's 50 bps minimum can no longer be met.
    const whale = await dn.freshWallet(parseEther("200"));
    await routerSwap(dn, whale, {
      poolKey: poolKeyOf(dn, "ETH", "USDG"),
      tokenIn: zeroAddress,
      tokenOut: dn.token("USDG"),
      amountIn: parseEther("100"),
      minOut: 0n,
      feeBips: 0n,
      feeRecipient: whale.address,
    });
    try {
      const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
      expect(s.status, JSON.stringify(s.json)).toBe(200);
      const t = await waitSettled(key, s.json.tx_hash);
      expect(t).toMatchObject({
        status: "reverted",
        amount_out: null,
        amount_out_kind: null,
        amount_out_min: p.amount_out_min,
      });
    } finally {
      // Put the pool back for the tests that follow, whatever happened above.
      const usdg = await dn.pub.readContract({
        address: dn.token("USDG"),
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [whale.address],
      });
      await approveForRouter(dn, whale, dn.token("USDG"));
      await routerSwap(dn, whale, {
        poolKey: poolKeyOf(dn, "ETH", "USDG"),
        tokenIn: dn.token("USDG"),
        tokenOut: zeroAddress,
        amountIn: usdg,
        minOut: 0n,
        feeBips: 0n,
        feeRecipient: whale.address,
      });
      // Mids come from the indexer: let it see the pool back where it was.
      await ix.waitFor(await dn.pub.getBlockNumber());
    }
  });
});

describe("fee schedule 2: the volume tier", () => {
  it(
    "a wallet past $100,000 of major volume through the service pays 20 bps; build answers without " + "simulation",
    async () => {
      const a = await dn.freshWallet(parseEther("200"), [[dn.token("USDG"), parseUnits("200000", 6)]]);
      await approveForRouter(dn, a, dn.token("USDG"));
      const key = await signIn(api, a);
      const first = await prepare(key, { wallet: a.address, token_in: "ETH", token_out: "USDG", notional_usd: 9_500 });
      expect(first).toMatchObject({ fee_tier: 25, fee_bps: 25 });
      // Eleven trades of $9,500, alternating directions so the pool stays near its oracle.
      const hashes: Hex[] = [];
      for (let i = 0; i < 11; i++) {
        const [tin, tout] = i % 2 === 0 ? ["ETH", "USDG"] : ["USDG", "ETH"];
        const p = await prepare(key, { wallet: a.address, token_in: tin, token_out: tout, notional_usd: 9_500 });
        const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
        expect(s.status, JSON.stringify(s.json)).toBe(200);
        await dn.mined(s.json.tx_hash);
        hashes.push(s.json.tx_hash);
      }
      // Counted once the relay watcher has seen them mined (me/trades says so).
      for (const h of hashes) expect((await waitSettled(key, h)).status).toBe("mined");
      // A fresh instance (volume is cached 60 s per wallet per instance) sees the new tier.
      const other = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: ix.liveReads().reads,
        limiter: new RateLimiter(Date.now, 10_000, false),
      });
      try {
        const r = await other.call(
          "POST",
          "/api/v1/live/build",
          { wallet: a.address, token_in: "ETH", token_out: "USDG", notional_usd: 100 },
          { authorization: `Bearer ${key}` },
        );
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        expect(r.json).toMatchObject({ fee_class: "major", fee_tier: 20, fee_bps: 20 });
        expect("simulation" in r.json).toBe(false);
        // A quote for the same key carries the same tier; Shield adds 10 on top.
        const shielded = await other.call(
          "POST",
          "/api/v1/live/quote",
          { token_in: "ETH", token_out: "USDG", notional_usd: 100, shield: true },
          { authorization: `Bearer ${key}` },
        );
        expect(shielded.json).toMatchObject({ fee_tier: 20, fee_bps: 30 });
      } finally {
        await other.close();
      }
    },
  );
});

describe("launchpad curve sells", () => {
  it("two_step with an approval: raw_txs [approve, fee_transfer, swap], fee paid first in ETH", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await signIn(api, a);
    // Buy some first (two_step), then sell half.
    const buy = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: fx().launchToken,
      amount_in: parseEther("0.1").toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
    });
    const b = await post(
      "/live/submit",
      { raw_txs: [await sign(a, buy.steps[0].tx), await sign(a, buy.steps[1].tx, 1)] },
      key,
    );
    await waitSettled(key, b.json.tx_hash);
    const held = await dn.pub.readContract({
      address: fx().launchToken,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [a.address],
    });
    const p = await prepare(key, {
      wallet: a.address,
      token_in: fx().launchToken,
      token_out: "ETH",
      amount_in: (held / 2n).toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
    });
    expect(p).toMatchObject({ execution: "curve", fee_side: "output", fee_token: zeroAddress });
    expect(p.steps.map((s: any) => s.kind)).toEqual(["approve", "fee_transfer", "swap"]);
    expect(p.simulation.ok).toBe(true);
    const raws = [await sign(a, p.steps[0].tx), await sign(a, p.steps[1].tx, 1), await sign(a, p.steps[2].tx, 2)];
    const s = await post("/live/submit", { raw_txs: raws }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json.tx_hashes).toHaveLength(3);
    const t = await waitSettled(key, s.json.tx_hash);
    expect(t).toMatchObject({ status: "mined", amount_out_kind: "actual", token_out: { token: "ETH" } });
    expect(BigInt(t.amount_out)).toBeGreaterThanOrEqual(BigInt(p.amount_out_min));

    // The wallet's own floor binds on chain too: the curve's minimum covers it plus the fee the
    // wallet pays first (the curve pays the gross).
    const rest = await dn.pub.readContract({
      address: fx().launchToken,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [a.address],
    });
    const q = await prepare(key, {
      wallet: a.address,
      token_in: fx().launchToken,
      token_out: "ETH",
      amount_in: rest.toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
    });
    const floor = BigInt(q.amount_out_expected) - 1n;
    const f = await prepare(key, {
      wallet: a.address,
      token_in: fx().launchToken,
      token_out: "ETH",
      amount_in: rest.toString(),
      accept_risks: ["NO_INDEPENDENT_MARK"],
      min_amount_out: floor.toString(),
    });
    const sell = decodeFunctionData({ abi: launchpadAbi, data: f.steps.find((x: any) => x.kind === "swap").tx.data });
    expect(sell.functionName).toBe("sell");
    expect(sell.args[2]).toBe(floor + BigInt(f.fee.amount));
  });
});

describe("live/simulate", () => {
  it(
    "a real wallet without a router permit simulates its plan with the permit by transaction (nothing to sign " +
      "yet)",
    async () => {
      const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("500", 6)]]);
      const key = await signIn(api, a);
      const r = await post(
        "/live/simulate",
        { wallet: a.address, token_in: "USDG", token_out: "ETH", notional_usd: 50, fund: false },
        key,
      );
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json).toMatchObject({ ok: true, synthetic: false, funded_by_overrides: false });
      expect(r.json.transactions.map((t: any) => t.kind)).toEqual(["approve", "approve", "swap"]);
      expect(r.json.transactions.every((t: any) => t.gas > 0)).toBe(true);
      expect(BigInt(r.json.amount_out)).toBeGreaterThanOrEqual(BigInt(r.json.amount_out_min));
    },
  );

  it("a synthetic funded wallet discloses only; a real wallet with fund false uses its exact balances", async () => {
    const a = await dn.freshWallet(parseEther("1"));
    const key = await signIn(api, a);
    const syn = await post("/live/simulate", { token_in: "USDG", token_out: "ETH", notional_usd: 50 }, key);
    expect(syn.status, JSON.stringify(syn.json)).toBe(200);
    expect(syn.json).toMatchObject({
      ok: true,
      synthetic: true,
      funded_by_overrides: true,
      fee_bps: 25,
      fee_side: "input",
    });
    expect(syn.json.block.number).toBeGreaterThan(0);
    expect(syn.json.transactions.map((t: any) => t.kind)).toEqual(["approve", "approve", "swap"]);
    expect(BigInt(syn.json.fee_paid)).toBeGreaterThan(0n);
    // The wallet holds no USDG: fund false fails honestly, fund true lends it.
    const real = await post(
      "/live/simulate",
      { wallet: a.address, token_in: "USDG", token_out: "ETH", notional_usd: 50, fund: false, mode: "first" },
      key,
    );
    expect(real.status).toBe(200);
    expect(real.json).toMatchObject({ ok: false, synthetic: false, funded_by_overrides: false });
    const lent = await post(
      "/live/simulate",
      { wallet: a.address, token_in: "USDG", token_out: "ETH", notional_usd: 50, fund: true, mode: "first" },
      key,
    );
    expect(lent.json).toMatchObject({ ok: true, funded_by_overrides: true });
    expect(BigInt(lent.json.amount_out)).toBeGreaterThan(0n);
  });
});

describe("WETH trades as ETH", () => {
  it("the router unwraps WETH in and wraps WETH out (synthetic simulations on the real router)", async () => {
    const a = await dn.freshWallet();
    const key = await signIn(api, a);
    for (const [tin, tout] of [
      ["WETH", "USDG"],
      ["USDG", "WETH"],
      ["WETH", "TSLA"],
    ]) {
      const r = await post("/live/simulate", { token_in: tin, token_out: tout, notional_usd: 200 }, key);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json, `${tin}->${tout}: ${r.json.error}`).toMatchObject({ ok: true, synthetic: true });
      expect(BigInt(r.json.amount_out)).toBeGreaterThanOrEqual(BigInt(r.json.amount_out_min));
    }
    const p = await post("/live/quote", { token_in: "WETH", token_out: "ETH", notional_usd: 10 }, key);
    expect([p.status, p.json.error.code]).toEqual([422, "NO_ROUTE"]);
  });
});

describe("GET /me/trades", () => {
  it("lists newest first, pages by before, and shows refused calls only with refused=1", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await signIn(api, a);
    const hashes: Hex[] = [];
    for (let i = 0; i < 3; i++) {
      const p = await prepare(key, {
        wallet: a.address,
        token_in: "ETH",
        token_out: "USDG",
        amount_in: parseEther("0.01").toString(),
      });
      const s = await post("/live/submit", { raw_tx: await sign(a, p.tx) }, key);
      hashes.push(s.json.tx_hash);
      await dn.mined(s.json.tx_hash);
    }
    const refused = await post(
      "/live/prepare",
      { wallet: a.address, token_in: "ETH", token_out: "USDG", notional_usd: 50_000 },
      key,
    );
    expect(refused.json.error.code).toBe("MAX_NOTIONAL");
    const page1 = await get("/me/trades?limit=2", key);
    expect(page1.status).toBe(200);
    expect(page1.json.wallet).toBe(a.address.toLowerCase());
    expect(page1.json.trades.map((t: any) => t.tx_hash)).toEqual([hashes[2], hashes[1]]);
    expect(page1.json.refused_included).toBe(false);
    const page2 = await get(`/me/trades?limit=2&before=${page1.json.next_before}`, key);
    expect(page2.json.trades.map((t: any) => t.tx_hash)).toEqual([hashes[0]]);
    expect(page2.json.next_before).toBeNull();
    const all = await get("/me/trades?refused=1", key);
    expect(all.json.trades[0]).toMatchObject({
      status: "refused",
      code: "MAX_NOTIONAL",
      tx_hash: null,
      token_in: { token: "ETH", address: zeroAddress, decimals: 18 },
      token_out: { token: "USDG", symbol: "USDG", decimals: 6 },
    });
    expect(all.json.refused_included).toBe(true);
    for (const bad of ["limit=0", "limit=101", "before=x", "refused=2", "wallet=0x1"])
      expect((await get(`/me/trades?${bad}`, key)).status, bad).toBe(400);
  });
});
