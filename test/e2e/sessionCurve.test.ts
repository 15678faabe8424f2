import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  parseAbi,
  parseEther,
  parseEventLogs,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi } from "../../abis/fixtures.js";
import type { CosignerPort } from "../../api/ports/cosigner.js";
import {
  curveGroupOf,
  curveGroupSizes,
  delegationFromJson,
  delegationHash,
  delegationTypedData,
  leafCaveats,
  redeemManyCalldata,
  walletBatch,
  withGroup,
  type Delegation,
  type Execution,
} from "../../lib/delegation.js";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { encodeDelegations } from "@metamask/delegation-core";
import { ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { MAX_SLIPPAGE_BPS, PRICE_TOLERANCE_BPS } from "../../cosigner/index.js";
import {
  executorSigns,
  grantedSession,
  pendingGrant,
  tryGrantedSession,
  typedDataOf,
  walletSignatures,
  type Granted,
} from "../helpers/sessions.js";
import { startStack, withTwapHistory, type Stack } from "../helpers/stack.js";

/**
 * Launchpad curve trades in a session. The curve is no router call, so a session listing a curve
 * token gets a second root (wallet -> co-signer) whose groups allow the wallet's own batch of
 * plain ETH to the fee recipient then the curve's buy/sell of that token paying the wallet; the
 * executor redeems that one batch under one co-signed leaf: the fee never without the trade.
 */
let stack: Stack;
let cosigner: CosignerPort;
const thief = privateKeyToAccount(generatePrivateKey()).address;
const cosignerKey = devnetAccount(ACCOUNT_ROLES.cosigner);
const launch = () => stack.dn.universe.devnet!.fixtures.launchToken as Address;
const launchOf = (a: Address) =>
  stack.dn.pub.readContract({ address: launch(), abi: erc20Abi, functionName: "balanceOf", args: [a] });
// The chain runs an hour ahead of the wall clock (30 minutes of curve history for its mean): sessions outlive that.
const curveTerms = () => ({ tokens: ["ETH", launch()], accept_risks: ["NO_INDEPENDENT_MARK"], expires_in_s: 7_200 });
const grantCurve = (extra: Record<string, unknown> = {}) => grantedSession(stack, { ...curveTerms(), ...extra });

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: withTwapHistory });
  cosigner = stack.api.app.services.cosigner!;
}, 180_000);
afterAll(() => stack?.stop());

