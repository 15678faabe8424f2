import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { inputs } from "../../lib/router/encode.js";
import { Command } from "../../abis/universalRouter.js";
import { fastRouteTable, fastRoutesSha256 } from "../../lib/fastRoutes.js";
import { approvePermit2, fastBody, type FastOpts } from "../helpers/fast.js";
import { freshenMarket, postAnswer, startStack, type Stack } from "../helpers/stack.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { httpSequencer } from "../../api/ports/sequencer.js";
import { startSequencerStandIn } from "../../devnet/sequencerStandIn.js";
import {
  keccak256,
  decodeAbiParameters,
  decodeFunctionData,
  encodeFunctionData,
  parseTransaction,
  serializeTransaction,
  toHex,
  type TransactionSerializedEIP1559,
} from "viem";
import { stockRegistryAbi, stockTokenAbi } from "../../abis/fixtures.js";
import { universalRouterAbi } from "../../abis/universalRouter.js";

/**
 * Fast mode on the devnet as an agent's SDK uses it: the transaction is built from the published
 * route table, signed with viem, and the server checks every rule in SPEC's order before it relays
 * a byte-for-byte match, once.
 */
let stack: Stack;
// The API's clock (the chain keeps its own): moved to a weekday or a Saturday for stock pairs.
let offsetMs = 0;
const setClock = (ms: number | null) => (offsetMs = ms === null ? 0 : ms - Date.now());
const WEDNESDAY_NY_10AM = Date.UTC(2026, 10, 18, 15, 0, 0);
const SATURDAY_NOON = Date.UTC(2026, 10, 21, 12, 0, 0);

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: freshenMarket, clock: () => Date.now() + offsetMs });
  main = await agent("20", "5000");
  await approvePermit2(stack, main.a, stack.dn.token("USDG"));
}, 180_000);
afterAll(() => stack?.stop());

const post = (body: Record<string, unknown>, key: string) => stack.agent.post("/live/fast", body, key);
const usdgOf = (a: Address) =>
  stack.dn.pub.readContract({ address: stack.dn.token("USDG"), abi: erc20Abi, functionName: "balanceOf", args: [a] });
/** Sign-ups per client address are capped per day (SPEC): one main agent serves most tests. */
let main: { a: ReturnType<typeof privateKeyToAccount>; key: string };
async function agent(eth = "2", usdg = "500") {
  const a = await stack.dn.freshWallet(parseEther(eth), [[stack.dn.token("USDG"), parseUnits(usdg, 6)]]);
  const ch = await stack.api.call("POST", "/api/v1/auth/challenge", { address: a.address });
  const v = await stack.api.call("POST", "/api/v1/auth/verify", {
    address: a.address,
    signature: await a.signMessage({ message: ch.json.message }),
  });
  if (v.status !== 200)
    throw new Error(
      `sign-in: ${ch.status} ${JSON.stringify(ch.json).slice(0, 300)} / ${v.status} ${JSON.stringify(v.json)}`,
    );
  return { a, key: v.json.api_key as string };
}
/** The rules a refusal names, first the answered one. */
const refusal = (r: { status: number; json: any }) => ({
  status: r.status,
  code: r.json.error?.code,
  rules: (r.json.error?.failures ?? []).map((f: any) => f.rule),
});

function withSweepTo(data: Hex, to: Address): Hex {
  const { args } = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, ins, deadline] = args as unknown as [Hex, Hex[], bigint];
  const bytes = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  const next = [...ins];
  const at = bytes.indexOf(Command.SWEEP);
  const [token, , min] = decodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "uint256" }], ins[at]!);
  next[at] = inputs.sweep(token, to, min);
  return encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [toHex(Uint8Array.from(bytes)), next, deadline],
  });
}

