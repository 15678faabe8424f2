import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  concat,
  encodeFunctionData,
  encodePacked,
  numberToHex,
  parseAbi,
  parseEther,
  parseEventLogs,
  size,
  slice,
  type Address,
  type Hex,
} from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import { createLogicalOrWrapperArgs, encodeDelegations } from "@metamask/delegation-core";
import { erc20Abi } from "../../abis/erc20.js";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { launchpadAbi } from "../../abis/fixtures.js";
import {
  curveGroupOf,
  curveGroupSizes,
  delegationFromJson,
  delegationHash,
  delegationTypedData,
  encodeBatch,
  leafCaveats,
  walletBatch,
  withGroup,
  withRootGroup,
  type Delegation,
  type Execution,
} from "../../lib/delegation.js";
import { ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { grantedSession, type Granted } from "../helpers/sessions.js";
import { startStack, withTwapHistory, type Stack } from "../helpers/stack.js";

/**
 * ATTACK: a session's curve trade is one leaf over the wallet's own execute(batch, [fee, curve
 * call]) under the curve root. On the devnet with the real contracts, try to move value as (a) the
 * executor alone, from what live/session/trade answered, (b) the co-signer key alone, (c) both keys
 * together. (a) and (b) move nothing; (c) stays inside the curve root: the fee recipient, the
 * launchpad and the wallet as the only counterparties, the wallet's ETH per trade, the trade count,
 * the launchpad's allowance. Each section ends with a redemption that passes, so the reverts are
 * the bounds and not a broken harness.
 */
type Item = { chain: Delegation[]; mode: Hex; call: Hex };
type Account = ReturnType<typeof privateKeyToAccount>;
const SINGLE = `0x${"00".repeat(32)}` as Hex;
const SINGLE_TRY = `0x0001${"00".repeat(30)}` as Hex;
const BATCH = `0x01${"00".repeat(31)}` as Hex;
const BATCH_TRY = `0x0101${"00".repeat(30)}` as Hex;
const ANY_DELEGATE = "0x0000000000000000000000000000000000000a11" as Address;
const walletExecute = parseAbi(["function execute(bytes32 mode, bytes executionCalldata)"]);
const single = (e: Execution) => encodePacked(["address", "uint256", "bytes"], [e.target, e.value, e.callData]);

let stack: Stack;
let g: Granted;
/** Where stolen value would go (it sends nothing); `outsider` sends the transactions of a third party. */
let thief: Account;
let outsider: Account;
let fees: Address;
/** The chain's time at set-up: the chain runs ahead of the wall clock (an hour of mark history). */
let chainNow = 0;
const cosignerKey = devnetAccount(ACCOUNT_ROLES.cosigner);
const launch = () => stack.dn.universe.devnet!.fixtures.launchToken as Address;
const c = () => stack.dn.universe.contracts;
const launchOf = (a: Address) =>
  stack.dn.pub.readContract({ address: launch(), abi: erc20Abi, functionName: "balanceOf", args: [a] });
const ethOf = (a: Address) => stack.dn.pub.getBalance({ address: a });
const sizes = curveGroupSizes(1);
const curveRoot = (group = 0) => withGroup(g.curveRoots[0]!, group, sizes);

/** What must not move: the wallet's ETH and curve tokens, the fee recipient's and the thief's. */
const watch = async () => ({
  walletEth: await ethOf(g.wallet.address),
  walletTokens: await launchOf(g.wallet.address),
  fees: await ethOf(fees),
  thiefEth: await ethOf(thief.address),
  thiefTokens: await launchOf(thief.address),
});

async function send(from: Account, items: Item[], value = 0n): Promise<string> {
  const data = encodeFunctionData({
    abi: delegationManagerAbi,
    functionName: "redeemDelegations",
    args: [items.map((i) => encodeDelegations(i.chain) as Hex), items.map((i) => i.mode), items.map((i) => i.call)],
  });
  return (
    await stack.dn.mined(
      await stack.dn.walletFor(from).sendTransaction({ to: c().delegationManager, data, value, gas: 3_000_000n }),
    )
  ).status;
}

/** A delegation signed by `by` (the co-signer, or the executor sub-delegating its leaf). */
async function signed(
  by: Account | typeof cosignerKey,
  delegate: Address,
  authority: Hex,
  caveats: Delegation["caveats"],
): Promise<Delegation> {
  const unsigned = {
    delegate,
    delegator: by.address,
    authority,
    caveats,
    salt: BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000)),
  };
  return { ...unsigned, signature: await by.signTypedData(delegationTypedData(4663, c().delegationManager, unsigned)) };
}
/** A leaf the co-signer's key signs for `execution` (what a stolen co-signer key can make). */
const stolenLeaf = (execution: Execution, delegate = g.executor.address) =>
  signed(
    cosignerKey,
    delegate,
    delegationHash(g.curveRoots[0]!),
    leafCaveats({ execution, before: chainNow + 3_600, cosignerNonce: 0n }, c().enforcers),
  );

