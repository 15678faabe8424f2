import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../lib/root.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createPitClient, PitError, readPins, signStatement, type Pins } from "@pit/sdk";
import { partnerAgentVaultAbi, priceFeedAbi } from "../../abis/fixtures.js";
import { mintableAbi } from "../../abis/erc20.js";
import { exactInputSingleParams, stateViewAbi, V4Action } from "../../abis/uniswapV4.js";
import { openFullRangePool } from "../../devnet/deploy.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { poolId, type PoolKey } from "../../lib/v4.js";
import { Command, COMMAND_TYPE_MASK, universalRouterAbi } from "../../abis/universalRouter.js";
import { freshenMarket, postAnswer, startStack, untilMarked, type Stack } from "../../test/helpers/stack.js";
import { counted, startHostile, type Hostile } from "./hostileServer.js";

/**
 * The SDK against a hostile server (issue 19): a stand-in that relays to the real service and
 * tampers with one field of its answer at a time (router, recipients inside the calldata, fee
 * rate and recipient, minimum out, hooks, fee class, risks, the challenge's domain, the config,
 * the answered hash). The SDK refuses every one with the right code and rule and signs nothing
 * before the check; against the real service the same call trades and the output is checked.
 */
let stack: Stack;
let hostile: Hostile;
let pins: Pins;
const ATTACKER = "0x000000000000000000000000000000000000dead" as Address;

beforeAll(async () => {
  stack = await startStack({ before: freshenMarket });
  hostile = await startHostile(() => stack.api.url);
  pins = await readPins(stack.api.url);
}, 180_000);
afterAll(async () => {
  await hostile?.close();
  await stack?.stop();
});

/** One wallet for the refusals (nothing it signs is ever sent): a client address opens 20 accounts a day. */
const SHARED = generatePrivateKey();

/** Rewrites one router command's input (by command type) in a plan's calldata. */
function editCommand(data: Hex, command: number, edit: (input: Hex) => Hex): Hex {
  const d = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, inputs, deadline] = d.args as unknown as [Hex, Hex[], bigint];
  const types = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16) & COMMAND_TYPE_MASK);
  const i = types.indexOf(command);
  if (i < 0) throw new Error(`no command ${command} in the plan`);
  const next = [...inputs];
  next[i] = edit(next[i]!);
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, next, deadline] });
}
const addr3 = [{ type: "address" }, { type: "address" }, { type: "uint256" }] as const;
const reAddr3 = (input: Hex, f: (v: [Address, Address, bigint]) => [Address, Address, bigint]) =>
  encodeAbiParameters(addr3, f(decodeAbiParameters(addr3, input) as unknown as [Address, Address, bigint]));
/** The V4 program's actions (SETTLE, SWAP_EXACT_IN_SINGLE..., TAKE) with their params, edited and encoded again. */
function editActions(input: Hex, f: (action: number, params: Hex) => Hex): Hex {
  const [actions, params] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], input) as unknown as [
    Hex,
    Hex[],
  ];
  const codes = (actions.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  return encodeAbiParameters(
    [{ type: "bytes" }, { type: "bytes[]" }],
    [actions, params.map((p, i) => f(codes[i]!, p))],
  );
}
/** The first swap's ExactInputSingleParams, edited. */
const editSwap = (input: Hex, f: (p: { poolKey: Record<string, unknown>; amountIn: bigint }) => object): Hex => {
  let done = false;
  return editActions(input, (action, params) => {
    if (action !== V4Action.SWAP_EXACT_IN_SINGLE || done) return params;
    done = true;
    const [p] = decodeAbiParameters(exactInputSingleParams, params) as unknown as [
      { poolKey: Record<string, unknown>; amountIn: bigint },
    ];
    return encodeAbiParameters(exactInputSingleParams, [f(p)] as never);
  });
};
const settleLess = (input: Hex, less: bigint): Hex =>
  editActions(input, (action, params) => {
    if (action !== V4Action.SETTLE) return params;
    const [c, amount, payer] = decodeAbiParameters(
      [{ type: "address" }, { type: "uint256" }, { type: "bool" }],
      params,
    ) as unknown as [Address, bigint, boolean];
    return encodeAbiParameters([{ type: "address" }, { type: "uint256" }, { type: "bool" }], [c, amount - less, payer]);
  });
/** A fee `times` as high, the swap settling and spending that much less: a program that still balances. */
function raiseFee(data: Hex, times: bigint): Hex {
  let extra = 0n;
  const fee = editCommand(data, Command.TRANSFER, (i) =>
    reAddr3(i, ([t, r, v]) => ((extra = v * (times - 1n)), [t, r, v * times])),
  );
  return editCommand(fee, Command.V4_SWAP, (i) =>
    editSwap(settleLess(i, extra), (p) => ({ ...p, amountIn: p.amountIn - extra })),
  );
}
/** The V4 swap's hooks set to `hooks` (the first action's ExactInputSingleParams). */
const withHooks = (input: Hex, hooks: Address): Hex =>
  editSwap(input, (p) => ({ ...p, poolKey: { ...p.poolKey, hooks } }));