describe("a session with a launchpad curve token", () => {
  let g: Granted;
  beforeAll(async () => {
    g = await grantCurve();
  }, 120_000);

  it(
    "grants a curve root beside the session's root, binds the curve token and its owner-signed curve mark, and sets " +
      "up the launchpad's allowance",
    () => {
      const c = stack.dn.universe.contracts;
      const st = g.start;
      const token = launch().toLowerCase();
      expect(st.curve).toMatchObject({
        allowed: true,
        tokens: [token],
        roots: [st.sign.curve_roots[0].delegation_hash],
      });
      expect(st.sign.delegation.binding.curve_tokens).toEqual([token]);
      expect(st.sign.delegation.binding.marks[token].source).toEqual({
        kind: "curve",
        launchpad: c.launchpad.toLowerCase(),
      });
      expect(st.sign.curve_roots[0].groups).toEqual([
        { group: 0, call: "fee_transfer+buy", token },
        { group: 1, call: "fee_transfer+sell", token },
      ]);
      expect(st.setup.steps.filter((s: any) => s.kind === "approve").map((s: any) => s.tx.to)).toEqual([launch()]);
      expect(g.curveRoots).toHaveLength(1);
      expect(delegationHash(g.curveRoots[0]!)).toBe(st.sign.curve_roots[0].delegation_hash);
    },
  );

  it(
    "the executor buys on the curve and sells back: fee and trade in one mined transaction, for the " + "wallet",
    async () => {
      const { agent, dn } = stack;
      const fees = stack.api.config.feeRecipient;
      const [tokens0, fee0] = [await launchOf(g.wallet.address), await dn.pub.getBalance({ address: fees })];
      const buy = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 20 },
        g.executorKey,
      );
      expect(buy.status, JSON.stringify(buy.json)).toBe(200);
      expect(buy.json.simulated_ok, JSON.stringify(buy.json.simulation)).toBe(true);
      expect(buy.json.execution).toMatchObject({
        root: "curve",
        target: g.wallet.address,
        value: "0",
        batch: true,
        calls: [
          { kind: "fee_transfer", target: fees },
          { kind: "curve", target: dn.universe.contracts.launchpad },
        ],
      });
      expect(buy.json.leaf.authority).toBe(g.start.sign.curve_roots[0].delegation_hash);
      expect(buy.json.fee_leaf).toBeUndefined();
      const sent = await agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, g.executor, buy.json.tx) },
        g.executorKey,
      );
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      const rc = await dn.mined(sent.json.tx_hash);
      expect(
        rc.status,
        `gas ${rc.gasUsed} of ${buy.json.tx.gas}; simulation ${JSON.stringify(buy.json.simulation)}`,
      ).toBe("success");
      const got = (await launchOf(g.wallet.address)) - tokens0;
      expect(got).toBeGreaterThanOrEqual(BigInt(buy.json.swap.amount_out_min));
      // The platform got at least our fee (the curve's own protocol share goes there too).
      expect((await dn.pub.getBalance({ address: fees })) - fee0).toBeGreaterThanOrEqual(
        BigInt(buy.json.execution.fee.value),
      );

      const eth0 = await dn.pub.getBalance({ address: g.wallet.address });
      const sell = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: launch(), token_out: "ETH", amount_in: (got / 2n).toString() },
        g.walletKey,
      );
      expect(sell.status, JSON.stringify(sell.json)).toBe(200);
      const sold = await agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, g.executor, sell.json.tx) },
        g.walletKey,
      );
      expect(sold.status, JSON.stringify(sold.json)).toBe(200);
      expect((await dn.mined(sold.json.tx_hash)).status).toBe("success");
      expect(await launchOf(g.wallet.address)).toBe(tokens0 + got - got / 2n);
      expect(await dn.pub.getBalance({ address: g.wallet.address })).toBeGreaterThan(eth0);
      expect(sell.json.spend.trades_used).toBe(2);
    },
  );

  it(
    "the co-signer refuses a curve call paying the thief, a fee to the thief, another token, and a curve trade for " +
      "a session without a curve root",
    async () => {
      const t = await stack.agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 5 },
        g.executorKey,
      );
      expect(t.status, JSON.stringify(t.json)).toBe(200);
      const [, trade] = t.json.execution.calls;
      const swap: Execution = { target: trade.target, value: BigInt(trade.value), callData: trade.call_data };
      const fee: Execution = {
        target: t.json.execution.fee.target,
        value: BigInt(t.json.execution.fee.value),
        callData: t.json.execution.fee.call_data,
      };
      const min = BigInt(t.json.swap.amount_out_min);
      const buy = (token: Address, to: Address) =>
        encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [token, min, to] });
      const cosign = (hash: `0x${string}`, x: Execution, f: Execution) =>
        cosigner
          .cosign({
            delegationHash: hash,
            execution: x,
            fee: f,
            declared: { feeBps: t.json.fee_bps, expectedOut: BigInt(t.json.swap.amount_out_expected) },
          })
          .then(
            () => "signed",
            (e) => ({ code: e.code, rules: (e.extra?.signer_checks ?? []).map((c: any) => c.rule) }),
          );
      const hash = g.start.sign.delegation.delegation_hash;
      const used = await cosigner.usage(hash, g.wallet.address);
      expect(await cosign(hash, { ...swap, callData: buy(launch(), thief) }, fee)).toEqual({
        code: "SESSION_RECIPIENTS",
        rules: ["SESSION_RECIPIENTS"],
      });
      expect(await cosign(hash, swap, { ...fee, target: thief })).toEqual({
        code: "SESSION_RECIPIENTS",
        rules: ["SESSION_RECIPIENTS"],
      });
      expect(
        ((await cosign(hash, { ...swap, callData: buy(stack.dn.token("USDG"), g.wallet.address) }, fee)) as any).rules,
      ).toContain("SESSION_ROOT_ALLOWS");
      expect(((await cosign(hash, { ...swap, target: stack.dn.token("USDG") }, fee)) as any).rules).toEqual([
        "SESSION_ROOT_ALLOWS",
      ]);
      expect(await cosigner.usage(hash, g.wallet.address)).toEqual(used);
      expect(await cosign(hash, swap, fee)).toBe("signed");

      const plain = await grantedSession(stack);
      expect(((await cosign(plain.start.sign.delegation.delegation_hash, swap, fee)) as any).code).toBe(
        "SESSION_CURVE",
      );
      // Through the API, a plain session does not list the curve token at all.
      const r = await stack.agent.post(
        "/live/session/trade",
        {
          session_id: plain.sessionId,
          token_in: "ETH",
          token_out: launch(),
          notional_usd: 5,
          accept_risks: ["NO_INDEPENDENT_MARK"],
        },
        plain.executorKey,
      );
      expect(r.status).toBe(400);
    },
  );

  it(
    "on chain, even with both keys stolen, the curve root pins the fee's place, the recipient and the " + "token",
    async () => {
      const { dn } = stack;
      const c = dn.universe.contracts;
      const curveRoot = g.curveRoots[0]!;
      const sizes = curveGroupSizes(1);
      const stolenLeaf = async (execution: Execution): Promise<Delegation> => {
        const unsigned = {
          delegate: g.executor.address,
          delegator: cosignerKey.address,
          authority: delegationHash(curveRoot),
          caveats: leafCaveats(
            { execution, before: Number((await dn.pub.getBlock()).timestamp) + 600, cosignerNonce: 0n },
            c.enforcers,
          ),
          salt: BigInt(Date.now()),
        };
        return {
          ...unsigned,
          signature: await cosignerKey.signTypedData(delegationTypedData(4663, c.delegationManager, unsigned)),
        };
      };
      const redeem = async (group: number, calls: Execution[]) => {
        const execution = walletBatch(g.wallet.address, calls);
        const data = redeemManyCalldata([
          { chain: [await stolenLeaf(execution), withGroup(curveRoot, group, sizes)], execution },
        ]);
        return (
          await dn.mined(
            await dn.walletFor(g.executor).sendTransaction({ to: c.delegationManager, data, gas: 1_500_000n }),
          )
        ).status;
      };
      const buyFor = (to: Address): Execution => ({
        target: c.launchpad,
        value: parseEther("0.001"),
        callData: encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [launch(), 0n, to] }),
      });
      const fee = (to: Address, value = parseEther("0.0001")): Execution => ({ target: to, value, callData: "0x" });
      const before = await dn.pub.getBalance({ address: g.wallet.address });
      const fees = stack.api.config.feeRecipient;
      expect(await redeem(curveGroupOf(0, true), [fee(fees), buyFor(thief)])).toBe("reverted");
      expect(await launchOf(thief)).toBe(0n);
      // The fee goes to the fee recipient only, first, and only beside a trade; no more ETH leaves than the root's
      // bound.
      expect(await redeem(curveGroupOf(0, true), [fee(thief), buyFor(g.wallet.address)])).toBe("reverted");
      expect(await redeem(curveGroupOf(0, true), [buyFor(g.wallet.address), fee(fees)])).toBe("reverted");
      expect(await redeem(curveGroupOf(0, true), [fee(fees)])).toBe("reverted");
      expect(await redeem(curveGroupOf(0, true), [fee(fees, parseEther("3")), buyFor(g.wallet.address)])).toBe(
        "reverted",
      );
      expect(await dn.pub.getBalance({ address: g.wallet.address })).toBe(before);
      // The same trade paying the wallet passes the root: the reverts above are the pins (the test can fail).
      expect(await redeem(curveGroupOf(0, true), [fee(fees), buyFor(g.wallet.address)])).toBe("success");
    },
  );

  it("revoke disables the curve root too: a held curve trade, sent after the on-chain steps, reverts", async () => {
    const { dn, agent } = stack;
    const held = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 5 },
      g.executorKey,
    );
    expect(held.status, JSON.stringify(held.json)).toBe(200);
    const rv = await agent.post("/live/session/revoke", { session_id: g.sessionId }, g.walletKey);
    expect(rv.status, JSON.stringify(rv.json)).toBe(200);
    const kinds = rv.json.on_chain.map((s: any) => s.kind);
    expect(kinds.slice(0, 3)).toEqual(["disable_delegation", "disable_delegation", "increment_nonce"]);
    expect(rv.json.simulation.every((s: any) => s.ok)).toBe(true);
    for (const step of rv.json.on_chain)
      expect(
        (await dn.mined(await dn.walletFor(g.wallet).sendTransaction({ to: step.tx.to, data: step.tx.data }))).status,
      ).toBe("success");
    const tokens = await launchOf(g.wallet.address);
    const hash = await dn.pub.sendRawTransaction({
      serializedTransaction: await executorSigns(stack, g.executor, held.json.tx),
    });
    expect((await dn.mined(hash)).status).toBe("reverted");
    expect(await launchOf(g.wallet.address)).toBe(tokens);
  });
});

