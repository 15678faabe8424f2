import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeFunctionData,
  parseEther,
  parseUnits,
  type Address,
  type Hex,
} from "viem";
import { Command } from "../../abis/universalRouter.js";
import { erc20Abi } from "../../abis/erc20.js";
import type { CosignerPort } from "../../api/ports/cosigner.js";
import type { Execution } from "../../lib/delegation.js";
import { inputs } from "../../lib/router/encode.js";
import { executorSigns, grantedSession, pendingGrant, walletSignatures, type Granted } from "../helpers/sessions.js";
import { startStack, withTwapHistory, type Stack } from "../helpers/stack.js";
import { approveForRouter, poolKeyOf, routerSwap } from "../helpers/trades.js";

import { universalRouterAbi } from "../../abis/universalRouter.js";
import { readPins, verifySignedMarks } from "@pit/sdk";

/** The SDK's own check of a binding's marks (its RPC, its pins): null when it passes, else its rule. */
const sdkMarkCheck = async (binding: any) => {
  const now = Number((await stack.dn.pub.getBlock()).timestamp);
  return verifySignedMarks(stack.dn.pub as never, await readPins(stack.api.url), binding, now).then(
    () => null,
    (e) => e.rule as string,
  );
};

/**
 * Sessions over a feedless token (the partner token: no oracle feed). The binding carries an
 * owner-signed mark and where it was read; the co-signer prices that side at the signed mark
 * (SIGNED_MARK_PRICE), not at a pool that can be moved at trade time, and will not hold a root
 * whose mark is far from its own read of the source (CAP_PRICE).
 */
let stack: Stack;
let cosigner: CosignerPort;
const orbioOf = (a: Address) =>
  stack.dn.pub.readContract({ address: stack.dn.token("ORBIO"), abi: erc20Abi, functionName: "balanceOf", args: [a] });

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: withTwapHistory });
  cosigner = stack.api.app.services.cosigner!;
}, 180_000);
afterAll(() => stack?.stop());

/** The SWEEP's minimum replaced in a router call. */
function withMinimum(data: Hex, min: bigint): Hex {
  const { args } = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, ins, deadline] = args as unknown as [Hex, Hex[], bigint];
  const bytes = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  const at = bytes.indexOf(Command.SWEEP);
  const [token, to] = decodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "uint256" }], ins[at]!);
  const next = [...ins];
  next[at] = inputs.sweep(token, to, min);
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, next, deadline] });
}

