import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  maxUint160,
  parseEther,
  toHex,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { permit2Abi } from "../../abis/permit2.js";
import { Command, universalRouterAbi } from "../../abis/universalRouter.js";
import {
  delegationHash,
  delegationTypedData,
  leafCaveats,
  nonceEnforcerAbi,
  redeemCalldata,
  withRootGroup,
  type Delegation,
  type Execution,
} from "../../lib/delegation.js";
import { inputs } from "../../lib/router/encode.js";
import { ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { serveApi, type Api } from "../helpers/api.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";
import { agentOf } from "../helpers/agent.js";
import {
  executorSigns,
  grantedSession,
  runSetup,
  typedDataOf,
  walletSignatures,
  type Granted,
} from "../helpers/sessions.js";
import { httpExecutors } from "../../api/ports/executors.js";
import { createExecutorKeys } from "../../cosigner/executors.js";
import { DEVNET_EXECUTOR_KEYS_SECRET } from "../../lib/config.js";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import type { CosignerPort } from "../../api/ports/cosigner.js";

/**
 * Sessions attacked: a changed recipient deep in calldata or a sub-plan, payments to the executor,
 * a Permit2 approve to another spender, the co-signer key alone, a leaf replayed, a leaf after
 * revoke, two instances racing the day cap, another wallet's key. Each is refused by the
 * co-signer or reverted by the chain, and the wallet's funds stay where they were.
 */
let stack: Stack;
let cosigner: CosignerPort;
const thief = privateKeyToAccount(generatePrivateKey()).address;
const cosignerKey = devnetAccount(ACCOUNT_ROLES.cosigner);

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: freshenMarket });
  cosigner = stack.api.app.services.cosigner!;
}, 180_000);
afterAll(() => stack?.stop());

const balances = async (a: Address) => ({
  eth: await stack.dn.pub.getBalance({ address: a }),
  usdg: await stack.dn.pub.readContract({
    address: stack.dn.token("USDG"),
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [a],
  }),
});
const trade = (g: Granted, body: Record<string, unknown>, key = g.executorKey, api: Api = stack.api) =>
  api.call(
    "POST",
    "/api/v1/live/session/trade",
    { session_id: g.sessionId, ...body },
    { authorization: `Bearer ${key}` },
  );

/** The router program of an execution, and the same call with a new program. */
function programOf(data: Hex) {
  const { args } = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, ins, deadline] = args as unknown as [Hex, Hex[], bigint];
  return { bytes: (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16)), ins: [...ins], deadline };
}
const execute = (bytes: number[], ins: Hex[], deadline: bigint) =>
  encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [toHex(Uint8Array.from(bytes)), ins, deadline],
  });
function replaced(data: Hex, command: number, input: Hex): Hex {
  const p = programOf(data);
  p.ins[p.bytes.indexOf(command)] = input;
  return execute(p.bytes, p.ins, p.deadline);
}
const addr3 = [{ type: "address" }, { type: "address" }, { type: "uint256" }] as const;