describe("fast/terms", () => {
  it(
    "publishes the pinned table with its SHA-256 (what an SDK derives from the same universe), the wallet's fee and " +
      "the limits",
    async () => {
      const { key } = await agent();
      const r = await stack.agent.get("/live/fast/terms", key);
      expect(r.status).toBe(200);
      for (const f of [
        "enabled",
        "routes",
        "deadline_s",
        "limits",
        "fee",
        "base_fee_wei",
        "max_notional_usd",
        "mark_max_age_s",
        "slippage_tolerance_by_size",
        "stock_session_open",
        "server_time",
      ])
        expect(r.json, f).toHaveProperty(f);
      expect(r.json.enabled).toBe(true);
      const c = stack.api.config;
      const local = fastRouteTable({
        chainId: 4663,
        router: c.contracts.universalRouter,
        tokens: c.tokens,
        pools: c.pools,
      });
      expect(r.json.routes.sha256).toBe(fastRoutesSha256(local));
      const pairs = r.json.routes.pairs.map((p: any) => `${p.token_in}>${p.token_out}`);
      expect(pairs).toContain("ETH>USDG");
      expect(pairs).toContain("TSLA>NVDA");
      for (const never of ["WBTC", "ORBIO"]) expect(pairs.some((p: string) => p.includes(never))).toBe(false);
      expect(pairs).not.toContain("ETH>WETH");
      expect(r.json.fee).toMatchObject({
        schedule: 2,
        class: "major",
        tier_bps: 25,
        bps: 25,
        shield_add_bps: 10,
        posted_bps: 25,
        recipient: c.feeRecipient,
      });
      expect((await stack.agent.get("/live/fast/terms?shield=1", key)).json.fee.bps).toBe(35);
      expect((await stack.agent.get("/live/fast/terms?shield=2", key)).status).toBe(400);
    },
  );
});

describe("live/fast relays what it rebuilt, once", () => {
  it(
    "ETH -> USDG: relayed, mined, listed as path fast; the same bytes again answer the same hash, no second " + "relay",
    async () => {
      const { a, key } = await agent();
      const before = await usdgOf(a.address);
      const { body, minOut } = await fastBody(stack, a, key, {
        token_in: "ETH",
        token_out: "USDG",
        amount_in: parseEther("0.01"),
      });
      const r = await post(body, key);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json).toMatchObject({
        relayed: true,
        repeat: false,
        fee: { bps: 25, class: "major", side: "input", token: zeroAddress },
        min_out: minOut.toString(),
      });
      expect(BigInt(r.json.min_out_floor)).toBeLessThanOrEqual(minOut);
      expect(r.json.simulation.ok).toBe(true);
      expect((await stack.dn.mined(r.json.tx_hash)).status).toBe("success");
      expect((await usdgOf(a.address)) - before).toBeGreaterThanOrEqual(minOut);
      const again = await post(body, key);
      expect(again.json).toMatchObject({ tx_hash: r.json.tx_hash, repeat: true });
      // A repeat answers what the first call answered (what was relayed), not a fresh reading.
      for (const k of ["route", "fee", "min_out", "min_out_floor", "checks", "simulation"])
        expect(again.json[k], k).toEqual(r.json[k]);
      const trades = (await stack.agent.get("/me/trades", key)).json.trades;
      expect(trades.filter((t: any) => t.tx_hash === r.json.tx_hash.toLowerCase())).toHaveLength(1);
      expect(trades[0]).toMatchObject({ path: "fast", tx_hash: r.json.tx_hash.toLowerCase() });
    },
  );

  it("USDG -> ETH with a permit for exactly amount_in, carried in the swap", async () => {
    const { a, key } = await agent();
    await approvePermit2(stack, a, stack.dn.token("USDG"));
    const eth0 = await stack.dn.pub.getBalance({ address: a.address });
    const { body, minOut } = await fastBody(stack, a, key, {
      token_in: "USDG",
      token_out: "ETH",
      amount_in: parseUnits("20", 6),
      permit: true,
    });
    const r = await post(body, key);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const rc = await stack.dn.mined(r.json.tx_hash);
    expect(rc.status).toBe("success");
    expect(
      (await stack.dn.pub.getBalance({ address: a.address })) + rc.gasUsed * rc.effectiveGasPrice - eth0,
    ).toBeGreaterThanOrEqual(minOut);
  });

  it("check_only with fund runs every check and the simulation from an empty wallet, relays nothing", async () => {
    const empty = privateKeyToAccount(generatePrivateKey());
    await stack.dn.test.setBalance({ address: empty.address, value: parseEther("0.01") });
    const key = await stack.agent.signIn(empty);
    const { body } = await fastBody(stack, empty, key, {
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.2"),
      body: { check_only: true, fund: true },
    });
    const r = await post(body, key);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ relayed: false, repeat: false });
    expect(r.json.simulation).toMatchObject({ ok: true, funded_by_overrides: true });
    expect(await stack.dn.pub.getTransactionCount({ address: empty.address })).toBe(0);
  });
});