describe("a session with a feedless token", () => {
  let g: Granted;
  beforeAll(async () => {
    // The chain runs an hour ahead of the wall clock here (TWAP history): the session outlives that.
    g = await grantedSession(stack, { tokens: ["USDG", "ORBIO"], expires_in_s: 7_200 });
  }, 120_000);

  it("binds an owner-signed mark for the feedless token with its source, and says so in not_enforced_on_chain", () => {
    const { dn } = stack;
    const b = g.start.sign.delegation.binding;
    const orbio = dn.token("ORBIO").toLowerCase();
    expect(Object.keys(b.marks)).toEqual([orbio]);
    const pool = poolKeyOf(dn, "ORBIO", "USDG");
    expect(b.marks[orbio]).toMatchObject({
      decimals: 18,
      source: {
        kind: "pool",
        currency0: pool.currency0.toLowerCase(),
        currency1: pool.currency1.toLowerCase(),
        fee: pool.fee,
        tick_spacing: pool.tickSpacing,
        against: dn.token("USDG").toLowerCase(),
      },
    });
    expect(b.marks[orbio].usd).toBeGreaterThan(0);
    expect(g.start.not_enforced_on_chain.join("\n")).toMatch(/owner-signed marks/);
  });

  it(
    "the SDK reads the mark's pool on chain itself: the signed 30-minute median passes; a mark off it, or none, is " +
      "GRANT_MARK",
    async () => {
      const b = g.start.sign.delegation.binding;
      const orbio = stack.dn.token("ORBIO").toLowerCase();
      expect(await sdkMarkCheck(b)).toBeNull();
      expect(
        await sdkMarkCheck({ ...b, marks: { [orbio]: { ...b.marks[orbio], usd: b.marks[orbio].usd * 1.02 } } }),
      ).toBe("GRANT_MARK");
      expect(await sdkMarkCheck({ ...b, marks: undefined })).toBe("GRANT_MARK");
    },
  );

  it("a session with a feedless token lasting over 24 hours is SESSION_LIMIT", async () => {
    const r = await stack.agent.post(
      "/live/session/grant",
      { wallet: g.wallet.address, executor: g.executor.address, tokens: ["USDG", "ORBIO"], expires_in_s: 86_401 },
      g.walletKey,
    );
    expect([r.status, r.json.error.code]).toEqual([422, "SESSION_LIMIT"]);
  });

  it("trades USDG -> ORBIO priced at the signed mark, mined for the wallet", async () => {
    const { agent, dn } = stack;
    const before = await orbioOf(g.wallet.address);
    const t = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "USDG", token_out: "ORBIO", notional_usd: 20 },
      g.executorKey,
    );
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const rules = t.json.checks.signer.map((c: { rule: string }) => c.rule);
    expect(rules).toContain("SIGNED_MARK_PRICE");
    expect(rules).toContain("SLIPPAGE");
    expect(rules).not.toContain("PRICE");
    const sent = await agent.post(
      "/live/submit",
      { raw_tx: await executorSigns(stack, g.executor, t.json.tx) },
      g.executorKey,
    );
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    expect((await dn.mined(sent.json.tx_hash)).status).toBe("success");
    expect((await orbioOf(g.wallet.address)) - before).toBeGreaterThanOrEqual(BigInt(t.json.swap.amount_out_min));
  });

  it(
    "the co-signer refuses a minimum far under the signed mark (SIGNED_MARK_PRICE) or the quote (SLIPPAGE), and " +
      "counts nothing",
    async () => {
      const t = await stack.agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "USDG", token_out: "ORBIO", notional_usd: 10 },
        g.executorKey,
      );
      expect(t.status, JSON.stringify(t.json)).toBe(200);
      const honest: Execution = {
        target: t.json.execution.target,
        value: BigInt(t.json.execution.value),
        callData: t.json.execution.call_data,
      };
      const min = BigInt(t.json.swap.amount_out_min);
      const hash = g.start.sign.delegation.delegation_hash;
      const used = await cosigner.usage(hash, g.wallet.address);
      const low = { ...honest, callData: withMinimum(honest.callData, (min * 80n) / 100n) };
      const r = await cosigner
        .cosign({
          delegationHash: hash,
          execution: low,
          declared: { feeBps: t.json.fee_bps, expectedOut: BigInt(t.json.swap.amount_out_expected) },
        })
        .then(
          () => null,
          (e) => e,
        );
      expect(r?.code).toBe("REFUSED");
      expect(r.extra.signer_checks.map((c: { rule: string }) => c.rule).sort()).toEqual([
        "SIGNED_MARK_PRICE",
        "SLIPPAGE",
      ]);
      expect(await cosigner.usage(hash, g.wallet.address)).toEqual(used);
    },
  );
});

describe("a feedless mark the pool left before switch-on", () => {
  it("is CAP_PRICE at the co-signer: the session stays pending and nothing is held", async () => {
    const { dn, agent } = stack;
    const { wallet, key, start } = await pendingGrant(stack, { tokens: ["USDG", "ORBIO"] });
    // A whale sells about 40 % of the pool's ORBIO into it: the spot falls far from the signed mark.
    const orbio = dn.token("ORBIO");
    const whale = await dn.freshWallet(parseEther("1"), [[orbio, parseUnits("200000", 18)]]);
    await approveForRouter(dn, whale, orbio);
    await routerSwap(dn, whale, {
      poolKey: poolKeyOf(dn, "ORBIO", "USDG"),
      tokenIn: orbio,
      tokenOut: dn.token("USDG"),
      amountIn: parseUnits("200000", 18),
      minOut: 0n,
      feeBips: 0n,
      feeRecipient: whale.address,
    });
    // The SDK refuses to sign it too: the pool's spot left its 30-minute median.
    expect(await sdkMarkCheck(start.sign.delegation.binding)).toBe("GRANT_MARK");
    const on = await agent.post("/live/session/grant", (await walletSignatures(wallet, start)).body, key);
    expect([on.status, on.json.error?.code]).toEqual([422, "REFUSED"]);
    expect(on.json.error.signer_checks.map((c: { rule: string }) => c.rule)).toEqual(["CAP_PRICE"]);
    const mine = await agent.get("/me/sessions", key);
    expect(mine.json.sessions.find((s: { session_id: string }) => s.session_id === start.session_id).status).toBe(
      "pending",
    );
  });
});