describe("the co-signer reads what it signs", () => {
  let g: Granted;
  let honest: Execution;
  let feeBps: number;
  beforeAll(async () => {
    g = await grantedSession(stack);
    const t = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 10 });
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    honest = {
      target: t.json.execution.target,
      value: BigInt(t.json.execution.value),
      callData: t.json.execution.call_data,
    };
    feeBps = t.json.fee_bps;
  }, 120_000);

  const cosign = (execution: Execution, declared = feeBps) =>
    cosigner
      .cosign({ delegationHash: g.start.sign.delegation.delegation_hash, execution, declared: { feeBps: declared } })
      .then(
        () => "signed",
        (e) => ({ code: e.code, rules: (e.extra?.signer_checks ?? []).map((c: any) => c.rule) }),
      );

  it(
    "refuses a recipient changed in the SWEEP, a sub-plan paying the thief, a TRANSFER or SWEEP to the executor, " +
      "another target, a lower fee, a zero minimum; nothing is counted",
    async () => {
      const before = await cosigner.usage(g.start.sign.delegation.delegation_hash, g.wallet.address);
      const p = programOf(honest.callData);
      const sweepAt = p.bytes.indexOf(Command.SWEEP);
      const [usdg, , min] = decodeAbiParameters(addr3, p.ins[sweepAt]!);
      const toThief = replaced(honest.callData, Command.SWEEP, inputs.sweep(usdg, thief, min));
      const recipients = (r: unknown) => {
        expect((r as any).code).toBe("SESSION_RECIPIENTS");
        expect((r as any).rules).toContain("SESSION_RECIPIENTS");
      };
      recipients(await cosign({ ...honest, callData: toThief }));

      // The same theft one level down: the honest commands, then a sub-plan sweeping to the thief.
      const sub = encodeAbiParameters(
        [{ type: "bytes" }, { type: "bytes[]" }],
        [toHex(Uint8Array.from([Command.SWEEP])), [inputs.sweep(usdg, thief, 0n)]],
      );
      const nested = execute([...p.bytes, Command.EXECUTE_SUB_PLAN], [...p.ins, sub], p.deadline);
      recipients(await cosign({ ...honest, callData: nested }));

      const transferToExecutor = execute(
        [...p.bytes, Command.TRANSFER],
        [...p.ins, inputs.transfer(usdg, g.executor.address, 1n)],
        p.deadline,
      );
      recipients(await cosign({ ...honest, callData: transferToExecutor }));
      const sweepToExecutor = replaced(honest.callData, Command.SWEEP, inputs.sweep(usdg, g.executor.address, min));
      recipients(await cosign({ ...honest, callData: sweepToExecutor }));

      expect(((await cosign({ ...honest, target: stack.dn.token("WETH") })) as any).code).toBe("SESSION_TARGET");
      // A revert-allowed fee command could be skipped: refused as an execution shape.
      const flagged = execute(
        p.bytes.map((b) => (b === Command.TRANSFER ? b | 0x80 : b)),
        p.ins,
        p.deadline,
      );
      expect(((await cosign({ ...honest, callData: flagged })) as any).rules).toContain("SESSION_EXECUTION");

      const [feeToken, feeTo, feeAmount] = decodeAbiParameters(addr3, p.ins[p.bytes.indexOf(Command.TRANSFER)]!);
      const lowFee = replaced(honest.callData, Command.TRANSFER, inputs.transfer(feeToken, feeTo, feeAmount / 2n));
      const low = (await cosign({ ...honest, callData: lowFee })) as any;
      expect(low.code).toBe("REFUSED");
      expect(low.rules).toContain("SESSION_EXECUTION"); // half the fee left in the router
      const noMin = replaced(
        honest.callData,
        Command.SWEEP,
        inputs.sweep(usdg, "0x0000000000000000000000000000000000000001", 0n),
      );
      expect(await cosign({ ...honest, callData: noMin })).toEqual({ code: "REFUSED", rules: ["PRICE"] });
      expect(await cosign(honest, feeBps + 5)).toEqual({ code: "REFUSED", rules: ["FEE_DECLARED"] });

      expect(await cosigner.usage(g.start.sign.delegation.delegation_hash, g.wallet.address)).toEqual(before);
      expect(await cosign(honest)).toBe("signed");
    },
  );
});