describe("every rule, provoked by a real signed transaction, answered in SPEC's order", () => {
  const refused = async (
    o: FastOpts,
    rule: string,
    status = 422,
    who?: { a: ReturnType<typeof privateKeyToAccount>; key: string },
  ) => {
    const { a, key } = who ?? main;
    const { body } = await fastBody(stack, a, key, o);
    const r = refusal(await post(body, key));
    expect(r.code, JSON.stringify(r)).toBe(rule);
    expect(r.status).toBe(status);
    expect(r.rules[0]).toBe(rule);
    return r;
  };
  const eth = (over: Partial<FastOpts> = {}): FastOpts => ({
    token_in: "ETH",
    token_out: "USDG",
    amount_in: parseEther("0.01"),
    ...over,
  });

  it("BAD_REQUEST and TX_ENCODING (a high-s signature, a non-empty access list)", async () => {
    const { key } = main;
    expect(
      refusal(
        await post(
          {
            raw_tx: "0x02f8",
            token_in: "ETH",
            token_out: "USDG",
            amount_in: "1",
            min_out: "1",
            deadline: 1,
            fee_bps: 25,
          },
          key,
        ),
      ).code,
    ).toBe("BAD_REQUEST");
    // Numbers wider than the router's arguments are the request's fault, not a 500.
    const wide = await fastBody(stack, main.a, key, eth());
    expect(refusal(await post({ ...wide.body, min_out: (1n << 256n).toString() }, key))).toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
    });
    expect(refusal(await post({ ...wide.body, deadline: 2 ** 48 }, key))).toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
    });
    await refused(eth({ tx: { accessList: [{ address: zeroAddress, storageKeys: [] }] } }), "TX_ENCODING");
    // The same signature's malleable twin (s' = n - s, parity flipped) recovers the same signer: not canonical.
    const { a } = main;
    const ok = await fastBody(stack, a, key, eth());
    const parsed = parseTransaction(ok.raw as TransactionSerializedEIP1559);
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = serializeTransaction(
      { ...ok.tx },
      { r: parsed.r!, s: toHex(N - BigInt(parsed.s!), { size: 32 }), yParity: 1 - parsed.yParity! },
    );
    const r = refusal(await post({ ...ok.body, raw_tx: twin }, key));
    expect(r.code).toBe("TX_ENCODING");
  });

  it("FAST_PAIR for the BTC asset, the partner token and ETH<->WETH", async () => {
    const { a, key } = main;
    for (const [i, o] of [
      ["WBTC", "USDG"],
      ["ORBIO", "USDG"],
      ["ETH", "WETH"],
    ] as const) {
      const { body } = await fastBody(stack, a, key, { token_in: i, token_out: o, amount_in: 1000n, min_out: 1n });
      expect(refusal(await post(body, key)).code).toBe("FAST_PAIR");
    }
    // Without a pinned route the rules on the transaction alone still run and are listed.
    const { body } = await fastBody(stack, a, key, {
      token_in: "ETH",
      token_out: "WETH",
      amount_in: 1000n,
      min_out: 1n,
      deadline: 1,
      tx: { chainId: 1 },
    });
    expect(refusal(await post(body, key))).toMatchObject({
      code: "FAST_PAIR",
      rules: ["FAST_PAIR", "CHAIN_ID", "DEADLINE"],
    });
  });

  it("TX_TYPE, CHAIN_ID, ROUTER, VALUE, WALLET_MISMATCH", async () => {
    const { a, key } = main;
    const who = { a, key };
    const legacy = await fastBody(stack, a, key, eth());
    const { type: _t, maxFeePerGas: _m, maxPriorityFeePerGas: _p, ...rest } = legacy.tx;
    const raw = await a.signTransaction({
      ...rest,
      accessList: undefined,
      type: "legacy",
      gasPrice: legacy.tx.maxFeePerGas,
    } as never);
    expect(refusal(await post({ ...legacy.body, raw_tx: raw }, key)).code).toBe("TX_TYPE");
    await refused(eth({ tx: { chainId: 1 } }), "CHAIN_ID", 422, who);
    await refused(eth({ tx: { to: stack.dn.token("USDG") } }), "ROUTER", 422, who);
    await refused(eth({ tx: { value: 1n } }), "VALUE", 422, who);
    await refused(eth({ signer: privateKeyToAccount(generatePrivateKey()) }), "WALLET_MISMATCH", 403, who);
  });

  it("NOTIONAL, ROUTE_CAP, DEADLINE, GAS (terms carry the base fee), FEE_BPS (terms carry the fee)", async () => {
    await refused(eth({ amount_in: parseEther("0.0001") }), "NOTIONAL");
    await refused(eth({ amount_in: parseEther("2") }), "ROUTE_CAP");
    const chainTime = Number((await stack.dn.pub.getBlock()).timestamp);
    await refused(eth({ deadline: chainTime + 120 }), "DEADLINE");
    const { a, key } = main;
    const gas = await fastBody(stack, a, key, eth({ tx: { gas: 2_000_000n } }));
    const g = await post(gas.body, key);
    expect(g.json.error.code).toBe("GAS");
    expect(g.json.error.terms.base_fee_wei).toBe(gas.terms.base_fee_wei);
    const fee = await fastBody(stack, a, key, eth({ fee_bps: 10 }));
    const f = await post(fee.body, key);
    expect(f.json.error.code).toBe("FEE_BPS");
    expect(f.json.error.terms.fee.bps).toBe(25);
    // The calldata paying less than the wallet's fee, declared right: FEE_BPS too.
    await refused(eth({ calldata_fee_bps: 10 }), "FEE_BPS");
  });

  it("a transaction breaking several rules answers the first in SPEC's order and lists them all", async () => {
    const chainTime = Number((await stack.dn.pub.getBlock()).timestamp);
    const { body } = await fastBody(
      stack,
      main.a,
      main.key,
      eth({
        deadline: chainTime + 120,
        tx: { gas: 2_000_000n, maxFeePerGas: 1n },
        min_out: 1n,
        fee_bps: 10,
        calldata_fee_bps: 10,
      }),
    );
    const r = await post(body, main.key);
    expect(refusal(r)).toMatchObject({
      status: 422,
      code: "DEADLINE",
      rules: ["DEADLINE", "GAS", "FEE_BPS", "MIN_OUT", "NOT_AS_BUILT"],
    });
    // Within a rule too, every cause is named: the client fixes them all before it signs again.
    const reason = (rule: string) => r.json.error.failures.find((f: any) => f.rule === rule).message;
    expect(reason("GAS")).toMatch(/gas limit.*maxFeePerGas/s);
    expect(reason("FEE_BPS")).toMatch(/fee_bps 10.*calldata pays 10/s);
  });

  it("MIN_OUT (terms.floor), AMOUNT_USD, CLIENT_CAP, PERMIT", async () => {
    const m = main;
    const low = await fastBody(stack, m.a, m.key, eth({ min_out: 1n }));
    const r = await post(low.body, m.key);
    expect(r.json.error.code).toBe("MIN_OUT");
    expect(BigInt(r.json.error.terms.floor)).toBeGreaterThan(1n);
    await refused(eth({ body: { amount_usd: 1_000 } }), "AMOUNT_USD");
    await refused(eth({ body: { max_notional_usd: 5 } }), "CLIENT_CAP");
    await refused(
      eth({ body: { permit: { amount: "1", expiration: 1, nonce: 0, sig_deadline: 1, signature: "0x00" } } }),
      "PERMIT",
    );
  });

  it("NOT_AS_BUILT names what differs: the output swept to someone else is RECIPIENT", async () => {
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    const { a, key } = main;
    const { body } = await fastBody(stack, a, key, eth({ data: (d) => withSweepTo(d, thief) }));
    const r = await post(body, key);
    expect(r.json.error.code).toBe("NOT_AS_BUILT");
    expect(r.json.error.terms.diffs.map((x: any) => x.field)).toContain("RECIPIENT");
    expect(await usdgOf(thief)).toBe(0n);
  });

  it(
    "MARKET_CLOSED on a Saturday for a stock pair; GEOFENCE without the attestation on a weekday; a stock pair " +
      "trades inside the session",
    async () => {
      const { a, key } = main;
      try {
        setClock(SATURDAY_NOON);
        const closed = await fastBody(stack, a, key, {
          token_in: "USDG",
          token_out: "TSLA",
          amount_in: parseUnits("20", 6),
          permit: true,
        });
        expect(refusal(await post(closed.body, key)).code).toBe("MARKET_CLOSED");
        setClock(WEDNESDAY_NY_10AM);
        const geo = await fastBody(stack, a, key, {
          token_in: "USDG",
          token_out: "TSLA",
          amount_in: parseUnits("20", 6),
          permit: true,
          body: { owner_attests_non_us: false },
        });
        expect(refusal(await post(geo.body, key)).code).toBe("GEOFENCE");
        const open = await fastBody(stack, a, key, {
          token_in: "USDG",
          token_out: "TSLA",
          amount_in: parseUnits("20", 6),
          permit: true,
        });
        const r = await post(open.body, key);
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        expect((await stack.dn.mined(r.json.tx_hash)).status).toBe("success");
        // And back: a stock sale pays its fee on the output side (PAY_PORTION); the watcher settles both.
        await approvePermit2(stack, a, stack.dn.token("TSLA"));
        const held = await stack.dn.pub.readContract({
          address: stack.dn.token("TSLA"),
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [a.address],
        });
        const back = await fastBody(stack, a, key, {
          token_in: "TSLA",
          token_out: "USDG",
          amount_in: held,
          permit: true,
        });
        const sold = await post(back.body, key);
        expect(sold.status, JSON.stringify(sold.json)).toBe(200);
        expect(sold.json.fee.side).toBe("output");
        expect((await stack.dn.mined(sold.json.tx_hash)).status).toBe("success");
        const status = async (h: string) =>
          (await stack.agent.get("/me/trades", key)).json.trades.find((t: any) => t.tx_hash === h.toLowerCase())
            ?.status;
        for (
          let i = 0;
          i < 100 && ((await status(r.json.tx_hash)) !== "mined" || (await status(sold.json.tx_hash)) !== "mined");
          i++
        )
          await new Promise((res) => setTimeout(res, 100));
        expect([await status(r.json.tx_hash), await status(sold.json.tx_hash)]).toEqual(["mined", "mined"]);
      } finally {
        setClock(null);
      }
    },
  );

  it(
    "STOCK_PAUSED and WALLET_BLOCKED by the issuer; ROUTE_VS_MID for a stock pair whose minimum sits far under the " +
      "pool mid",
    async () => {
      const { a, key } = main;
      const deployer = stack.dn.walletFor(stack.dn.deployer);
      const usdgToNvda: FastOpts = {
        token_in: "USDG",
        token_out: "NVDA",
        amount_in: parseUnits("20", 6),
        permit: true,
      };
      try {
        setClock(WEDNESDAY_NY_10AM);
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.token("NVDA"),
            abi: stockTokenAbi,
            functionName: "setTokenPaused",
            args: [true],
          }),
        );
        await refused(usdgToNvda, "STOCK_PAUSED");
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.token("NVDA"),
            abi: stockTokenAbi,
            functionName: "setTokenPaused",
            args: [false],
          }),
        );
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.universe.contracts.stockRegistry,
            abi: stockRegistryAbi,
            functionName: "setBlocked",
            args: [a.address, true],
          }),
        );
        await refused(usdgToNvda, "WALLET_BLOCKED");
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.universe.contracts.stockRegistry,
            abi: stockRegistryAbi,
            functionName: "setBlocked",
            args: [a.address, false],
          }),
        );
        // Without simulation the minimum is what is judged against the mid: 6 % under it is ROUTE_VS_MID (MIN_OUT
        // allows cap + pool fee + band).
        const fair = await fastBody(stack, a, key, usdgToNvda);
        const r = refusal(
          await post(
            (
              await fastBody(stack, a, key, {
                ...usdgToNvda,
                min_out: (fair.minOut * 94n) / 99n,
                body: { simulate: false },
              })
            ).body,
            key,
          ),
        );
        expect(r.rules).toContain("ROUTE_VS_MID");
      } finally {
        setClock(null);
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.token("NVDA"),
            abi: stockTokenAbi,
            functionName: "setTokenPaused",
            args: [false],
          }),
        );
        await stack.dn.mined(
          await deployer.writeContract({
            address: stack.dn.universe.contracts.stockRegistry,
            abi: stockRegistryAbi,
            functionName: "setBlocked",
            args: [a.address, false],
          }),
        );
      }
    },
  );

  it(
    "SIMULATION_FAILED for a minimum the pools cannot meet; FAST_FUNDS without simulation for a wallet that lacks " +
      "the input",
    async () => {
      const { a, key } = main;
      const ok = await fastBody(stack, a, key, eth());
      await refused(eth({ min_out: ok.minOut * 2n }), "SIMULATION_FAILED", 422, { a, key });
      const poor = await agent("0.005");
      await refused(eth({ body: { simulate: false } }), "FAST_FUNDS", 422, poor);
    },
  );

  it("POOL_FAR when the oracle moves 10 % from the pinned pool", async () => {
    const { a, key } = main;
    const feed = stack.dn.universe.tokens.ETH!.feed!;
    const [, answer] = await stack.dn.pub.readContract({
      address: feed,
      abi: priceFeedAbi,
      functionName: "latestRoundData",
    });
    try {
      await postAnswer(stack.dn, feed, (answer * 11n) / 10n);
      await stack.ix.waitFor(await stack.dn.pub.getBlockNumber());
      await new Promise((r) => setTimeout(r, 1_100));
      const { body } = await fastBody(stack, a, key, eth());
      const r = refusal(await post(body, key));
      expect(r.rules).toContain("POOL_FAR");
    } finally {
      await postAnswer(stack.dn, feed, answer);
      await stack.ix.waitFor(await stack.dn.pub.getBlockNumber());
      await new Promise((r) => setTimeout(r, 1_100));
    }
  });

  it("NONCE when the nonce was taken by another transaction (chain.spent)", async () => {
    const { a, key } = main;
    const first = await fastBody(stack, a, key, eth());
    // The wallet spends that nonce elsewhere first.
    await stack.dn.mined(await stack.dn.walletFor(a).sendTransaction({ to: a.address, value: 0n }));
    const r = await post(first.body, key);
    expect([r.status, r.json.error.code]).toEqual([422, "NONCE"]);
    expect(r.json.error.chain.spent).toBe(true);
  });
});

