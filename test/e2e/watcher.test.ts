import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keccak256, parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf, type PlanTx } from "../helpers/agent.js";
import { freshenMarket, startIndexedDevnet } from "../helpers/stack.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { erc20Abi } from "../../abis/erc20.js";
import { minedTrades } from "../../api/league/prize.js";

/**
 * The relay watcher: trade outcomes of what the service relayed, read from receipts alone. The API
 * talks to the chain through a proxy that refuses debug_traceTransaction; every ETH amount is
 * checked against the chain's balances before and after.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
let dn: Devnet;
let api: Api;
let agent: ReturnType<typeof agentOf>;
let proxy: Awaited<ReturnType<typeof startRpcProxy>>;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let store: Awaited<ReturnType<typeof freshStore>>;

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: freshenMarket });
  dn = chain.dn;
  proxy = await startRpcProxy(dn.anvil.rpcUrl, { refuse: ["debug_traceTransaction"] });
  store = await freshStore();
  api = await serveApi({
    rpcUrl: proxy.url,
    db: store.db,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(Date.now, 10_000, false),
  });
  agent = agentOf(api, dn);
}, 120_000);
afterAll(async () => {
  await api?.app.stop();
  await api?.close();
  await proxy?.close();
  await store?.drop();
  await chain?.stop();
});

const fx = () => dn.universe.devnet!.fixtures as Record<string, Address> & { launchToken: Address };
const platform = () => api.config.feeRecipient;
const recorded = (hash: Hex) => api.app.services.ledger.outcomeByHash(hash);
const balance = (token: Address, owner: Address, blockNumber: bigint) =>
  token === zeroAddress
    ? dn.pub.getBalance({ address: owner, blockNumber })
    : dn.pub.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner], blockNumber });
/**
 * How much `owner`'s balance of `token` changed over the block holding `hash` (each transaction mines its own block).
 */
async function deltaIn(hash: Hex, token: Address, owner: Address) {
  const r = await dn.pub.getTransactionReceipt({ hash });
  return {
    delta: (await balance(token, owner, r.blockNumber)) - (await balance(token, owner, r.blockNumber - 1n)),
    gas: r.gasUsed * r.effectiveGasPrice,
    receipt: r,
  };
}

async function prepare(key: string, body: Record<string, unknown>) {
  const p = await agent.post("/live/prepare", body, key);
  expect(p.status, JSON.stringify(p.json)).toBe(200);
  return p.json;
}
async function sendSteps(a: Account, steps: { kind: string; tx: PlanTx }[]) {
  for (const s of steps.filter((x) => x.kind === "approve"))
    await dn.mined(await dn.pub.sendRawTransaction({ serializedTransaction: await agent.sign(a, s.tx) }));
}
async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const listed = async (key: string, hash: Hex) =>
  ((await agent.get("/me/trades", key)).json.trades as any[]).find((t) => t.tx_hash === hash);
async function settled(key: string, hash: Hex) {
  await dn.mined(hash);
  return until(`${hash} settled`, async () => {
    const t = await listed(key, hash);
    return t && t.status !== "pending" ? t : null;
  });
}