/** The V4_SWAP command moved into an EXECUTE_SUB_PLAN of its own. */
function subPlanSwap(data: Hex): Hex {
  const d = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, inputs, deadline] = d.args as unknown as [Hex, Hex[], bigint];
  const bytes = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  const i = bytes.findIndex((b) => (b & COMMAND_TYPE_MASK) === Command.V4_SWAP);
  const next = [...inputs];
  next[i] = encodeAbiParameters(
    [{ type: "bytes" }, { type: "bytes[]" }],
    [`0x${Command.V4_SWAP.toString(16).padStart(2, "0")}`, [inputs[i]!]],
  );
  bytes[i] = Command.EXECUTE_SUB_PLAN;
  return encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [`0x${bytes.map((b) => b.toString(16).padStart(2, "0")).join("")}`, next, deadline],
  });
}
function withDeadline(data: Hex, deadline: bigint): Hex {
  const d = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, inputs] = d.args as unknown as [Hex, Hex[], bigint];
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, inputs, deadline] });
}
const prepared = (edit: (plan: any) => void) => (path: string, body: any) =>
  path.startsWith("/api/v1/live/prepare") ? (edit(body), body) : body;
const tx = (plan: any) => plan.tx as { to: string; data: Hex };

/** A hookless ETH/USDG pool of the server's own (1 % LP fee), not a canonical one: at the canonical pool's price. */
const attackerKey = {
  currency0: zeroAddress,
  currency1: "0x0000000000000000000000000000000000000000" as Address,
  fee: 10_000,
  tickSpacing: 200,
  hooks: zeroAddress,
} satisfies PoolKey;
async function makeAttackerPool() {
  const { dn } = stack;
  const usdg = dn.token("USDG");
  attackerKey.currency1 = usdg;
  const canonical = dn.universe.pools.find((p) => p.currency0 === zeroAddress && p.currency1 === usdg)!;
  const [sqrtPriceX96] = await dn.pub.readContract({
    address: dn.universe.contracts.stateView,
    abi: stateViewAbi,
    functionName: "getSlot0",
    args: [canonical.id],
  });
  const w = dn.walletFor(dn.deployer);
  await dn.mined(
    await w.writeContract({
      address: usdg,
      abi: mintableAbi,
      functionName: "mint",
      args: [dn.deployer.address, 300_000_000_000n],
    }),
  );
  const ctx = { wallet: w, pub: dn.pub, account: dn.deployer, chain: dn.chain };
  await openFullRangePool(ctx, dn.universe.contracts, attackerKey, sqrtPriceX96, parseEther("100"), 300_000_000_000n);
}

async function client(account: LocalAccount, base = hostile.url) {
  const pit = await createPitClient({ baseUrl: base, rpcUrl: stack.dn.anvil.rpcUrl, account, pins });
  hostile.tamper = null;
  await pit.signIn();
  return pit;
}