describe("the same bytes at once", () => {
  it("five concurrent calls with one signed transaction relay it once; every answer names its hash", async () => {
    const { a, key } = await agent();
    const { body } = await fastBody(stack, a, key, {
      token_in: "ETH",
      token_out: "USDG",
      amount_in: parseEther("0.01"),
    });
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(body, key)));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of answers) if (r.status !== 200) expect(r.json.error.code).toBe("IN_FLIGHT");
    expect(ok.filter((r) => r.json.repeat === false)).toHaveLength(1);
    expect(new Set(ok.map((r) => r.json.tx_hash)).size).toBe(1);
    const shown = (r: { json: any }) => ({
      route: r.json.route,
      fee: r.json.fee,
      min_out: r.json.min_out,
      checks: r.json.checks,
    });
    for (const r of ok) expect(shown(r)).toEqual(shown(ok[0]!));
    expect((await stack.dn.mined(ok[0]!.json.tx_hash)).status).toBe("success");
    const trades = (await stack.agent.get("/me/trades", key)).json.trades;
    expect(trades).toHaveLength(1);
  });
});

describe("fast mode off", () => {
  it("is FAST_DISABLED (403) on a server that did not opt in, before anything is read", async () => {
    const off = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: stack.ix.liveReads().reads,
      config: { fastEnabled: false },
    });
    try {
      const r = await off.call(
        "POST",
        "/api/v1/live/fast",
        { raw_tx: "0x00" },
        { authorization: `Bearer ${main.key}` },
      );
      expect([r.status, r.json.error.code]).toEqual([403, "FAST_DISABLED"]);
      expect(
        (await off.call("GET", "/api/v1/live/fast/terms", undefined, { authorization: `Bearer ${main.key}` })).json
          .enabled,
      ).toBe(false);
    } finally {
      await off.close();
    }
  });
});