describe("outcomes without a trace: ETH in, ETH out and ETH fees agree with the chain's balances", () => {
  it("the node refuses debug_traceTransaction", async () => {
    const r = await fetch(proxy.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "debug_traceTransaction",
        params: [`0x${"00".repeat(32)}`, {}],
      }),
    });
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32601);
    proxy.reset();
  });

  it("ETH -> USDG: ETH in is the value, the input-side ETH fee the TRANSFER amount", async () => {
    const a = await dn.freshWallet(parseEther("10"));
    const key = await agent.signIn(a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.2").toString(),
    });
    expect(p.fee).toMatchObject({ side: "input", command: "TRANSFER", token: zeroAddress });
    const s = await agent.post("/live/submit", { raw_tx: await agent.sign(a, p.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await settled(key, s.json.tx_hash);
    const eth = await deltaIn(s.json.tx_hash, zeroAddress, a.address);
    const usdg = await deltaIn(s.json.tx_hash, dn.token("USDG"), a.address);
    const fee = await deltaIn(s.json.tx_hash, zeroAddress, platform());
    expect(t).toMatchObject({
      status: "mined",
      amount_out_kind: "actual",
      amount_out: usdg.delta.toString(),
      block: Number(eth.receipt.blockNumber),
    });
    const o = (await recorded(s.json.tx_hash))!;
    expect(o.outcome).toMatchObject({
      amountIn: (-eth.delta - eth.gas).toString(),
      feeToken: zeroAddress,
      feeAmount: fee.delta.toString(),
    });
    expect(fee.delta).toBe(BigInt(p.fee.amount));
    expect(o).toMatchObject({ blockNumber: Number(eth.receipt.blockNumber), blockHash: eth.receipt.blockHash });
  });

  it(
    "WBTC -> ETH (two hops): the last Swap gives the ETH out, PAY_PORTION's share is the output-side " + "fee",
    async () => {
      const a = await dn.freshWallet(parseEther("1"), [[dn.token("WBTC"), parseUnits("1", 8)]]);
      const key = await agent.signIn(a);
      const p = await prepare(key, {
        wallet: a.address,
        token_in: "WBTC",
        token_out: "ETH",
        notional_usd: 500,
        permit_mode: "transaction",
      });
      expect(p).toMatchObject({ fee_side: "output", fee_token: zeroAddress });
      expect(p.fee.command).toBe("PAY_PORTION");
      expect(p.steps.find((x: any) => x.kind === "swap").decoded.commands).toContain("PAY_PORTION");
      await sendSteps(a, p.steps);
      const s = await agent.post("/live/submit", { raw_tx: await agent.sign(a, p.tx) }, key);
      expect(s.status, JSON.stringify(s.json)).toBe(200);
      const t = await settled(key, s.json.tx_hash);
      const eth = await deltaIn(s.json.tx_hash, zeroAddress, a.address);
      const wbtc = await deltaIn(s.json.tx_hash, dn.token("WBTC"), a.address);
      const fee = await deltaIn(s.json.tx_hash, zeroAddress, platform());
      expect(t).toMatchObject({
        status: "mined",
        amount_out_kind: "actual",
        amount_out: (eth.delta + eth.gas).toString(),
      });
      expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
        amountIn: (-wbtc.delta).toString(),
        feeToken: zeroAddress,
        feeAmount: fee.delta.toString(),
      });
      // PAY_PORTION: bps of the gross output; the wallet got the rest.
      const gross = eth.delta + eth.gas + fee.delta;
      expect(fee.delta).toBe((gross * BigInt(p.fee.bps)) / 10_000n);
    },
  );

  it("WETH legs: USDG -> WETH and WETH -> USDG from WETH9's Transfer logs (fee in WETH on the way in)", async () => {
    const a = await dn.freshWallet(parseEther("1"), [[dn.token("USDG"), parseUnits("1000", 6)]]);
    const key = await agent.signIn(a);
    const weth = dn.token("WETH");
    const buy = await prepare(key, {
      wallet: a.address,
      token_in: "USDG",
      token_out: "WETH",
      amount_in: parseUnits("300", 6).toString(),
      permit_mode: "transaction",
    });
    await sendSteps(a, buy.steps);
    const b = await agent.post("/live/submit", { raw_tx: await agent.sign(a, buy.tx) }, key);
    expect(b.status, JSON.stringify(b.json)).toBe(200);
    const tb = await settled(key, b.json.tx_hash);
    const got = await deltaIn(b.json.tx_hash, weth, a.address);
    expect(got.delta).toBeGreaterThan(0n);
    expect(tb).toMatchObject({ status: "mined", amount_out_kind: "actual", amount_out: got.delta.toString() });
    expect((await recorded(b.json.tx_hash))!.outcome).toMatchObject({
      feeToken: dn.token("USDG"),
      feeAmount: (await deltaIn(b.json.tx_hash, dn.token("USDG"), platform())).delta.toString(),
    });

    const sell = await prepare(key, {
      wallet: a.address,
      token_in: "WETH",
      token_out: "USDG",
      amount_in: got.delta.toString(),
      permit_mode: "transaction",
    });
    expect(sell).toMatchObject({ fee_side: "input", fee_token: weth });
    await sendSteps(a, sell.steps);
    const s = await agent.post("/live/submit", { raw_tx: await agent.sign(a, sell.tx) }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const ts = await settled(key, s.json.tx_hash);
    const usdg = await deltaIn(s.json.tx_hash, dn.token("USDG"), a.address);
    const wethFee = await deltaIn(s.json.tx_hash, weth, platform());
    expect(ts).toMatchObject({ status: "mined", amount_out: usdg.delta.toString() });
    expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
      amountIn: got.delta.toString(),
      feeToken: weth,
      feeAmount: wethFee.delta.toString(),
    });
    expect(wethFee.delta).toBe(BigInt(sell.fee.amount));
  });

  it(
    "curve buy then sell (two_step): tokens out, the curve's ETH to the wallet, each fee its own " + "transaction",
    async () => {
      const a = await dn.freshWallet(parseEther("5"));
      const key = await agent.signIn(a);
      const token = fx().launchToken;
      const p = await prepare(key, {
        wallet: a.address,
        token_in: "ETH",
        token_out: token,
        amount_in: parseEther("0.1").toString(),
        accept_risks: ["NO_INDEPENDENT_MARK"],
      });
      expect(p.steps.map((x: any) => x.kind)).toEqual(["fee_transfer", "swap"]);
      const b = await agent.post(
        "/live/submit",
        { raw_txs: [await agent.sign(a, p.steps[0].tx), await agent.sign(a, p.steps[1].tx, { nonceOffset: 1 })] },
        key,
      );
      expect(b.status, JSON.stringify(b.json)).toBe(200);
      const tb = await settled(key, b.json.tx_hash);
      const tokens = await deltaIn(b.json.tx_hash, token, a.address);
      const buyEth = await deltaIn(b.json.tx_hash, zeroAddress, a.address);
      const buyFee = await deltaIn(b.json.tx_hashes[0], zeroAddress, platform());
      expect(tb).toMatchObject({ status: "mined", amount_out: tokens.delta.toString() });
      expect((await recorded(b.json.tx_hash))!.outcome).toMatchObject({
        amountIn: (-buyEth.delta - buyEth.gas).toString(),
        feeToken: zeroAddress,
        feeAmount: buyFee.delta.toString(),
      });
      expect(buyFee.delta).toBe(BigInt(p.fee.amount));

      const q = await prepare(key, {
        wallet: a.address,
        token_in: token,
        token_out: "ETH",
        amount_in: (tokens.delta / 2n).toString(),
        accept_risks: ["NO_INDEPENDENT_MARK"],
      });
      expect(q.steps.map((x: any) => x.kind)).toEqual(["approve", "fee_transfer", "swap"]);
      const raws = [
        await agent.sign(a, q.steps[0].tx),
        await agent.sign(a, q.steps[1].tx, { nonceOffset: 1 }),
        await agent.sign(a, q.steps[2].tx, { nonceOffset: 2 }),
      ];
      const s = await agent.post("/live/submit", { raw_txs: raws }, key);
      expect(s.status, JSON.stringify(s.json)).toBe(200);
      const ts = await settled(key, s.json.tx_hash);
      const sellEth = await deltaIn(s.json.tx_hash, zeroAddress, a.address);
      const sellFee = await deltaIn(s.json.tx_hashes[1], zeroAddress, platform());
      // The curve pays the wallet in the sale's own transaction; the fee went first in another.
      expect(ts).toMatchObject({
        status: "mined",
        amount_out_kind: "actual",
        amount_out: (sellEth.delta + sellEth.gas).toString(),
      });
      expect((await recorded(s.json.tx_hash))!.outcome).toMatchObject({
        amountIn: (tokens.delta / 2n).toString(),
        feeToken: zeroAddress,
        feeAmount: sellFee.delta.toString(),
      });
      expect(sellFee.delta).toBe(BigInt(q.fee.amount));
    },
  );

  it(
    "a two_step trade whose fee never landed is listed as mined but counts nowhere (volume, league books, " +
      "treasury)",
    async () => {
      const a = await dn.freshWallet(parseEther("5"));
      const key = await agent.signIn(a);
      const p = await prepare(key, {
        wallet: a.address,
        token_in: "ETH",
        token_out: fx().launchToken,
        amount_in: parseEther("0.05").toString(),
        accept_risks: ["NO_INDEPENDENT_MARK"],
      });
      // A trade relayed by older code against a fee transaction that never mined (the relay now refuses it).
      const swapRaw = await agent.sign(a, p.steps[1].tx);
      const ledger = api.app.services.ledger;
      const claimed = await ledger.claimForRelay(p.plan_id, {
        wallet: a.address,
        keyId: 0,
        path: "agent",
        tokenIn: p.tokens.token_in,
        tokenOut: p.tokens.token_out,
        amountIn: p.amount_in,
        amountOutMin: p.amount_out_min,
        txHash: keccak256(swapRaw),
        feeTxHash: keccak256("0xfee0"),
        rawTx: swapRaw,
      });
      expect(claimed).toBe(true);
      const hash = await dn.pub.sendRawTransaction({ serializedTransaction: swapRaw });
      expect(await settled(key, hash)).toMatchObject({ status: "mined" });
      expect(await ledger.minedSince(a.address, 0)).toEqual([]);
      expect((await ledger.feesMinedBetween(0, 2 ** 40)).map((f) => f.txHash)).not.toContain(hash);
      expect(await minedTrades(store.db, [a.address], 0, 2 ** 40)).toEqual([]);
    },
  );

  it("no trace call and no per-block receipts reached the node: one receipt read per relayed hash", () => {
    expect(proxy.counts.methods.debug_traceTransaction ?? 0).toBe(0);
    expect(proxy.counts.methods.eth_getBlockReceipts ?? 0).toBe(0);
    expect(proxy.counts.methods.eth_getTransactionReceipt ?? 0).toBeGreaterThan(0);
  });
});