describe("the chain holds when keys are stolen", () => {
  let g: Granted;
  beforeAll(async () => {
    g = await grantedSession(stack);
  }, 120_000);

  /** A leaf signed with the co-signer's key, as if both it and the executor were stolen. */
  async function stolenLeaf(execution: Execution, to: Address = g.executor.address): Promise<Delegation> {
    const unsigned = {
      delegate: to,
      delegator: cosignerKey.address,
      authority: delegationHash(g.root),
      caveats: leafCaveats(
        { execution, before: Math.floor(Date.now() / 1000) + 3_600, cosignerNonce: 0n },
        stack.dn.universe.contracts.enforcers,
      ),
      salt: BigInt(Date.now()),
    };
    return {
      ...unsigned,
      signature: await cosignerKey.signTypedData(
        delegationTypedData(4663, stack.dn.universe.contracts.delegationManager, unsigned),
      ),
    };
  }
  const redeem = async (
    from: ReturnType<typeof privateKeyToAccount> | typeof cosignerKey,
    chain: Delegation[],
    execution: Execution,
  ) => {
    const hash = await stack.dn.walletFor(from as never).sendTransaction({
      to: stack.dn.universe.contracts.delegationManager,
      data: redeemCalldata(chain, execution),
      gas: 1_500_000n,
    });
    return (await stack.dn.mined(hash)).status;
  };

  it(
    "a Permit2 approve to another spender reverts even with both keys; to the router it passes (the test can " +
      "fail)",
    async () => {
      const c = stack.dn.universe.contracts;
      const approve = (spender: Address): Execution => ({
        target: c.permit2,
        value: 0n,
        callData: encodeFunctionData({
          abi: permit2Abi,
          functionName: "approve",
          args: [stack.dn.token("USDG"), spender, maxUint160, 2 ** 40],
        }),
      });
      expect(
        await redeem(g.executor, [await stolenLeaf(approve(thief)), withRootGroup(g.root, 1)], approve(thief)),
      ).toBe("reverted");
      const [amount] = await stack.dn.pub.readContract({
        address: c.permit2,
        abi: permit2Abi,
        functionName: "allowance",
        args: [g.wallet.address, stack.dn.token("USDG"), thief],
      });
      expect(amount).toBe(0n);
      // The root's own group for Permit2 with the router as spender goes through: the revert above is the spender pin.
      expect(
        await redeem(
          g.executor,
          [await stolenLeaf(approve(c.universalRouter)), withRootGroup(g.root, 1)],
          approve(c.universalRouter),
        ),
      ).toBe("success");
    },
  );

  it("the co-signer key alone cannot redeem the root, nor a leaf it signs to itself", async () => {
    const before = await balances(g.wallet.address);
    const c = stack.dn.universe.contracts;
    // Something the root's targets allow: the router sweeping the wallet's ETH (value) to the co-signer.
    const drain: Execution = {
      target: c.universalRouter,
      value: parseEther("0.01"),
      callData: execute(
        [Command.SWEEP],
        [inputs.sweep("0x0000000000000000000000000000000000000000", cosignerKey.address, 0n)],
        BigInt(Math.floor(Date.now() / 1000) + 3_600),
      ),
    };
    await stack.dn.test.setBalance({ address: cosignerKey.address, value: parseEther("10") });
    expect(await redeem(cosignerKey, [withRootGroup(g.root, 0)], drain)).toBe("reverted");
    expect(
      await redeem(cosignerKey, [await stolenLeaf(drain, cosignerKey.address), withRootGroup(g.root, 0)], drain),
    ).toBe("reverted");
    expect((await balances(g.wallet.address)).eth).toBe(before.eth);
  });

  it("the executor cannot replay a co-signed leaf inside its 120 s, on chain or through the relay", async () => {
    const t = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 10 });
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const sent = await stack.agent.post(
      "/live/submit",
      { raw_tx: await executorSigns(stack, g.executor, t.json.tx) },
      g.executorKey,
    );
    expect((await stack.dn.mined(sent.json.tx_hash)).status).toBe("success");
    const after = await balances(g.wallet.address);
    const again = await stack.dn
      .walletFor(g.executor)
      .sendTransaction({ to: t.json.tx.to, data: t.json.tx.data, gas: 1_500_000n });
    expect((await stack.dn.mined(again)).status).toBe("reverted");
    const relayed = await stack.agent.post(
      "/live/submit",
      { raw_tx: await executorSigns(stack, g.executor, t.json.tx) },
      g.executorKey,
    );
    expect([relayed.status, relayed.json.error?.code]).toEqual([422, "NOT_AS_BUILT"]);
    expect((await balances(g.wallet.address)).usdg).toBe(after.usdg);
  });

  it(
    "another wallet's key cannot trade the session, nor relay its executor's signature; the executor cannot relay " +
      "the wallet's own plan",
    async () => {
      const other = await stack.dn.freshWallet(parseEther("1"));
      const otherKey = await stack.agent.signIn(other);
      const r = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 }, otherKey);
      expect([r.status, r.json.error.code]).toEqual([404, "NO_SESSION"]);
      const t = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 });
      const raw = await executorSigns(stack, g.executor, t.json.tx);
      const wrongKey = await stack.agent.post("/live/submit", { raw_tx: raw }, otherKey);
      expect([wrongKey.status, wrongKey.json.error.code]).toEqual([403, "WALLET_MISMATCH"]);
      // The wallet's ordinary plan, signed by the executor, is not a session trade.
      const plan = await stack.agent.post(
        "/live/prepare",
        { wallet: g.wallet.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.001").toString() },
        g.walletKey,
      );
      expect(plan.status, JSON.stringify(plan.json)).toBe(200);
      const byExecutor = await stack.agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, g.executor, plan.json.tx) },
        g.walletKey,
      );
      expect([byExecutor.status, byExecutor.json.error.code]).toEqual([403, "WALLET_MISMATCH"]);
    },
  );
});