describe("switching on a curve session", () => {
  it("needs exactly the curve roots' signatures by the wallet (SESSION_CURVE_ROOTS, BAD_SIGNATURE)", async () => {
    const { agent } = stack;
    const { wallet, key, start } = await pendingGrant(stack, curveTerms());
    const { body: base } = await walletSignatures(wallet, start);
    const curveHash = start.sign.curve_roots[0].delegation_hash;
    const missing = await agent.post("/live/session/grant", base, key);
    expect([missing.status, missing.json.error.code]).toEqual([422, "SESSION_CURVE_ROOTS"]);
    const other = privateKeyToAccount(generatePrivateKey());
    const forged = await agent.post(
      "/live/session/grant",
      {
        ...base,
        curve_root_signatures: {
          [curveHash]: await other.signTypedData(typedDataOf(start.sign.curve_roots[0].typed_data)),
        },
      },
      key,
    );
    expect([forged.json.error.code]).toEqual(["BAD_SIGNATURE"]);
    const ok = await agent.post(
      "/live/session/grant",
      {
        ...base,
        curve_root_signatures: {
          [curveHash]: await wallet.signTypedData(typedDataOf(start.sign.curve_roots[0].typed_data)),
        },
      },
      key,
    );
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json.curve_roots).toEqual([
      { delegation_hash: curveHash, signed: true, tokens: [launch().toLowerCase()] },
    ]);
  });
});