describe("reorgs move an outcome", () => {
  it("a trade re-mined in another block takes that block; one reorged away is pending again", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await agent.signIn(a);
    const p = await prepare(key, {
      wallet: a.address,
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.05").toString(),
    });
    const raw = await agent.sign(a, p.tx);
    const s = await agent.post("/live/submit", { raw_tx: raw }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const hash = s.json.tx_hash as Hex;
    const first = await settled(key, hash);
    const before = (await recorded(hash))!;
    expect(first.block).toBe(before.blockNumber);
    await dn.test.mine({ blocks: 1 });

    // Replace the trade's block and the one after with two new blocks, the trade in the second.
    await dn.pub.request({ method: "anvil_reorg" as never, params: [2, [[raw, 1]]] as never });
    const moved = await dn.pub.getTransactionReceipt({ hash });
    expect(moved.blockHash).not.toBe(before.blockHash);
    await until("outcome moved", async () => (await recorded(hash))!.blockHash === moved.blockHash);
    expect(await listed(key, hash)).toMatchObject({
      status: "mined",
      block: Number(moved.blockNumber),
      amount_out_kind: "actual",
    });
    expect((await recorded(hash))!.final).toBe(false);

    // Reorg it away altogether: no receipt, so pending again (the amount back to the plan's minimum).
    const head = await dn.pub.getBlockNumber();
    await dn.pub.request({
      method: "anvil_reorg" as never,
      params: [Number(head - moved.blockNumber) + 1, []] as never,
    });
    expect(await dn.pub.getTransactionReceipt({ hash }).catch(() => null)).toBeNull();
    await until("back to pending", async () => (await listed(key, hash))?.status === "pending");
    expect(await listed(key, hash)).toMatchObject({
      status: "pending",
      block: null,
      amount_out_kind: "minimum",
      amount_out: p.amount_out_min,
    });
  });
});
