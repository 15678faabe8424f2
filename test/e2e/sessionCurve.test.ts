import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFunctionData, parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi } from "../../abis/fixtures.js";
import type { CosignerPort } from "../../api/ports/cosigner.js";
import { curveGroupOf, curveGroupSizes, delegationHash, delegationTypedData, leafCaveats, redeemManyCalldata, withGroup, type Delegation, type Execution } from "../../lib/delegation.js";
import { ACCOUNT_ROLES, devAccount } from "../../devnet/deploy.js";
import { executorSigns, grantedSession, pendingGrant, typedDataOf, walletSignatures, type Granted } from "../helpers/sessions.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";

/**
 * Launchpad curve trades in a session. The curve is no router call, so a session listing a curve
 * token gets a second root (wallet -> co-signer) whose groups allow plain ETH to the fee recipient
 * and the curve's buy/sell of that token paying the wallet; the executor redeems the fee and the
 * curve call in one transaction, each under its own co-signed leaf.
 */
let stack: Stack;
let cosigner: CosignerPort;
const thief = privateKeyToAccount(generatePrivateKey()).address;
const cosignerKey = devAccount(ACCOUNT_ROLES.cosigner);
const launch = () => stack.dn.universe.devnet!.fixtures.launchToken as Address;
const launchOf = (a: Address) => stack.dn.pub.readContract({ address: launch(), abi: erc20Abi, functionName: "balanceOf", args: [a] });
const grantCurve = (extra: Record<string, unknown> = {}) => grantedSession(stack, { tokens: ["ETH", launch()], accept_risks: ["NO_INDEPENDENT_MARK"], ...extra });

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: freshenMarket });
  cosigner = stack.api.app.services.cosigner!;
}, 180_000);
afterAll(() => stack?.stop());