describe("two API instances on one PostgreSQL store", () => {
  it(
    "the same signed bytes sent to both at once are relayed once; a later repeat on either answers the same " + "hash",
    async () => {
      const second = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        clock: () => Date.now() + offsetMs,
      });
      try {
        const { a, key } = main;
        const { body } = await fastBody(stack, a, key, {
          token_in: "ETH",
          token_out: "USDG",
          amount_in: parseEther("0.01"),
        });
        const viaSecond = (b: Record<string, unknown>) =>
          second.call("POST", "/api/v1/live/fast", b, { authorization: `Bearer ${key}` });
        const answers = await Promise.all([post(body, key), viaSecond(body), post(body, key), viaSecond(body)]);
        const ok = answers.filter((r) => r.status === 200);
        for (const r of answers) if (r.status !== 200) expect(r.json.error.code).toBe("IN_FLIGHT");
        expect(ok.filter((r) => r.json.repeat === false)).toHaveLength(1);
        const hash = ok[0]!.json.tx_hash;
        expect((await stack.dn.mined(hash)).status).toBe("success");
        for (const r of [await post(body, key), await viaSecond(body)])
          expect(r.json).toMatchObject({ tx_hash: hash, repeat: true });
        const rows = (await stack.agent.get("/me/trades", key)).json.trades.filter(
          (t: any) => t.tx_hash === hash.toLowerCase(),
        );
        expect(rows).toHaveLength(1);
      } finally {
        await second.close();
      }
    },
  );
});