describe("the SDK against a hostile server", () => {
  const sell = { tokenIn: "ETH", tokenOut: "USDG", notionalUsd: 40 };

  const cases: [string, (path: string, body: any) => any, string, string | undefined][] = [
    ["another router", prepared((p) => (tx(p).to = ATTACKER)), "VERIFICATION_FAILED", "RECIPIENT"],
    [
      "the output swept to someone else",
      prepared(
        (p) => (tx(p).data = editCommand(tx(p).data, Command.SWEEP, (i) => reAddr3(i, ([t, , m]) => [t, ATTACKER, m]))),
      ),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
    [
      "the fee paid to someone else",
      prepared(
        (p) =>
          (tx(p).data = editCommand(tx(p).data, Command.TRANSFER, (i) => reAddr3(i, ([t, , v]) => [t, ATTACKER, v]))),
      ),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
    [
      "a fee raised inside the calldata (the swap spending less, so the program balances)",
      prepared((p) => (tx(p).data = raiseFee(tx(p).data, 3n))),
      "VERIFICATION_FAILED",
      "FEE_BPS",
    ],
    [
      "a fee raised in both calldata and answer",
      prepared((p) => ((tx(p).data = raiseFee(tx(p).data, 4n)), (p.fee_bps *= 4))),
      "VERIFICATION_FAILED",
      "FEE_BPS",
    ],
    [
      "a fee raised in the calldata alone (input left in the router)",
      prepared(
        (p) =>
          (tx(p).data = editCommand(tx(p).data, Command.TRANSFER, (i) => reAddr3(i, ([t, r, v]) => [t, r, v * 3n]))),
      ),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
    [
      "a lower minimum out in the calldata",
      prepared((p) => (tx(p).data = editCommand(tx(p).data, Command.SWEEP, (i) => reAddr3(i, ([t, r]) => [t, r, 1n])))),
      "VERIFICATION_FAILED",
      "MIN_OUT",
    ],
    [
      "a lower minimum out in both",
      prepared(
        (p) => (
          (tx(p).data = editCommand(tx(p).data, Command.SWEEP, (i) => reAddr3(i, ([t, r]) => [t, r, 1n]))),
          (p.amount_out_min = "1")
        ),
      ),
      "VERIFICATION_FAILED",
      "MIN_OUT",
    ],
    [
      "an expected output and minimum lowered together (the client's own quote disagrees)",
      prepared(
        (p) => (
          (tx(p).data = editCommand(tx(p).data, Command.SWEEP, (i) => reAddr3(i, ([t, r, m]) => [t, r, m / 2n]))),
          (p.amount_out_min = String(BigInt(p.amount_out_min) / 2n)),
          (p.amount_out_expected = String(BigInt(p.amount_out_expected) / 2n))
        ),
      ),
      "VERIFICATION_FAILED",
      "QUOTE_OWN",
    ],
    [
      "an expected output inflated past the signed minimum's slippage",
      prepared((p) => (p.amount_out_expected = String(BigInt(p.amount_out_expected) * 2n))),
      "VERIFICATION_FAILED",
      "MIN_OUT",
    ],
    [
      "input parked in the router (the fee transferred to the router itself)",
      prepared(
        (p) =>
          (tx(p).data = editCommand(tx(p).data, Command.TRANSFER, (i) =>
            reAddr3(i, ([t, , v]) => [t, "0x0000000000000000000000000000000000000002", v]),
          )),
      ),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
    [
      "the swap hidden in a sub-plan with the minimum at 1 and no expected output",
      prepared(
        (p) => (
          (tx(p).data = editCommand(
            editCommand(tx(p).data, Command.SWEEP, (i) => reAddr3(i, ([t, r]) => [t, r, 1n])),
            Command.V4_SWAP,
            (i) => i,
          )),
          (tx(p).data = subPlanSwap(tx(p).data)),
          (p.amount_out_min = "1"),
          delete p.amount_out_expected
        ),
      ),
      "VERIFICATION_FAILED",
      "QUOTE_OWN",
    ],
    [
      "a deadline years ahead",
      prepared((p) => (tx(p).data = withDeadline(tx(p).data, 2n ** 40n))),
      "VERIFICATION_FAILED",
      "MIN_OUT",
    ],
    [
      "a hooked pool",
      prepared((p) => (tx(p).data = editCommand(tx(p).data, Command.V4_SWAP, (i) => withHooks(i, ATTACKER)))),
      "VERIFICATION_FAILED",
      "V4_HOOKS",
    ],
    ["another fee class", prepared((p) => (p.fee_class = "other")), "VERIFICATION_FAILED", "FEE_CLASS"],
    [
      "a risk not accepted",
      prepared((p) => (p.risks = [{ code: "HONEYPOT" }])),
      "VERIFICATION_FAILED",
      "RISK_NOT_ACCEPTED",
    ],
    [
      "a risk code the pinned table does not know",
      prepared((p) => (p.risks = [{ code: "FREE_LUNCH" }])),
      "VERIFICATION_FAILED",
      "RISK_CODES",
    ],
    [
      "a plan that is not an object",
      (path, body) => (path.startsWith("/api/v1/live/prepare") ? null : body),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
    ["a plan with an unreadable amount", prepared((p) => (p.amount_in = "lots")), "VERIFICATION_FAILED", "RECIPIENT"],
    [
      "another chain",
      prepared((p) => ((tx(p) as { chain_id?: number }).chain_id = 1)),
      "VERIFICATION_FAILED",
      "RECIPIENT",
    ],
  ];

  it.each(cases)("refuses %s, signs nothing", async (_name, edit, code, rule) => {
    const account = counted(SHARED);
    await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
    const pit = await client(account);
    hostile.tamper = edit;
    const err = await pit.trade(sell).catch((e) => e);
    hostile.tamper = null;
    expect(err).toBeInstanceOf(PitError);
    expect([err.code, err.rule], err.message).toEqual([code, rule]);
    expect(account.signed.tx).toBe(0);
    expect(await stack.dn.pub.getTransactionCount({ address: account.address })).toBe(0);
  });

  it(
    "refuses a plan that understates its price impact (IMPACT_OWN), " +
      "an unmarked pair without the caller's floor (PRICE), and trades it as answered",
    async () => {
      // 1.5 ETH into ORBIO goes through two pools (5 and 30 bps of LP fee), the second a thin one:
      // about 100 bps of impact. The answer says the fill is at the mid less the fees: no impact.
      const orbio = { tokenIn: "ETH", tokenOut: "ORBIO", amountIn: parseEther("1.5") };
      const account = counted();
      await stack.dn.test.setBalance({ address: account.address, value: parseEther("3") });
      const pit = await client(account);
      hostile.tamper = prepared((p) => (p.quote.vs_mid_bps = -35));
      const err = await pit.trade({ ...orbio, allowUnmarked: true }).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "IMPACT_OWN"]);
      // ORBIO has no feed: its price is the pools', so the client asks for the caller's own floor.
      const unmarked = await pit.trade(orbio).catch((e) => e);
      expect([unmarked.code, unmarked.rule], unmarked.message).toEqual(["VERIFICATION_FAILED", "PRICE"]);
      const floor = await pit.trade({ ...orbio, minOut: 10n ** 30n }).catch((e) => e);
      expect([floor.code, floor.rule], floor.message).toEqual(["VERIFICATION_FAILED", "MIN_OUT"]);
      expect(account.signed.tx).toBe(0);
      const t = await pit.trade({ ...orbio, allowUnmarked: true });
      expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
    },
  );

  it("refuses a plan for another amount than the one asked (the request was changed on its way)", async () => {
    const account = counted(SHARED);
    const pit = await client(account);
    hostile.tamperRequest = (path, body) =>
      path.startsWith("/api/v1/live/prepare") ? { ...body, amount_in: String(BigInt(body.amount_in) * 3n) } : body;
    const err = await pit.trade({ tokenIn: "ETH", tokenOut: "USDG", amountIn: parseEther("0.01") }).catch((e) => e);
    hostile.tamperRequest = null;
    expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "RECIPIENT"]);
    expect(account.signed.tx).toBe(0);
  });

  it("refuses a fill far from the oracles' marks even when its own quote agrees (PRICE)", async () => {
    const { dn } = stack;
    const feed = dn.universe.tokens.ETH!.feed!;
    const [, before] = await dn.pub.readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" });
    const account = counted(SHARED);
    const pit = await client(account);
    // The plan is priced at the pool; by the time the client checks it, ETH's oracle says 8 % more.
    hostile.tamper = async (path, body) =>
      path.startsWith("/api/v1/live/prepare") ? (await postAnswer(dn, feed, (before * 108n) / 100n), body) : body;
    const err = await pit.trade({ tokenIn: "ETH", tokenOut: "USDG", amountIn: parseEther("0.01") }).catch((e) => e);
    hostile.tamper = null;
    await postAnswer(dn, feed, before);
    expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "PRICE"]);
    expect(account.signed.tx).toBe(0);
    // The tests after this one trade at ETH's restored answer: a CI run went on at once, and four later trades were
    // refused ROUTE_VS_REF against the raised answer while a loaded indexer caught up.
    await untilMarked(stack.api, "ETH", Number(before) / 1e8);
  });

  it("refuses a challenge for another domain or wallet before signing it", async () => {
    const account = counted();
    hostile.tamper = (path, body) =>
      path.startsWith("/api/v1/auth/challenge")
        ? { ...body, message: body.message.replace(/^[^ ]+ wants/, "evil.example wants") }
        : body;
    const pit = await createPitClient({ baseUrl: hostile.url, rpcUrl: stack.dn.anvil.rpcUrl, account, pins });
    const err = await pit.signIn().catch((e) => e);
    hostile.tamper = null;
    expect(err.code).toBe("CONFIG_MISMATCH");
    expect(account.signed.msg).toBe(0);
  });

  it("refuses a server whose config is not the pinned one", async () => {
    hostile.tamper = (path, body) => (path.startsWith("/api/v1/config") ? { ...body, router: ATTACKER } : body);
    const err = await createPitClient({
      baseUrl: hostile.url,
      rpcUrl: stack.dn.anvil.rpcUrl,
      account: counted(),
      pins,
    }).catch((e) => e);
    hostile.tamper = null;
    expect([err.code, err.message]).toEqual(["CONFIG_MISMATCH", expect.stringContaining("router")]);
  });

  it("pins the canonical pools from config and refuses a server publishing another set (CONFIG_MISMATCH)", async () => {
    const ethUsdg = pins.pools.find((p) => p.currency0 === zeroAddress && p.currency1 === pins.tokens.USDG!.address);
    expect(ethUsdg).toMatchObject({ fee: 500, tickSpacing: 10, hooks: zeroAddress });
    const another = (p: any) => ({
      ...p,
      fee: 10_000,
      tick_spacing: 200,
      id: poolId({ currency0: p.currency0, currency1: p.currency1, fee: 10_000, tickSpacing: 200, hooks: p.hooks }),
    });
    for (const edit of [
      (pools: any[]) => pools.push(another(pools[0])),
      (pools: any[]) => (pools[0] = another(pools[0])),
      (pools: any[]) => (pools[0].fee = 3_000),
    ]) {
      hostile.tamper = (path, body) => (path.startsWith("/api/v1/config") ? (edit(body.universe.pools), body) : body);
      const err = await createPitClient({
        baseUrl: hostile.url,
        rpcUrl: stack.dn.anvil.rpcUrl,
        account: counted(),
        pins,
      }).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.message]).toEqual(["CONFIG_MISMATCH", expect.stringContaining("pool")]);
    }
  });

  it(
    "refuses a route through a hookless pool of pinned tokens that is not a pinned pool (one the server made): " +
      "nothing signed",
    async () => {
      // The server's own ETH/USDG pool at the market's price and a 1 % LP fee: within PRICE's 300 bps, twenty
      // times the canonical pool's fee.
      await makeAttackerPool();
      const account = counted(SHARED);
      await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
      const pit = await client(account);
      hostile.tamper = async (path, plan) => {
        if (!path.startsWith("/api/v1/live/prepare")) return plan;
        let swapIn = 0n;
        editCommand(tx(plan).data, Command.V4_SWAP, (i) => editSwap(i, (p) => ((swapIn = p.amountIn), p)));
        const out = await quoteExactInputSingle(stack.dn.pub, pins.v4Quoter, attackerKey, true, swapIn);
        const min = (out * 9_950n) / 10_000n;
        tx(plan).data = editCommand(
          editCommand(tx(plan).data, Command.V4_SWAP, (i) =>
            editSwap(i, (p) => ({ ...p, poolKey: attackerKey, amountOutMinimum: min })),
          ),
          Command.SWEEP,
          (i) => reAddr3(i, ([t, r]) => [t, r, min]),
        );
        Object.assign(plan, {
          amount_out_expected: out.toString(),
          amount_out_min: min.toString(),
          quote: { ...plan.quote, vs_mid_bps: -300 },
        });
        return plan;
      };
      const err = await pit.trade(sell).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "V4_HOOKS"]);
      expect(account.signed.tx).toBe(0);
    },
  );

  it(
    "raises HASH_MISMATCH, with the signed hash, " +
      "when the server answers another hash than the signed transaction's, or none",
    async () => {
      const account = counted();
      await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
      const pit = await client(account);
      for (const answer of [(body: any) => ({ ...body, tx_hash: `0x${"ab".repeat(32)}` }), () => null]) {
        hostile.tamper = (path, body) => (path.startsWith("/api/v1/live/submit") ? answer(body) : body);
        const err = await pit.trade(sell).catch((e) => e);
        hostile.tamper = null;
        expect(err).toBeInstanceOf(PitError);
        expect(err.code).toBe("HASH_MISMATCH");
        expect(err.detail.signed.hash).toMatch(/^0x[0-9a-f]{64}$/);
      }
    },
  );

  it("refuses a wallet that cannot pay before signing (INSUFFICIENT_FUNDS), and carries server codes", async () => {
    const account = counted();
    // Enough for the amount, not for the gas on top.
    await stack.dn.test.setBalance({ address: account.address, value: parseEther("0.0134") });
    const pit = await client(account, stack.api.url);
    const err = await pit.trade(sell).catch((e) => e);
    expect(err.code, err.message).toBe("INSUFFICIENT_FUNDS");
    expect(account.signed.tx).toBe(0);
    const bad = await pit.trade({ tokenIn: "ETH", tokenOut: "NOPE", notionalUsd: 5 }).catch((e) => e);
    expect(bad).toBeInstanceOf(PitError);
    expect(bad.code).not.toMatch(/^HTTP_/);
  });

  it("trades against the real service: verified, signed, relayed, mined, output checked", async () => {
    const account = counted();
    await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
    const pit = await client(account, stack.api.url);
    const t = await pit.trade(sell);
    expect(account.signed.tx).toBe(1);
    expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
    expect(t.amountOut).toBeGreaterThan(0n);
    const receipt = await stack.dn.pub.getTransactionReceipt({ hash: t.txHash });
    expect(receipt.status).toBe("success");
  });

  it("trades eth -> usdg written in lower case, as the server matches symbols (issue 30: not RECIPIENT)", async () => {
    const account = counted();
    await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
    const pit = await client(account, stack.api.url);
    const t = await pit.trade({ ...sell, tokenIn: "eth", tokenOut: "usdg" });
    expect(account.signed.tx).toBe(1);
    expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
  });

  it("runs the README's ten-line example: signs in, trades ETH -> USDG, prints the mined amount", async () => {
    const file = readFileSync(join(ROOT, "sdk/examples/trade.ts"), "utf8");
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain(file);
    expect(
      file
        .trim()
        .split("\n")
        .filter((l) => l.trim()).length,
    ).toBeLessThanOrEqual(10);
    const out = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "sdk/examples/trade.ts", stack.api.url, stack.dn.anvil.rpcUrl],
        { cwd: ROOT, env: { ...process.env, DO_NOT_TRACK: "1" } },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (b) => (stdout += String(b)));
      child.stderr.on("data", (b) => (stderr += String(b)));
      child.on("close", (status) => done({ status, stdout, stderr }));
    });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^mined 0x[0-9a-f]{64}: \d+(\.\d+)? USDG\n$/);
  });

  it("rebuilds league statements (LEAGUE_STATEMENT), lets an owner sign only its own (SIGNING_MISMATCH)", async () => {
    const { dn } = stack;
    const owner = privateKeyToAccount(generatePrivateKey());
    const w = dn.walletFor(dn.deployer);
    const args = [
      dn.token("USDG"),
      "SDK",
      "Agent SDK",
      owner.address,
      privateKeyToAccount(generatePrivateKey()).address,
    ] as const;
    const { result } = await dn.pub.simulateContract({
      account: w.account!,
      address: dn.universe.contracts.partnerAgentVault,
      abi: partnerAgentVaultAbi,
      functionName: "register",
      args,
    });
    await dn.mined(
      await w.writeContract({
        address: dn.universe.contracts.partnerAgentVault,
        abi: partnerAgentVaultAbi,
        functionName: "register",
        args,
      }),
    );
    const agentId = Number(result);
    const account = counted();
    const pit = await client(account);
    // The server's text names another trading wallet: not this client's statement.
    hostile.tamper = (path, body) =>
      path.startsWith("/api/v1/league/statement")
        ? { ...body, message: body.message.replace(account.address.toLowerCase(), ATTACKER) }
        : body;
    expect((await pit.leagueStatement({ agentId }).catch((e) => e)).code).toBe("LEAGUE_STATEMENT");
    hostile.tamper = (path, body) =>
      path.startsWith("/api/v1/league/statement")
        ? {
            ...body,
            message: body.message
              .split("\n")
              .filter((l: string) => !l.startsWith("Eligibility"))
              .join("\n"),
          }
        : body;
    expect((await pit.leagueStatement({ agentId }).catch((e) => e)).code).toBe("LEAGUE_STATEMENT");
    hostile.tamper = null;
    const st = await pit.leagueStatement({ agentId });
    // Another owner, or a prize text without the eligibility line, is not signed.
    expect((await signStatement(privateKeyToAccount(generatePrivateKey()), st).catch((e) => e)).code).toBe(
      "SIGNING_MISMATCH",
    );
    expect(
      (
        await signStatement(owner, {
          ...st,
          message: st.message
            .split("\n")
            .filter((l) => !l.startsWith("Eligibility"))
            .join("\n"),
        }).catch((e) => e)
      ).code,
    ).toBe("SIGNING_MISMATCH");
    const entered = await pit.post<{ confirmed: boolean }>("/league/enter", {
      agent_id: agentId,
      nonce: st.nonce,
      signature: await signStatement(owner, st),
    });
    expect(entered.confirmed).toBe(true);
  });

  it("reads the account only as this wallet's (ACCOUNT_WALLET, ACCOUNT_SHAPE)", async () => {
    const account = counted(SHARED);
    const pit = await client(account);
    const mine = await pit.account<{ wallet: string; trades: unknown[] }>("/me/trades");
    expect(mine.wallet.toLowerCase()).toBe(account.address.toLowerCase());
    hostile.tamper = (path, body) => (path.startsWith("/api/v1/me/trades") ? { ...body, wallet: ATTACKER } : body);
    expect((await pit.account("/me/trades").catch((e) => e)).code).toBe("ACCOUNT_WALLET");
    hostile.tamper = (path, body) => (path.startsWith("/api/v1/me/trades") ? { wallet: body.wallet } : body);
    expect((await pit.account("/me/trades").catch((e) => e)).code).toBe("ACCOUNT_SHAPE");
    hostile.tamper = null;
  });

  describe("an ERC-20 input (the Permit2 round trip)", () => {
    const buy = { tokenIn: "USDG", tokenOut: "ETH", amountIn: 50_000_000n };
    const usdgWallet = async (pk?: Hex) => {
      const a = counted(pk);
      await stack.dn.test.setBalance({ address: a.address, value: parseEther("1") });
      await stack.dn.mined(
        await stack.dn.walletFor(stack.dn.deployer).writeContract({
          address: stack.dn.token("USDG"),
          abi: mintableAbi,
          functionName: "mint",
          args: [a.address, 1_000_000_000n],
        }),
      );
      return a;
    };
    const firstPrepare = (edit: (p: any) => void) => (path: string, body: any) =>
      path.startsWith("/api/v1/live/prepare") && !body.tx ? (edit(body), body) : body;

    it("refuses an approve to another spender: no transaction, no permit signed", async () => {
      const a = await usdgWallet(SHARED);
      const pit = await client(a);
      hostile.tamper = firstPrepare((p) => {
        const step = p.steps.find((s: any) => s.kind === "approve");
        step.tx.data = encodeFunctionData({
          abi: erc20Abi,
          functionName: "approve",
          args: [ATTACKER, BigInt(p.amount_in)],
        });
      });
      const err = await pit.trade(buy).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "RECIPIENT"]);
      expect(err.message).toContain("Permit2");
      expect([a.signed.tx, a.signed.typed]).toEqual([0, 0]);
    });

    it("refuses a permit naming another spender or a larger amount: nothing signed", async () => {
      for (const edit of [
        (p: any) => (p.permit.typed_data.message.spender = ATTACKER),
        (p: any) => (p.permit.typed_data.message.details.amount = String(BigInt(p.amount_in) * 10n)),
      ]) {
        const a = await usdgWallet(SHARED);
        const pit = await client(a);
        hostile.tamper = firstPrepare(edit);
        const err = await pit.trade(buy).catch((e) => e);
        hostile.tamper = null;
        expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "RECIPIENT"]);
        expect([a.signed.tx, a.signed.typed]).toEqual([0, 0]);
      }
    });

    it("refuses an approve and permit for more than asked, the plan's amount raised too: nothing signed", async () => {
      const a = await usdgWallet(SHARED);
      for (const ask of [buy, { tokenIn: "USDG", tokenOut: "ETH", notionalUsd: 30 }]) {
        const pit = await client(a);
        hostile.tamper = firstPrepare((p) => {
          const more = BigInt(p.amount_in) * 1_000n;
          p.amount_in = more.toString();
          p.steps.find((s: any) => s.kind === "approve").tx.data = encodeFunctionData({
            abi: erc20Abi,
            functionName: "approve",
            args: [pins.permit2, more],
          });
          p.permit.typed_data.message.details.amount = more.toString();
        });
        const err = await pit.trade(ask).catch((e) => e);
        hostile.tamper = null;
        expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "RECIPIENT"]);
        expect([a.signed.tx, a.signed.typed]).toEqual([0, 0]);
      }
    });

    it("refuses a plan listing more than one approve (each exact, each a tx and a wait): nothing signed", async () => {
      const a = await usdgWallet(SHARED);
      const pit = await client(a);
      hostile.tamper = firstPrepare((p) => {
        const approve = p.steps.find((s: any) => s.kind === "approve");
        p.steps.unshift(structuredClone(approve), structuredClone(approve));
      });
      const err = await pit.trade(buy).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "RECIPIENT"]);
      expect(err.message).toContain("approve");
      expect([a.signed.tx, a.signed.typed]).toEqual([0, 0]);
    });

    it("trades USDG -> ETH against the real service: approve, permit, swap, all checked", async () => {
      const a = await usdgWallet();
      const pit = await client(a, stack.api.url);
      const t = await pit.trade(buy);
      expect([a.signed.tx, a.signed.typed]).toEqual([2, 1]);
      expect(t.amountIn).toBe(buy.amountIn);
      expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
    });
  });

  describe("a session grant", () => {
    const executor = privateKeyToAccount(generatePrivateKey()).address;
    const grant = { executor, maxTradeUsd: 50, maxDayUsd: 120, maxTrades: 5, expiresInS: 3_600, allow7702: true };
    const started = (edit: (s: any) => void) => (path: string, body: any) =>
      path.startsWith("/api/v1/live/session/grant") && body.sign ? (edit(body), body) : body;
    const grantCases: [string, (s: any) => void, string, string | undefined][] = [
      [
        "wider limits in the binding",
        (s) => (s.sign.delegation.binding.limits.max_trade_usd = 1_000),
        "VERIFICATION_FAILED",
        "GRANT_CAPS",
      ],
      [
        "more calls on chain than trades asked",
        (s) => (s.on_chain_bounds.max_calls += 100),
        "VERIFICATION_FAILED",
        "GRANT_CAPS",
      ],
      [
        "a caveat's terms changed (a later expiry)",
        (s) => (s.sign.delegation.typed_data.message.caveats[2].terms = `0x${"00".repeat(16)}${"ff".repeat(16)}`),
        "VERIFICATION_FAILED",
        "GRANT_BINDING",
      ],
      [
        "a caveat dropped (no redeemer bound)",
        (s) => s.sign.delegation.typed_data.message.caveats.splice(5, 1),
        "VERIFICATION_FAILED",
        "GRANT_BINDING",
      ],
      [
        "another delegate",
        (s) => (s.sign.delegation.typed_data.message.delegate = ATTACKER),
        "VERIFICATION_FAILED",
        "GRANT_BINDING",
      ],
      [
        "another co-signer in the binding",
        (s) => (s.sign.delegation.binding.cosigner = ATTACKER),
        "VERIFICATION_FAILED",
        "GRANT_BINDING",
      ],
      [
        "the wallet's code changed to another contract",
        (s) => s.sign.authorization && (s.sign.authorization.contract_address = ATTACKER),
        "VERIFICATION_FAILED",
        "GRANT_BINDING",
      ],
    ];
    it.each(grantCases)("refuses %s, signs nothing", async (_name, edit, code, rule) => {
      const account = counted(SHARED);
      const pit = await client(account);
      hostile.tamper = started(edit);
      const err = await pit.grantSession(grant).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual([code, rule]);
      expect(account.signed.typed).toBe(0);
    });

    /**
     * The root's ETH caps set to `wei` (per call and per day), its caveats re-encoded to match: a root
     * consistent with its bounds.
     */
    const ethCaps = (perCall: (honest: bigint) => bigint, perDay: (honest: bigint) => bigint) => (s: any) => {
      const ob = s.on_chain_bounds;
      const [call, day] = [perCall(BigInt(ob.eth_per_call_wei)), perDay(BigInt(ob.eth_per_day_wei))];
      [ob.eth_per_call_wei, ob.eth_per_day_wei] = [call.toString(), day.toString()];
      const enforcers = pins.session!.enforcers;
      for (const c of s.sign.delegation.typed_data.message.caveats) {
        if (c.enforcer.toLowerCase() === enforcers.ValueLteEnforcer!.toLowerCase())
          c.terms = encodeAbiParameters([{ type: "uint256" }], [call]);
        if (c.enforcer.toLowerCase() === enforcers.NativeTokenPeriodTransferEnforcer!.toLowerCase()) {
          const [, period, start] = decodeAbiParameters(
            [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }],
            c.terms,
          );
          c.terms = encodeAbiParameters(
            [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }],
            [day, period, start],
          );
        }
      }
    };
    const capCases: [string, (s: any) => void][] = [
      [
        "1,000,000 ETH per call and per day",
        ethCaps(
          () => parseEther("1000000"),
          () => parseEther("1000000"),
        ),
      ],
      [
        "twice the ETH per call",
        ethCaps(
          (x) => x * 2n,
          (x) => x,
        ),
      ],
      [
        "twice the ETH per day",
        ethCaps(
          (x) => x,
          (x) => x * 2n,
        ),
      ],
    ];
    it.each(capCases)(
      "refuses a root whose ETH caps are %s the limits asked, at the client's own ETH mark (GRANT_CAPS), signs nothing",
      async (_name, edit) => {
        const account = counted(SHARED);
        const pit = await client(account);
        hostile.tamper = started(edit);
        const err = await pit.grantSession(grant).catch((e) => e);
        hostile.tamper = null;
        expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "GRANT_CAPS"]);
        expect(err.message).toMatch(/ETH/);
        expect([account.signed.typed, account.signed.tx]).toEqual([0, 0]);
      },
    );

    it("asks consent before a code change (CONSENT_REQUIRED), then grants with it on the real service", async () => {
      const account = counted();
      await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
      const pit = await client(account, stack.api.url);
      const err = await pit.grantSession({ ...grant, allow7702: false }).catch((e) => e);
      expect(err.code).toBe("CONSENT_REQUIRED");
      expect(account.signed.typed).toBe(0);
      const on = await pit.grantSession(grant);
      expect(on.status).toBe("active");
      expect(account.signed.typed).toBe(1);
    });
  });

  describe("a live hosted agent's executor", () => {
    const liveAgent = {
      brain: "rule",
      params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 },
      interval_s: 60,
      pairs: ["ETH/USDG"],
      limits: { max_trade_usd: 100, max_day_usd: 500, max_position_usd: 800 },
    };
    const created = (edit: (a: any) => void) => (path: string, body: any) =>
      path === "/api/v1/hosted" && body.executor_attestation ? (edit(body.executor_attestation), body) : body;
    const other = privateKeyToAccount(generatePrivateKey());
    const cases: [string, (a: any) => void][] = [
      ["for another owner", (a) => (a.message = a.message.replace(/owner: 0x[0-9a-fA-F]{40}/, `owner: ${ATTACKER}`))],
      ["for another agent", (a) => (a.message = a.message.replace(/agent: \S+/, "agent: ha_other"))],
      ["naming an executor the server holds no key for", (a) => (a.executor = other.address)],
      [
        "missing",
        (a) => {
          for (const k of Object.keys(a)) delete a[k];
        },
      ],
    ];
    it.each(cases)("refuses an attestation %s (EXECUTOR_ATTESTATION)", async (_name, edit) => {
      const pit = await client(counted(SHARED));
      hostile.tamper = created(edit);
      const err = await pit.createLiveAgent(liveAgent).catch((e) => e);
      hostile.tamper = null;
      expect([err.code, err.rule], err.message).toEqual(["VERIFICATION_FAILED", "EXECUTOR_ATTESTATION"]);
    });

    it("checks a real executor, then grants it a session the owner signs", async () => {
      const account = counted();
      await stack.dn.test.setBalance({ address: account.address, value: parseEther("1") });
      const pit = await client(account, stack.api.url);
      const { agent, executor } = await pit.createLiveAgent(liveAgent);
      expect(agent.id).toMatch(/^ha_/);
      const on = await pit.grantSession({
        executor,
        maxTradeUsd: 50,
        maxDayUsd: 120,
        maxTrades: 5,
        expiresInS: 3_600,
        allow7702: true,
      });
      expect(on.status).toBe("active");
    });
  });
});