describe("a session with a launchpad curve token", () => {
  let g: Granted;
  beforeAll(async () => {
    g = await grantCurve();
  }, 120_000);

  it("grants a curve root beside the session's root, binds the curve token and its owner-signed curve mark, and sets up the launchpad's allowance", () => {
    const c = stack.dn.universe.contracts;
    const st = g.start;
    const token = launch().toLowerCase();
    expect(st.curve).toMatchObject({ allowed: true, tokens: [token], roots: [st.sign.curve_roots[0].delegation_hash] });
    expect(st.sign.delegation.binding.curve_tokens).toEqual([token]);
    expect(st.sign.delegation.binding.marks[token].source).toEqual({ kind: "curve", launchpad: c.launchpad.toLowerCase() });
    expect(st.sign.curve_roots[0].groups).toEqual([{ group: 0, call: "fee_transfer" }, { group: 1, call: "buy", token }, { group: 2, call: "sell", token }]);
    expect(st.setup.steps.filter((s: any) => s.kind === "approve").map((s: any) => s.tx.to)).toEqual([launch()]);
    expect(g.curveRoots).toHaveLength(1);
    expect(delegationHash(g.curveRoots[0]!)).toBe(st.sign.curve_roots[0].delegation_hash);
  });

  it("the executor buys on the curve and sells back: fee and trade in one mined transaction, for the wallet", async () => {
    const { agent, dn } = stack;
    const fees = stack.api.config.feeRecipient;
    const [tokens0, fee0] = [await launchOf(g.wallet.address), await dn.pub.getBalance({ address: fees })];
    const buy = await agent.post("/live/session/trade", { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 20 }, g.executorKey);
    expect(buy.status, JSON.stringify(buy.json)).toBe(200);
    expect(buy.json.simulated_ok, JSON.stringify(buy.json.simulation)).toBe(true);
    expect(buy.json.execution).toMatchObject({ root: "curve", target: dn.universe.contracts.launchpad, fee: { target: fees } });
    expect(buy.json.fee_leaf.authority).toBe(g.start.sign.curve_roots[0].delegation_hash);
    const sent = await agent.post("/live/submit", { raw_tx: await executorSigns(stack, g.executor, buy.json.tx) }, g.executorKey);
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const rc = await dn.mined(sent.json.tx_hash);
    expect(rc.status, `gas ${rc.gasUsed} of ${buy.json.tx.gas}; simulation ${JSON.stringify(buy.json.simulation)}`).toBe("success");
    const got = (await launchOf(g.wallet.address)) - tokens0;
    expect(got).toBeGreaterThanOrEqual(BigInt(buy.json.swap.amount_out_min));
    // The platform got at least our fee (the curve's own protocol share goes there too).
    expect((await dn.pub.getBalance({ address: fees })) - fee0).toBeGreaterThanOrEqual(BigInt(buy.json.execution.fee.value));

    const eth0 = await dn.pub.getBalance({ address: g.wallet.address });
    const sell = await agent.post("/live/session/trade", { session_id: g.sessionId, token_in: launch(), token_out: "ETH", amount_in: (got / 2n).toString() }, g.walletKey);
    expect(sell.status, JSON.stringify(sell.json)).toBe(200);
    const sold = await agent.post("/live/submit", { raw_tx: await executorSigns(stack, g.executor, sell.json.tx) }, g.walletKey);
    expect(sold.status, JSON.stringify(sold.json)).toBe(200);
    expect((await dn.mined(sold.json.tx_hash)).status).toBe("success");
    expect(await launchOf(g.wallet.address)).toBe(tokens0 + got - got / 2n);
    expect(await dn.pub.getBalance({ address: g.wallet.address })).toBeGreaterThan(eth0);
    expect(sell.json.spend.trades_used).toBe(2);
  });

  it("the co-signer refuses a curve call paying the thief, a fee to the thief, another token, and a curve trade for a session without a curve root", async () => {
    const t = await stack.agent.post("/live/session/trade", { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 5 }, g.executorKey);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const swap: Execution = { target: t.json.execution.target, value: BigInt(t.json.execution.value), callData: t.json.execution.call_data };
    const fee: Execution = { target: t.json.execution.fee.target, value: BigInt(t.json.execution.fee.value), callData: t.json.execution.fee.call_data };
    const min = BigInt(t.json.swap.amount_out_min);
    const buy = (token: Address, to: Address) => encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [token, min, to] });
    const cosign = (hash: `0x${string}`, x: Execution, f: Execution) =>
      cosigner.cosign({ delegationHash: hash, execution: x, fee: f, declared: { feeBps: t.json.fee_bps, expectedOut: BigInt(t.json.swap.amount_out_expected) } }).then(
        () => "signed",
        (e) => ({ code: e.code, rules: (e.extra?.signer_checks ?? []).map((c: any) => c.rule) }),
      );
    const hash = g.start.sign.delegation.delegation_hash;
    const used = await cosigner.usage(hash, g.wallet.address);
    expect(await cosign(hash, { ...swap, callData: buy(launch(), thief) }, fee)).toEqual({ code: "SESSION_RECIPIENTS", rules: ["SESSION_RECIPIENTS"] });
    expect(await cosign(hash, swap, { ...fee, target: thief })).toEqual({ code: "SESSION_RECIPIENTS", rules: ["SESSION_RECIPIENTS"] });
    expect(((await cosign(hash, { ...swap, callData: buy(stack.dn.token("USDG"), g.wallet.address) }, fee)) as any).rules).toContain("SESSION_ROOT_ALLOWS");
    expect(((await cosign(hash, { ...swap, target: stack.dn.token("USDG") }, fee)) as any).rules).toEqual(["SESSION_ROOT_ALLOWS"]);
    expect(await cosigner.usage(hash, g.wallet.address)).toEqual(used);
    expect(await cosign(hash, swap, fee)).toBe("signed");

    const plain = await grantedSession(stack);
    expect(((await cosign(plain.start.sign.delegation.delegation_hash, swap, fee)) as any).code).toBe("SESSION_CURVE");
    // Through the API, a plain session does not list the curve token at all.
    const r = await stack.agent.post("/live/session/trade", { session_id: plain.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 5, accept_risks: ["NO_INDEPENDENT_MARK"] }, plain.executorKey);
    expect(r.status).toBe(400);
  });

  it("on chain, even with both keys stolen, the curve root pins the recipient and the token", async () => {
    const { dn } = stack;
    const c = dn.universe.contracts;
    const curveRoot = g.curveRoots[0]!;
    const sizes = curveGroupSizes(1);
    const stolenLeaf = async (execution: Execution): Promise<Delegation> => {
      const unsigned = { delegate: g.executor.address, delegator: cosignerKey.address, authority: delegationHash(curveRoot), caveats: leafCaveats({ execution, before: Math.floor(Date.now() / 1000) + 3_600, cosignerNonce: 0n }, c.enforcers), salt: BigInt(Date.now()) };
      return { ...unsigned, signature: await cosignerKey.signTypedData(delegationTypedData(4663, c.delegationManager, unsigned)) };
    };
    const redeem = async (group: number, execution: Execution) => {
      const data = redeemManyCalldata([{ chain: [await stolenLeaf(execution), withGroup(curveRoot, group, sizes)], execution }]);
      return (await dn.mined(await dn.walletFor(g.executor).sendTransaction({ to: c.delegationManager, data, gas: 1_500_000n }))).status;
    };
    const buyFor = (to: Address): Execution => ({ target: c.launchpad, value: parseEther("0.001"), callData: encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [launch(), 0n, to] }) });
    const before = await dn.pub.getBalance({ address: g.wallet.address });
    expect(await redeem(curveGroupOf(0, true), buyFor(thief))).toBe("reverted");
    expect(await launchOf(thief)).toBe(0n);
    // The fee group sends ETH to the fee recipient only.
    expect(await redeem(curveGroupOf(0, null), { target: thief, value: parseEther("0.001"), callData: "0x" })).toBe("reverted");
    expect(await dn.pub.getBalance({ address: g.wallet.address })).toBe(before);
    // The same buy paying the wallet passes the root: the reverts above are the pins (the test can fail).
    expect(await redeem(curveGroupOf(0, true), buyFor(g.wallet.address))).toBe("success");
  });

  it("revoke disables the curve root too: a held curve trade, sent after the on-chain steps, reverts", async () => {
    const { dn, agent } = stack;
    const held = await agent.post("/live/session/trade", { session_id: g.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 5 }, g.executorKey);
    expect(held.status, JSON.stringify(held.json)).toBe(200);
    const rv = await agent.post("/live/session/revoke", { session_id: g.sessionId }, g.walletKey);
    expect(rv.status, JSON.stringify(rv.json)).toBe(200);
    const kinds = rv.json.on_chain.map((s: any) => s.kind);
    expect(kinds.slice(0, 3)).toEqual(["disable_delegation", "disable_delegation", "increment_nonce"]);
    expect(rv.json.simulation.every((s: any) => s.ok)).toBe(true);
    for (const step of rv.json.on_chain) expect((await dn.mined(await dn.walletFor(g.wallet).sendTransaction({ to: step.tx.to, data: step.tx.data }))).status).toBe("success");
    const tokens = await launchOf(g.wallet.address);
    const hash = await dn.pub.sendRawTransaction({ serializedTransaction: await executorSigns(stack, g.executor, held.json.tx) });
    expect((await dn.mined(hash)).status).toBe("reverted");
    expect(await launchOf(g.wallet.address)).toBe(tokens);
  });
});