describe("the end of a session", () => {
  it("SESSION_EXPIRY in its last seconds, SESSION_EXPIRED after, at an instance whose clock is there", async () => {
    const g = await grantedSession(stack, { expires_in_s: 3_600 });
    const at = async (offsetS: number) => {
      const later = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        clock: () => Date.now() + offsetS * 1000,
      });
      try {
        const key = await agentOf(later, stack.dn).signIn(g.executor);
        const r = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 }, key, later);
        return [r.status, r.json.error?.code];
      } finally {
        await later.close();
      }
    };
    expect(await at(3_595)).toEqual([409, "SESSION_EXPIRY"]);
    expect(await at(3_601)).toEqual([409, "SESSION_EXPIRED"]);
    expect((await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 })).status).toBe(200);
  });
});

describe("a co-signer answering another leaf", () => {
  it(
    "502 SIGNER_MISMATCH: the service checks the leaf allows exactly its execution, for its executor and " + "root",
    async () => {
      const lying: CosignerPort = {
        ...cosigner,
        address: cosigner.address,
        register: (r) => cosigner.register(r),
        revoke: (h) => cosigner.revoke(h),
        usage: (h, w) => cosigner.usage(h, w),
        cosign: async (req) => {
          const a = await cosigner.cosign(req);
          return {
            ...a,
            leaf: {
              ...a.leaf,
              caveats: a.leaf.caveats.map((c, i) =>
                i === 0 ? { ...c, terms: `${c.terms.slice(0, -2)}00` as Hex } : c,
              ),
            },
          };
        },
      };
      const api2 = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        cosigner: lying,
      });
      try {
        const g = await grantedSession(stack);
        const key2 = await agentOf(api2, stack.dn).signIn(g.executor);
        const r = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 }, key2, api2);
        expect([r.status, r.json.error.code]).toEqual([502, "SIGNER_MISMATCH"]);
      } finally {
        await api2.close();
      }
    },
  );
});

describe("two API instances on one PostgreSQL store race the day cap", () => {
  it("co-signs at most the cap: six $30 trades at once over two instances against $100 a day", async () => {
    const second = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: stack.ix.liveReads().reads,
    });
    try {
      const g = await grantedSession(stack, { max_trade_usd: 50, max_day_usd: 100, max_trades: 20 });
      const secondKey = await agentOf(second, stack.dn).signIn(g.executor);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 30 }, secondKey, second)
            : trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 30 }),
        ),
      );
      const ok = results.filter((r) => r.status === 200);
      const codes = results.filter((r) => r.status !== 200).map((r) => r.json.error.code);
      expect(ok.length).toBeGreaterThan(0);
      expect(ok.length).toBeLessThanOrEqual(3);
      expect(new Set(codes)).toEqual(new Set(["SESSION_MAX_DAY"]));
      const used = await cosigner.usage(g.start.sign.delegation.delegation_hash, g.wallet.address);
      expect(used.trades_used).toBe(ok.length);
      expect(used.last_24h_usd).toBeLessThanOrEqual(100);
    } finally {
      await second.close();
    }
  });
});