/**
 * ATTACK: the executor unbundles a curve trade's fee. From what live/session/trade answered it
 * builds its own redeemDelegations: the swap alone, the fee alone, swap then fee, each element in
 * single mode, the pair in batch mode in either order, the wallet's own batch re-ordered or cut,
 * under every group of the curve root. Nothing moves; then the honest transaction pays the fee.
 */
describe("an executor unbundling a curve trade's fee", () => {
  it("redeems nothing but the whole honest transaction, which pays exactly the fee", async () => {
    const { dn, agent } = stack;
    const g = await grantCurve();
    const c = dn.universe.contracts;
    const fees = stack.api.config.feeRecipient;
    const t = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 10 },
      g.executorKey,
    );
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const x = t.json.execution;
    const asExec = (e: any): Execution => ({ target: e.target, value: BigInt(e.value), callData: e.call_data });
    const fee = asExec(x.fee);
    const swap = asExec(x.calls ? x.calls.find((k: any) => k.kind === "curve") : x);
    expect(fee.value).toBeGreaterThan(0n);
    const leaves: Delegation[] = [t.json.leaf, t.json.fee_leaf]
      .filter(Boolean)
      .map((l: any) => delegationFromJson({ ...l, delegator: l.delegator ?? cosignerKey.address }));
    const root = g.curveRoots[0]!;
    const sizes = curveGroupSizes(1);
    const BATCH = `0x01${"00".repeat(31)}` as Hex;
    const SINGLE = `0x${"00".repeat(32)}` as Hex;
    const single = (e: Execution) => encodePacked(["address", "uint256", "bytes"], [e.target, e.value, e.callData]);
    const batch = (es: Execution[]) =>
      encodeAbiParameters(
        [{ type: "tuple[]", components: [{ type: "address" }, { type: "uint256" }, { type: "bytes" }] }],
        [es.map((e) => [e.target, e.value, e.callData] as const)],
      );
    // The wallet's own ERC-7579 execute, called by itself: a batch inside one single call.
    const selfBatch = (es: Execution[]): Execution => ({
      target: g.wallet.address,
      value: 0n,
      callData: encodeFunctionData({
        abi: parseAbi(["function execute(bytes32 mode, bytes executionCalldata)"]),
        functionName: "execute",
        args: [BATCH, batch(es)],
      }),
    });
    type Item = { chain: Delegation[]; mode: Hex; call: Hex };
    const send = async (items: Item[]) => {
      const data = encodeFunctionData({
        abi: delegationManagerAbi,
        functionName: "redeemDelegations",
        args: [items.map((i) => encodeDelegations(i.chain) as Hex), items.map((i) => i.mode), items.map((i) => i.call)],
      });
      return (
        await dn.mined(
          await dn.walletFor(g.executor).sendTransaction({ to: c.delegationManager, data, gas: 2_000_000n }),
        )
      ).status;
    };
    const watch = async () => ({
      tokens: await launchOf(g.wallet.address),
      fees: await dn.pub.getBalance({ address: fees }),
      eth: await dn.pub.getBalance({ address: g.wallet.address }),
    });
    const before = await watch();
    const outcomes: string[] = [];
    for (const leaf of leaves) {
      for (let group = 0; group < sizes.length; group++) {
        const chain = [leaf, withGroup(root, group, sizes)];
        const tries: [string, Item[]][] = [
          ["swap alone", [{ chain, mode: SINGLE, call: single(swap) }]],
          ["fee alone", [{ chain, mode: SINGLE, call: single(fee) }]],
          ["batch mode [fee, swap]", [{ chain, mode: BATCH, call: batch([fee, swap]) }]],
          ["batch mode [swap, fee]", [{ chain, mode: BATCH, call: batch([swap, fee]) }]],
          ["batch mode [swap]", [{ chain, mode: BATCH, call: batch([swap]) }]],
          ["wallet batch [swap, fee]", [{ chain, mode: SINGLE, call: single(selfBatch([swap, fee])) }]],
          ["wallet batch [swap]", [{ chain, mode: SINGLE, call: single(selfBatch([swap])) }]],
        ];
        for (const other of leaves) {
          const feeChain = [other, withGroup(root, other === leaf ? group : 0, sizes)];
          tries.push([
            "swap then fee",
            [
              { chain, mode: SINGLE, call: single(swap) },
              { chain: feeChain, mode: SINGLE, call: single(fee) },
            ],
          ]);
          tries.push([
            "fee then swap",
            [
              { chain: feeChain, mode: SINGLE, call: single(fee) },
              { chain, mode: SINGLE, call: single(swap) },
            ],
          ]);
        }
        for (const [name, items] of tries)
          if ((await send(items)) === "success") outcomes.push(`${name} (group ${group})`);
      }
    }
    expect(outcomes).toEqual([]);
    expect(await watch()).toEqual(before);

    // The honest transaction: the wallet gets its tokens and the platform exactly the fee (plus the curve's own
    // protocol share, read from its event).
    const sent = await agent.post(
      "/live/submit",
      { raw_tx: await executorSigns(stack, g.executor, t.json.tx) },
      g.executorKey,
    );
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const rc = await dn.mined(sent.json.tx_hash);
    expect(rc.status).toBe("success");
    const split = parseEventLogs({ abi: launchpadAbi, logs: rc.logs, eventName: "FeeSplit" });
    const launchpadFees = await dn.pub.readContract({
      address: c.launchpad,
      abi: parseAbi(["function feeRecipient() view returns (address)"]),
      functionName: "feeRecipient",
    });
    const share =
      launchpadFees.toLowerCase() === fees.toLowerCase()
        ? split.reduce((a, l) => a + l.args.protocolFee + l.args.snipeTax, 0n)
        : 0n;
    const after = await watch();
    expect(after.fees - before.fees).toBe(fee.value + share);
    expect(after.tokens - before.tokens).toBeGreaterThanOrEqual(BigInt(t.json.swap.amount_out_min));
  }, 180_000);
});