describe("switching on a curve session", () => {
  it("needs exactly the curve roots' signatures by the wallet (SESSION_CURVE_ROOTS, BAD_SIGNATURE)", async () => {
    const { agent } = stack;
    const { wallet, key, start } = await pendingGrant(stack, { tokens: ["ETH", launch()], accept_risks: ["NO_INDEPENDENT_MARK"] });
    const { body: base } = await walletSignatures(wallet, start);
    const curveHash = start.sign.curve_roots[0].delegation_hash;
    const missing = await agent.post("/live/session/grant", base, key);
    expect([missing.status, missing.json.error.code]).toEqual([422, "SESSION_CURVE_ROOTS"]);
    const other = privateKeyToAccount(generatePrivateKey());
    const forged = await agent.post("/live/session/grant", { ...base, curve_root_signatures: { [curveHash]: await other.signTypedData(typedDataOf(start.sign.curve_roots[0].typed_data)) } }, key);
    expect([forged.json.error.code]).toEqual(["BAD_SIGNATURE"]);
    const ok = await agent.post("/live/session/grant", { ...base, curve_root_signatures: { [curveHash]: await wallet.signTypedData(typedDataOf(start.sign.curve_roots[0].typed_data)) } }, key);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json.curve_roots).toEqual([{ delegation_hash: curveHash, signed: true, tokens: [launch().toLowerCase()] }]);
  });
});