describe("a stolen signing service alone moves nothing (the co-signer and the executors are apart)", () => {
  /**
   * A hosted live agent's executor (its key in the executor signing service) holding a switched-on session of its
   * owner's wallet.
   */
  async function hostedSession() {
    const { dn, agent } = stack;
    const wallet = await dn.freshWallet(parseEther("5"), [[dn.token("USDG"), 1_000_000_000n]]);
    const key = await agent.signIn(wallet);
    const live = await stack.api.call(
      "POST",
      "/api/v1/hosted",
      {
        brain: "rule",
        params: { targets: { ETH: 0.5, USDG: 0.5 } },
        interval_s: 60,
        pairs: ["ETH/USDG"],
        limits: { max_trade_usd: 40, max_day_usd: 80, max_position_usd: 400 },
        mode: "live",
      },
      { authorization: `Bearer ${key}` },
    );
    expect(live.status, live.text).toBe(201);
    const executor = live.json.executor as Address;
    await dn.mined(await dn.walletFor(dn.deployer).sendTransaction({ to: executor, value: parseEther("0.2") }));
    const st = await agent.post(
      "/live/session/grant",
      {
        wallet: wallet.address,
        executor,
        tokens: ["ETH", "USDG"],
        max_trade_usd: 50,
        max_day_usd: 120,
        max_trades: 5,
        expires_in_s: 3_600,
      },
      key,
    );
    expect(st.status, JSON.stringify(st.json)).toBe(200);
    const { body, auth } = await walletSignatures(wallet, st.json);
    const on = await agent.post("/live/session/grant", body, key);
    expect(on.status, JSON.stringify(on.json)).toBe(200);
    await runSetup(stack, wallet, st.json.setup.steps, auth);
    const m = typedDataOf(st.json.sign.delegation.typed_data).message;
    const root: Delegation = {
      ...m,
      caveats: m.caveats.map((c: any) => ({ ...c, args: "0x" })),
      signature: body.delegation_signature,
    };
    return { wallet, executor, root };
  }
  /** A leaf signed with `signer` (the co-signer's key when it is stolen) to the executor for exactly `execution`. */
  async function leafBy(
    signer: { address: Address; signTypedData: typeof cosignerKey.signTypedData },
    executor: Address,
    root: Delegation,
    execution: Execution,
  ): Promise<Delegation> {
    const nonce = await stack.dn.pub.readContract({
      address: stack.dn.universe.contracts.enforcers.NonceEnforcer!,
      abi: nonceEnforcerAbi,
      functionName: "currentNonce",
      args: [stack.dn.universe.contracts.delegationManager, cosignerKey.address],
    });
    const unsigned = {
      delegate: executor,
      delegator: cosignerKey.address,
      authority: delegationHash(root),
      caveats: leafCaveats(
        { execution, before: Math.floor(Date.now() / 1000) + 600, cosignerNonce: nonce },
        stack.dn.universe.contracts.enforcers,
      ),
      salt: BigInt(Date.now()),
    };
    return {
      ...unsigned,
      signature: await signer.signTypedData(
        delegationTypedData(4663, stack.dn.universe.contracts.delegationManager, unsigned),
      ),
    };
  }
  /** The router sending `wei` of the wallet's ETH on to `to`: what the root's targets allow, paying someone else. */
  const drainTo = (to: Address, wei: bigint): Execution => ({
    target: stack.dn.universe.contracts.universalRouter,
    value: wei,
    callData: execute(
      [Command.SWEEP],
      [inputs.sweep("0x0000000000000000000000000000000000000000", to, 0n)],
      BigInt(Math.floor(Date.now() / 1000) + 600),
    ),
  });
  const ask = async (executor: Address, data: Hex) => ({
    to: stack.dn.universe.contracts.delegationManager,
    data,
    chainId: 4663,
    nonce: await stack.dn.pub.getTransactionCount({ address: executor, blockTag: "pending" }),
    gas: 1_000_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
    feeBps: 0,
  });
  /** Sends signed bytes if any were signed: mined status, or null when nothing was signed. */
  const relay = async (raw: Hex | null) =>
    raw
      ? ((
          await stack.dn
            .mined(await stack.dn.pub.sendRawTransaction({ serializedTransaction: raw }).catch(() => "0x" as Hex))
            .catch(() => null)
        )?.status ?? null)
      : null;

  it(
    "the co-signer's key, secret and store: a leaf paying a thief is signed, but the executor signing service " +
      "neither answers its secret nor redeems it; nothing moves",
    async () => {
      const h = await hostedSession();
      const drain = drainTo(thief, parseEther("0.005"));
      const data = redeemCalldata(
        [await leafBy(cosignerKey, h.executor, h.root, drain), withRootGroup(h.root, 0)],
        drain,
      );
      const thiefBefore = await stack.dn.pub.getBalance({ address: thief });
      const signers = stack.api.signers;
      if (signers) {
        // What the co-signer's process holds opens nothing of the executor service's.
        await expect(
          httpExecutors(signers.urls.cosigner, signers.tokens.cosigner).signTrade(
            h.executor,
            await ask(h.executor, data),
          ),
        ).rejects.toMatchObject({ code: "SIGNER_REQUIRED" });
        await expect(
          httpExecutors(signers.urls.executors, signers.tokens.cosigner).signTrade(
            h.executor,
            await ask(h.executor, data),
          ),
        ).rejects.toMatchObject({ code: "SIGNER_REQUIRED" });
      }
      // Asked by the API itself (a stolen co-signer's leaf handed on as a trade): the service reads the calldata and
      // refuses.
      const raw = await stack.api.app.services
        .executors!.signTrade(h.executor, await ask(h.executor, data))
        .catch((e) => (expect(e.code).toBe("TX_REFUSED"), null));
      await relay(raw);
      expect(await stack.dn.pub.getBalance({ address: thief })).toBe(thiefBefore);
      expect(raw).toBeNull();
    },
  );

  it(
    "the executor service's secret and store: its keys sign, but a leaf the co-signer did not sign reverts on " +
      "chain; nothing moves",
    async () => {
      const h = await hostedSession();
      const drain = drainTo(thief, parseEther("0.005"));
      const forger = privateKeyToAccount(generatePrivateKey());
      const data = redeemCalldata([await leafBy(forger, h.executor, h.root, drain), withRootGroup(h.root, 0)], drain);
      // The thief's own copy of the service over its store and secret: signs whatever it is given.
      const stolen = createExecutorKeys({
        db: stack.api.signers?.executorsDb ?? stack.store.db,
        secret: DEVNET_EXECUTOR_KEYS_SECRET,
        chainId: 4663,
        clock: Date.now,
        delegationManager: stack.dn.universe.contracts.delegationManager,
        payout: null,
      });
      const walletBefore = await stack.dn.pub.getBalance({ address: h.wallet.address });
      const thiefBefore = await stack.dn.pub.getBalance({ address: thief });
      expect(await relay(await stolen.signTrade(h.executor, await ask(h.executor, data)))).toBe("reverted");
      expect(await stack.dn.pub.getBalance({ address: thief })).toBe(thiefBefore);
      expect(await stack.dn.pub.getBalance({ address: h.wallet.address })).toBe(walletBefore);
    },
  );
});