/**
 * Issue 25 §3, the attack: a whale pushes the curve about 1.55x, the owner grants (the signed mark
 * was the curve's spot), the whale unwinds, pushes again, and the executor buys. With a spot mark
 * the co-signer accepted a buy that cost the owner about 37 %. Now the mark is the curve's
 * 30-minute median and a grant is refused while the spot sits outside the band around it.
 */
describe("an owner-signed curve mark set by one block's price", () => {
  const curveState = async () => {
    const [, , , , virtualEth, virtualToken] = await stack.dn.pub.readContract({
      address: stack.dn.universe.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "curves",
      args: [launch()],
    });
    return { virtualEth, virtualToken };
  };
  const ethUsd = async () => {
    const feed = stack.dn.universe.tokens.ETH!.feed!;
    return (
      Number(
        (await stack.dn.pub.readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" }))[1],
      ) / 1e8
    );
  };

  it(
    "push, grant, unwind, push, trade: the owner loses no more than the co-signer's bound, or nothing is granted or " +
      "traded",
    async () => {
      const { dn, agent } = stack;
      const lp = dn.universe.contracts.launchpad;
      const whale = await dn.freshWallet(parseEther("100"));
      const w = dn.walletFor(whale);
      const before = await curveState();
      const fairUsd = (Number(before.virtualEth) / 1e18 / (Number(before.virtualToken) / 1e18)) * (await ethUsd());
      // price = vE² / k: 1.55x takes vE up by sqrt(1.55), net of the curve's 1.5 % fee.
      const pushWei = ((before.virtualEth * 2450n) / 10_000n / 985n) * 1000n;
      const push = async () => {
        const got0 = await launchOf(whale.address);
        expect(
          (
            await dn.mined(
              await w.writeContract({
                address: lp,
                abi: launchpadAbi,
                functionName: "buy",
                args: [launch(), 0n, whale.address],
                value: pushWei,
              }),
            )
          ).status,
        ).toBe("success");
        return (await launchOf(whale.address)) - got0;
      };
      const unwind = async (amount: bigint) => {
        await dn.mined(
          await w.writeContract({ address: launch(), abi: erc20Abi, functionName: "approve", args: [lp, amount] }),
        );
        expect(
          (
            await dn.mined(
              await w.writeContract({
                address: lp,
                abi: launchpadAbi,
                functionName: "sell",
                args: [launch(), amount, 0n, whale.address],
              }),
            )
          ).status,
        ).toBe("success");
      };

      const pushed = await push();
      const s = await curveState();
      expect(Number(s.virtualEth) ** 2 / Number(before.virtualEth) ** 2).toBeGreaterThan(1.5);
      const terms = { ...curveTerms(), max_trade_usd: 50, max_day_usd: 120 };
      const first = await tryGrantedSession(stack, terms);
      await unwind(pushed);
      let g: Granted;
      if ("refused" in first) {
        // Refused while the spot sits outside the band around its 30-minute median; once unwound the
        // grant signs the median, and the trade below must still not pay the pushed price.
        expect([first.refused.status, first.refused.code], JSON.stringify(first.refused.json)).toEqual([
          503,
          "NO_MARK",
        ]);
        g = await grantCurve({ max_trade_usd: 50, max_day_usd: 120 });
        const mark = g.start.sign.delegation.binding.marks[launch().toLowerCase()].usd;
        expect(Math.abs(mark / fairUsd - 1)).toBeLessThan(0.0125);
      } else g = first;
      const again = await push();
      const tokens0 = await launchOf(g.wallet.address);
      const eth0 = await dn.pub.getBalance({ address: g.wallet.address });
      const buy = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 50 },
        g.executorKey,
      );
      let lossBps = 0;
      let bound = 0;
      if (buy.status === 200) {
        bound = buy.json.fee_bps + MAX_SLIPPAGE_BPS + PRICE_TOLERANCE_BPS;
        const sent = await agent.post(
          "/live/submit",
          { raw_tx: await executorSigns(stack, g.executor, buy.json.tx) },
          g.executorKey,
        );
        expect(sent.status, JSON.stringify(sent.json)).toBe(200);
        expect((await dn.mined(sent.json.tx_hash)).status).toBe("success");
        const paidUsd =
          (Number(eth0 - (await dn.pub.getBalance({ address: g.wallet.address }))) / 1e18) * (await ethUsd());
        const gotUsd = (Number((await launchOf(g.wallet.address)) - tokens0) / 1e18) * fairUsd;
        lossBps = Math.round((1 - gotUsd / paidUsd) * 10_000);
      }
      await unwind(again);
      // Today's code: the co-signer signed this buy at the pushed mark and the owner lost ~37 %.
      expect(
        buy.status === 200 ? lossBps : "refused",
        `loss ${lossBps} bps, bound ${bound} bps; ${JSON.stringify(buy.json.error ?? {})}`,
      ).toSatisfy((x: number | string) => x === "refused" || (x as number) <= bound);
    },
  );
});