describe("the sequencer's answers", () => {
  it(
    "no answer: 502 SEQUENCER_UNREACHABLE and the trade kept; the same bytes again are sent once more, answer " +
      "repeat, and mine once",
    async () => {
      const standIn = await startSequencerStandIn(stack.dn.anvil.rpcUrl);
      standIn.mode("silent");
      const deaf = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        sequencer: httpSequencer(standIn.url, 500),
        clock: () => Date.now() + offsetMs,
      });
      try {
        const { a, key } = main;
        const { body } = await fastBody(stack, a, key, {
          token_in: "ETH",
          token_out: "USDG",
          amount_in: parseEther("0.01"),
        });
        const r = await deaf.call("POST", "/api/v1/live/fast", body, { authorization: `Bearer ${key}` });
        expect([r.status, r.json.error.code]).toEqual([502, "SEQUENCER_UNREACHABLE"]);
        expect(standIn.received).toHaveLength(1);
        const again = await post(body, key);
        expect(again.status, JSON.stringify(again.json)).toBe(200);
        expect(again.json).toMatchObject({ repeat: true, relayed: true });
        expect((await stack.dn.mined(again.json.tx_hash)).status).toBe("success");
        expect(
          (await stack.agent.get("/me/trades", key)).json.trades.filter(
            (t: any) => t.tx_hash === again.json.tx_hash.toLowerCase(),
          ),
        ).toHaveLength(1);
      } finally {
        await deaf.close();
        await standIn.close();
      }
    },
  );

  it(
    "no answer, then the same bytes past their deadline: nothing is sent again (issue 26 point 6), the repeat names " +
      "its hash",
    async () => {
      // A store of its own: the main stack's watcher must not resend these bytes before their deadline.
      const store = await freshStore();
      const silent = await startSequencerStandIn(stack.dn.anvil.rpcUrl);
      silent.mode("silent");
      const counting = await startSequencerStandIn(stack.dn.anvil.rpcUrl);
      const indexed = stack.ix.liveReads().reads;
      // Both instances read time as the chain does (run alone, this test finds the chain's clock wherever the snapshot
      // left it).
      const skew = Number((await stack.dn.pub.getBlock()).timestamp) * 1000 - Date.now();
      const deaf = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: store.db,
        indexed,
        sequencer: httpSequencer(silent.url, 500),
        clock: () => Date.now() + skew,
      });
      let late: Api | null = null;
      let deafOpen = true;
      try {
        const a = await stack.dn.freshWallet(parseEther("2"));
        const on = { ...stack, api: deaf, agent: agentOf(deaf, stack.dn) } as Stack;
        const key = await on.agent.signIn(a);
        const { body } = await fastBody(on, a, key, {
          token_in: "ETH",
          token_out: "USDG",
          amount_in: parseEther("0.01"),
        });
        const r = await deaf.call("POST", "/api/v1/live/fast", body, { authorization: `Bearer ${key}` });
        expect([r.status, r.json.error.code]).toEqual([502, "SEQUENCER_UNREACHABLE"]);
        await deaf.close();
        deafOpen = false;
        // Another instance two minutes later (past the 60 s a fast deadline may lie ahead): its watcher and the repeat
        // both see a dead plan.
        late = await serveApi({
          rpcUrl: stack.dn.anvil.rpcUrl,
          db: store.db,
          indexed,
          sequencer: httpSequencer(counting.url, 2_000),
          clock: () => Date.now() + skew + 120_000,
        });
        const again = await late.call("POST", "/api/v1/live/fast", body, { authorization: `Bearer ${key}` });
        expect(again.status, JSON.stringify(again.json)).toBe(200);
        expect(again.json).toMatchObject({ repeat: true, relayed: true, tx_hash: keccak256(body.raw_tx) });
        await new Promise((res) => setTimeout(res, 1_500));
        expect(counting.received).toHaveLength(0);
        expect(await stack.dn.pub.getTransaction({ hash: again.json.tx_hash }).catch(() => null)).toBeNull();
      } finally {
        if (deafOpen) await deaf.close();
        await late?.close();
        await silent.close();
        await counting.close();
        await store.drop();
      }
    },
  );

  it(
    "a refusal (the wallet cannot pay the gas): 422 SUBMIT_REJECTED, nothing kept; once funded, the same bytes " +
      "relay",
    async () => {
      const { a, key } = await agent("0", "0");
      const amount = parseEther("0.001");
      await stack.dn.test.setBalance({ address: a.address, value: amount + 1n });
      const { body } = await fastBody(stack, a, key, {
        token_in: "ETH",
        token_out: "USDG",
        amount_in: amount,
        body: { simulate: false },
      });
      const r = await post(body, key);
      expect([r.status, r.json.error.code]).toEqual([422, "SUBMIT_REJECTED"]);
      await stack.dn.test.setBalance({ address: a.address, value: parseEther("1") });
      const later = await post(body, key);
      expect(later.status, JSON.stringify(later.json)).toBe(200);
      expect(later.json.repeat).toBe(false);
      expect((await stack.dn.mined(later.json.tx_hash)).status).toBe("success");
    },
  );
});

describe("marks gone stale", () => {
  const eth = (): FastOpts => ({ token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.01") });
  it(
    "PRICE_STALE when the API's clock is two days past the feeds (503); last: caches do not run " + "backwards",
    async () => {
      const { a, key } = main;
      try {
        setClock(Date.now() + 2 * 86_400_000);
        const { body } = await fastBody(stack, a, key, eth());
        const r = await post(body, key);
        expect([r.status, r.json.error.code]).toEqual([503, "PRICE_STALE"]);
      } finally {
        setClock(null);
      }
    },
  );
});