describe("sanctions are read by the co-signer at each co-signing", () => {
  const list = () => stack.dn.universe.contracts.sanctionsList;
  const sanction = async (a: Address, on = true) =>
    stack.dn.mined(
      await stack.dn.walletFor(stack.dn.deployer).writeContract({
        address: list(),
        abi: sanctionsListAbi,
        functionName: on ? "addToSanctionsList" : "removeFromSanctionsList",
        args: [[a]],
      }),
    );
  const cosignOf = async (g: Granted) => {
    const t = await trade(g, { token_in: "ETH", token_out: "USDG", notional_usd: 5 });
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const execution = {
      target: t.json.execution.target,
      value: BigInt(t.json.execution.value),
      callData: t.json.execution.call_data,
    };
    return () =>
      cosigner
        .cosign({
          delegationHash: g.start.sign.delegation.delegation_hash,
          execution,
          declared: { feeBps: t.json.fee_bps },
        })
        .then(
          () => "signed",
          (e) => e.code,
        );
  };

  it(
    "SANCTIONED when the executor or the wallet is listed after the grant: nothing co-signed, nothing " + "counted",
    async () => {
      const g = await grantedSession(stack);
      const again = await cosignOf(g);
      const used = await cosigner.usage(g.start.sign.delegation.delegation_hash, g.wallet.address);
      await sanction(g.executor.address);
      try {
        expect(await again()).toBe("SANCTIONED");
      } finally {
        await sanction(g.executor.address, false);
      }
      await sanction(g.wallet.address);
      try {
        expect(await again()).toBe("SANCTIONED");
      } finally {
        await sanction(g.wallet.address, false);
      }
      expect(await cosigner.usage(g.start.sign.delegation.delegation_hash, g.wallet.address)).toEqual(used);
      expect(await again()).toBe("signed");
    },
  );

  it("an unreadable list (its address answering with a revert) refuses: never passes", async () => {
    const g = await grantedSession(stack);
    const again = await cosignOf(g);
    const code = await stack.dn.pub.getCode({ address: list() });
    await stack.dn.test.setCode({ address: list(), bytecode: "0x60006000fd" });
    try {
      expect(await again()).toBe("CHAIN_UNAVAILABLE");
    } finally {
      await stack.dn.test.setCode({ address: list(), bytecode: code! });
    }
    expect(await again()).toBe("signed");
  });
});