const fee = (value: bigint, to = fees): Execution => ({ target: to, value, callData: "0x" });
const buy = (value: bigint, to = g.wallet.address, token = launch()): Execution => ({
  target: c().launchpad,
  value,
  callData: encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [token, 0n, to] }),
});
const sell = (tokensIn: bigint, to = g.wallet.address): Execution => ({
  target: c().launchpad,
  value: 0n,
  callData: encodeFunctionData({ abi: launchpadAbi, functionName: "sell", args: [launch(), tokensIn, 0n, to] }),
});
const selfCall = (mode: Hex, executionCalldata: Hex): Execution => ({
  target: g.wallet.address,
  value: 0n,
  callData: encodeFunctionData({ abi: walletExecute, functionName: "execute", args: [mode, executionCalldata] }),
});

/** Both keys: the co-signer signs a leaf over `execution`, the executor redeems it under the curve root's `group`. */
const bothKeys = async (execution: Execution, group = curveGroupOf(0, true), mode = SINGLE) =>
  send(g.executor, [{ chain: [await stolenLeaf(execution), curveRoot(group)], mode, call: single(execution) }]);

beforeAll(async () => {
  // An hour of history (a curve session's mark is its 30-minute median, which a fresh snapshot lacks);
  // the chain then runs an hour ahead of the wall clock, so the session lasts two.
  stack = await startStack({ before: withTwapHistory });
  chainNow = Number((await stack.dn.pub.getBlock()).timestamp);
  fees = stack.api.config.feeRecipient;
  thief = await stack.dn.freshWallet(parseEther("1"));
  outsider = await stack.dn.freshWallet(parseEther("1"));
  g = await grantedSession(stack, {
    tokens: ["ETH", launch()],
    accept_risks: ["NO_INDEPENDENT_MARK"],
    max_trades: 4,
    expires_in_s: 7_200,
  });
}, 180_000);
afterAll(() => stack?.stop());

describe("a session's curve trade under attack", () => {
  it("the executor alone, from the trade answer: no other group, root, mode, redeemer or second use moves anything; " +
    "the honest transaction once", async () => {
    const t = await stack.agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 10 },
      g.executorKey,
    );
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const leaf = delegationFromJson({ ...t.json.leaf, delegator: t.json.leaf.delegator ?? cosignerKey.address });
    const x = t.json.execution;
    const calls: Execution[] = x.calls.map((k: any) => ({
      target: k.target,
      value: BigInt(k.value),
      callData: k.call_data,
    }));
    const batch = walletBatch(g.wallet.address, calls);
    const badGroup = {
      ...g.curveRoots[0]!,
      caveats: g.curveRoots[0]!.caveats.map((cv, i) =>
        i === 0
          ? {
              ...cv,
              args: createLogicalOrWrapperArgs({
                groupIndex: 2n,
                caveatArgs: Array.from({ length: 5 }, () => new Uint8Array(0)),
              }),
            }
          : cv,
      ),
    };
    const toOutsider = await signed(g.executor, outsider.address, delegationHash(leaf), []);
    const toAnyone = await signed(g.executor, ANY_DELEGATE, delegationHash(leaf), []);
    const before = await watch();
    const tries: [string, Account, Item[]][] = [
      [
        "the sell group",
        g.executor,
        [{ chain: [leaf, curveRoot(curveGroupOf(0, false))], mode: SINGLE, call: single(batch) }],
      ],
      ["a group past the last", g.executor, [{ chain: [leaf, badGroup], mode: SINGLE, call: single(batch) }]],
      [
        "under the session's main root",
        g.executor,
        [{ chain: [leaf, withRootGroup(g.root, 0)], mode: SINGLE, call: single(batch) }],
      ],
      ["the curve root with no leaf", g.executor, [{ chain: [curveRoot()], mode: SINGLE, call: single(batch) }]],
      ["single-try mode", g.executor, [{ chain: [leaf, curveRoot()], mode: SINGLE_TRY, call: single(batch) }]],
      [
        "batch mode around the wallet batch",
        g.executor,
        [{ chain: [leaf, curveRoot()], mode: BATCH, call: encodeBatch([batch]) }],
      ],
      [
        "the inner calls in batch-try mode",
        g.executor,
        [{ chain: [leaf, curveRoot()], mode: BATCH_TRY, call: encodeBatch(calls) }],
      ],
      [
        "the leaf twice in one transaction",
        g.executor,
        [0, 1].map(() => ({ chain: [leaf, curveRoot()], mode: SINGLE, call: single(batch) })),
      ],
      [
        "sub-delegated to an outsider",
        outsider,
        [{ chain: [toOutsider, leaf, curveRoot()], mode: SINGLE, call: single(batch) }],
      ],
      [
        "sub-delegated to anyone, sent by an outsider",
        outsider,
        [{ chain: [toAnyone, leaf, curveRoot()], mode: SINGLE, call: single(batch) }],
      ],
    ];
    const moved: string[] = [];
    for (const [name, from, items] of tries) if ((await send(from, items)) === "success") moved.push(name);
    expect(moved).toEqual([]);
    expect(await watch()).toEqual(before);

    // The honest redemption passes once; the same again (inside its 120 s) reverts.
    expect(await send(g.executor, [{ chain: [leaf, curveRoot()], mode: SINGLE, call: single(batch) }])).toBe("success");
    const once = await watch();
    expect(once.walletTokens).toBeGreaterThan(before.walletTokens);
    expect(once.fees - before.fees).toBeGreaterThanOrEqual(calls[0]!.value);
    expect(await send(g.executor, [{ chain: [leaf, curveRoot()], mode: SINGLE, call: single(batch) }])).toBe(
      "reverted",
    );
    expect(await watch()).toEqual(once);
  }, 60_000);

  it("the co-signer key alone redeems nothing: not the root it is the delegate of, not a leaf to itself, an outsider " +
    "or anyone", async () => {
    const trade = walletBatch(g.wallet.address, [fee(1n), buy(parseEther("0.001"))]);
    const before = await watch();
    const tries: [string, Account | typeof cosignerKey, Item[]][] = [
      ["the root, by its delegate", cosignerKey, [{ chain: [curveRoot()], mode: SINGLE, call: single(trade) }]],
      [
        "a leaf to itself",
        cosignerKey,
        [{ chain: [await stolenLeaf(trade, cosignerKey.address), curveRoot()], mode: SINGLE, call: single(trade) }],
      ],
      [
        "a leaf to an outsider",
        outsider,
        [{ chain: [await stolenLeaf(trade, outsider.address), curveRoot()], mode: SINGLE, call: single(trade) }],
      ],
      [
        "a leaf to anyone",
        outsider,
        [{ chain: [await stolenLeaf(trade, ANY_DELEGATE), curveRoot()], mode: SINGLE, call: single(trade) }],
      ],
    ];
    const moved: string[] = [];
    for (const [name, from, items] of tries) if ((await send(from as Account, items)) === "success") moved.push(name);
    expect(moved).toEqual([]);
    expect(await watch()).toEqual(before);
  }, 60_000);

  it("both keys: no other mode, encoding, token, recipient, outer ETH or amount past the root's bounds; the trade " +
    "count ends it", async () => {
    const { dn } = stack;
    const cap = BigInt(g.start.on_chain_bounds.curve_root.eth_per_call_wei);
    expect(cap).toBeGreaterThan(0n);
    // The wallet holds more curve tokens than the launchpad's allowance (bought with its own key).
    await dn.mined(
      await dn.walletFor(g.wallet).writeContract({
        address: c().launchpad,
        abi: launchpadAbi,
        functionName: "buy",
        args: [launch(), 0n, g.wallet.address],
        value: parseEther("0.5"),
      }),
    );
    const allowance = await dn.pub.readContract({
      address: launch(),
      abi: erc20Abi,
      functionName: "allowance",
      args: [g.wallet.address, c().launchpad],
    });
    expect(await launchOf(g.wallet.address)).toBeGreaterThan(allowance + 1n);
    // A token an outsider launched on the same launchpad.
    const launched = await dn.mined(
      await dn.walletFor(outsider).writeContract({
        address: c().launchpad,
        abi: launchpadAbi,
        functionName: "launch",
        args: ["Thief", "THF", 1],
      }),
    );
    const otherToken = parseEventLogs({ abi: launchpadAbi, logs: launched.logs, eventName: "TokenLaunched" })[0]!.args
      .token as Address;

    const honest = encodeBatch([fee(1n), buy(parseEther("0.001"))]);
    // decodeBatch trusts the array offset: point it at a second array appended after the honest one.
    const hostile = encodeBatch([buy(parseEther("0.001"), thief.address)]);
    const redirected = concat([numberToHex(size(honest), { size: 32 }), slice(honest, 32), slice(hostile, 32)]);
    const [allIn, proceeds] = [
      allowance,
      (
        await dn.pub.readContract({
          address: c().launchpad,
          abi: launchpadAbi,
          functionName: "quoteSell",
          args: [launch(), allowance],
        })
      )[0],
    ];
    const before = await watch();
    const tries: [string, () => Promise<string>][] = [
      [
        "the inner batch in try mode, the fee failing",
        async () => bothKeys(selfCall(BATCH_TRY, encodeBatch([fee(parseEther("1000")), buy(parseEther("0.001"))]))),
      ],
      [
        "the inner call in single mode, no fee",
        async () => bothKeys(selfCall(SINGLE, single(buy(parseEther("0.001"))))),
      ],
      ["the batch's offset pointing past the honest array", async () => bothKeys(selfCall(BATCH, redirected))],
      ["ETH on the outer call", async () => bothKeys({ ...selfCall(BATCH, honest), value: 1n })],
      [
        "another token's curve (buy group)",
        async () =>
          bothKeys(walletBatch(g.wallet.address, [fee(1n), buy(parseEther("0.001"), g.wallet.address, otherToken)])),
      ],
      [
        "another token's curve (sell group)",
        async () =>
          bothKeys(
            walletBatch(g.wallet.address, [fee(1n), buy(parseEther("0.001"), g.wallet.address, otherToken)]),
            curveGroupOf(0, false),
          ),
      ],
      [
        "a sale paying the thief",
        async () => bothKeys(walletBatch(g.wallet.address, [fee(1n), sell(1n, thief.address)]), curveGroupOf(0, false)),
      ],
      [
        "fee and buy one wei over the ETH per trade",
        async () => bothKeys(walletBatch(g.wallet.address, [fee(1n), buy(cap)])),
      ],
      [
        "all of the ETH per trade as the fee, plus one",
        async () => bothKeys(walletBatch(g.wallet.address, [fee(cap + 1n), buy(0n)])),
      ],
      [
        "a sale past the launchpad's allowance",
        async () => bothKeys(walletBatch(g.wallet.address, [fee(1n), sell(allowance + 1n)]), curveGroupOf(0, false)),
      ],
      [
        "a sale's proceeds and the ETH per trade, plus one, as the fee",
        async () =>
          bothKeys(walletBatch(g.wallet.address, [fee(proceeds + cap + 1n), sell(allIn)]), curveGroupOf(0, false)),
      ],
      [
        "the same honest trade twice, redeemed in one transaction in batch mode",
        async () => {
          const e = walletBatch(g.wallet.address, [fee(1n), buy(parseEther("0.001"))]);
          return send(g.executor, [
            { chain: [await stolenLeaf(e), curveRoot()], mode: BATCH, call: encodeBatch([e, e]) },
          ]);
        },
      ],
    ];
    const moved: string[] = [];
    for (const [name, run] of tries) if ((await run()) === "success") moved.push(name);
    expect(moved).toEqual([]);
    expect(await watch()).toEqual(before);

    // The bounds, reached exactly, pass: fee and buy together at the ETH per trade, until the root's calls run out.
    const counted = await dn.pub.readContract({
      address: c().enforcers.LimitedCallsEnforcer as Address,
      abi: parseAbi(["function callCounts(address, bytes32) view returns (uint256)"]),
      functionName: "callCounts",
      args: [c().delegationManager, delegationHash(g.curveRoots[0]!)],
    });
    const left = 4 - Number(counted);
    expect(left).toBeGreaterThan(0);
    for (let i = 0; i < left; i++)
      expect(await bothKeys(walletBatch(g.wallet.address, [fee(1n), buy(cap - 1n)]))).toBe("success");
    const spent = await watch();
    expect(before.walletEth - spent.walletEth).toBeLessThanOrEqual(cap * BigInt(left));
    expect(await bothKeys(walletBatch(g.wallet.address, [fee(1n), buy(1n)]))).toBe("reverted");
    expect(await watch()).toEqual(spent);
    expect([spent.thiefEth, spent.thiefTokens]).toEqual([before.thiefEth, before.thiefTokens]);
  }, 90_000);
});
