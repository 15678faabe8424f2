import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, serializeSignature, verifyMessage, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../devnet/anvil.js";
import { ROOT } from "../../lib/root.js";
import { httpCosigner } from "../../api/ports/cosigner.js";
import { httpExecutors } from "../../api/ports/executors.js";
import { serveApi } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { executorSigns, grantedSession, typedDataOf, type Granted } from "../helpers/sessions.js";

/**
 * Sessions end to end on the devnet, as an agent would: a fresh wallet upgrades by EIP-7702,
 * grants a session to an executor key, switches it on; the executor trades through the
 * co-signer, submits, and the trade is mined and listed for the wallet; limits refuse; revoke
 * stops it at the service and, once its on-chain steps land, on chain.
 */
let stack: Stack;
const usdgOf = (a: Address) =>
  stack.dn.pub.readContract({ address: stack.dn.token("USDG"), abi: erc20Abi, functionName: "balanceOf", args: [a] });

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: freshenMarket });
}, 180_000);
afterAll(() => stack?.stop());

describe("a session from grant to revoke", () => {
  let g: Granted;
  beforeAll(async () => {
    g = await grantedSession(stack);
  }, 120_000);

  it(
    "answers the grant's fields, signs a root the delegation manager hashes the same, and upgrades the wallet to " +
      "the pinned delegator",
    async () => {
      const { dn } = stack;
      const st = g.start;
      for (const f of [
        "session_id",
        "status",
        "wallet",
        "executor",
        "cosigner",
        "expires",
        "wallet_code",
        "sign",
        "setup",
        "risk_terms",
        "caveats",
        "limits",
        "exposure",
        "on_chain_bounds",
        "not_enforced_on_chain",
        "curve",
        "then",
      ])
        expect(st, f).toHaveProperty(f);
      expect(st.status).toBe("pending");
      expect(st.cosigner).toBe(stack.api.config.cosigner);
      expect(st.wallet_code.state).toBe("eoa");
      expect(st.caveats.map((c: any) => c.enforcer)).toEqual([
        "LogicalOrWrapperEnforcer",
        "ValueLteEnforcer",
        "TimestampEnforcer",
        "LimitedCallsEnforcer",
        "NonceEnforcer",
        "RedeemerEnforcer",
        "NativeTokenPeriodTransferEnforcer",
      ]);
      expect(st.on_chain_bounds.redeemer).toBe(g.executor.address);
      // The delegation manager computes the same root hash we answered.
      const t = typedDataOf(st.sign.delegation.typed_data).message;
      const onChain = await dn.pub.readContract({
        address: dn.universe.contracts.delegationManager,
        abi: delegationManagerAbi,
        functionName: "getDelegationHash",
        args: [{ ...t, caveats: t.caveats.map((c: any) => ({ ...c, args: "0x" })), signature: "0x" }],
      });
      expect(onChain).toBe(st.sign.delegation.delegation_hash);
      expect((await dn.pub.getCode({ address: g.wallet.address }))?.toLowerCase()).toBe(
        `0xef0100${dn.universe.contracts.statelessDelegator.slice(2).toLowerCase()}`,
      );
      const mine = await stack.agent.get("/me/sessions", g.walletKey);
      expect(mine.status).toBe(200);
      expect(mine.json.sessions[0]).toMatchObject({
        session_id: g.sessionId,
        status: "active",
        executor: g.executor.address.toLowerCase(),
        used: { trades: 0, trades_left: 5 },
      });
      expect(mine.json.routes.session_revoke).toMatch(/session\/revoke/);
    },
  );

  it(
    "trades ETH -> USDG with the executor's key and USDG -> ETH with the wallet's key; both mined and listed for " +
      "the wallet",
    async () => {
      const { dn, agent } = stack;
      const before = await usdgOf(g.wallet.address);
      const t1 = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 20 },
        g.executorKey,
      );
      expect(t1.status, JSON.stringify(t1.json)).toBe(200);
      expect(t1.json.simulated_ok, JSON.stringify(t1.json.simulation)).toBe(true);
      expect(t1.json.tx.to).toBe(dn.universe.contracts.delegationManager);
      expect(t1.json.spend).toMatchObject({ trades_used: 1, trades_left: 4 });
      const sent1 = await agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, g.executor, t1.json.tx) },
        g.executorKey,
      );
      expect(sent1.status, JSON.stringify(sent1.json)).toBe(200);
      expect((await dn.mined(sent1.json.tx_hash)).status).toBe("success");
      expect(await usdgOf(g.wallet.address)).toBeGreaterThan(before + BigInt(t1.json.swap.amount_out_min) - 1n);

      const t2 = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "USDG", token_out: "ETH", notional_usd: 15 },
        g.walletKey,
      );
      expect(t2.status, JSON.stringify(t2.json)).toBe(200);
      const sent2 = await agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, g.executor, t2.json.tx) },
        g.walletKey,
      );
      expect(sent2.status, JSON.stringify(sent2.json)).toBe(200);
      expect((await dn.mined(sent2.json.tx_hash)).status).toBe("success");

      // Listed for the wallet (not the executor), path session, mined by the watcher.
      const listed = async () => (await agent.get("/me/trades", g.walletKey)).json.trades as any[];
      for (let i = 0; i < 100 && (await listed()).filter((t) => t.status === "mined").length < 2; i++)
        await new Promise((r) => setTimeout(r, 100));
      const rows = await listed();
      const byHash = (h: Hex) => rows.find((t) => t.tx_hash === h.toLowerCase());
      expect(byHash(sent1.json.tx_hash)).toMatchObject({ status: "mined", path: "session", session_id: g.sessionId });
      expect(byHash(sent2.json.tx_hash)).toMatchObject({ status: "mined", path: "session", session_id: g.sessionId });
      expect(BigInt(byHash(sent1.json.tx_hash).amount_in)).toBe(BigInt(t1.json.swap.amount_in));
      expect(
        (await agent.get("/me/trades", g.executorKey)).json.trades.some(
          (t: any) => t.tx_hash === sent1.json.tx_hash.toLowerCase(),
        ),
      ).toBe(false);
    },
  );

  it("refuses past the per-trade and 24-hour caps, and a token outside the session", async () => {
    const { agent } = stack;
    const over = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 60 },
      g.executorKey,
    );
    expect([over.status, over.json.error.code]).toEqual([422, "SESSION_MAX_TRADE"]);
    // Listed with refused=1 for the session's wallet, like other refused trades.
    const refused = (await agent.get("/me/trades?refused=1", g.walletKey)).json.trades.find(
      (t: any) => t.status === "refused",
    );
    expect(refused).toMatchObject({
      path: "session",
      code: "SESSION_MAX_TRADE",
      session_id: g.sessionId,
      tx_hash: null,
    });
    const wrong = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: "WETH", notional_usd: 5 },
      g.executorKey,
    );
    expect(wrong.status).toBe(422);
    expect(["SESSION_TOKENS", "NO_ROUTE"]).toContain(wrong.json.error.code);
    // 35 co-signed so far; 45 + 45 would pass 120.
    const a = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 45 },
      g.executorKey,
    );
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const b = await agent.post(
      "/live/session/trade",
      { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 45 },
      g.executorKey,
    );
    expect([b.status, b.json.error.code]).toEqual([422, "SESSION_MAX_DAY"]);
  });

  it(
    "revoke stops the next trade for every key and answers the on-chain steps; once sent, an old signed leaf " +
      "reverts on chain",
    async () => {
      const { dn, agent } = stack;
      // A co-signed trade the executor still holds, not sent.
      const held = await agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "USDG", token_out: "ETH", notional_usd: 5 },
        g.executorKey,
      );
      expect(held.status, JSON.stringify(held.json)).toBe(200);
      expect(
        (await agent.post("/live/session/revoke", { session_id: g.sessionId }, g.executorKey)).json.error.code,
      ).toBe("WALLET_MISMATCH");
      const rv = await agent.post("/live/session/revoke", { session_id: g.sessionId, reset_code: true }, g.walletKey);
      expect(rv.status, JSON.stringify(rv.json)).toBe(200);
      expect(rv.json).toMatchObject({ status: "revoked", signer_revoked: true });
      expect(rv.json.on_chain.map((s: any) => s.kind)).toEqual(["disable_delegation", "increment_nonce", "lockdown"]);
      expect(rv.json.simulation.every((s: any) => s.ok)).toBe(true);
      expect(rv.json.reset_code.authorization.contract_address).toBe("0x0000000000000000000000000000000000000000");
      for (const key of [g.executorKey, g.walletKey]) {
        const r = await agent.post(
          "/live/session/trade",
          { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
          key,
        );
        expect([r.status, r.json.error.code]).toEqual([409, "SESSION_REVOKED"]);
      }
      // The main key sends the on-chain steps; the held leaf, sent straight to the chain, reverts.
      for (const step of rv.json.on_chain)
        expect(
          (await dn.mined(await dn.walletFor(g.wallet).sendTransaction({ to: step.tx.to, data: step.tx.data }))).status,
        ).toBe("success");
      const replay = await dn
        .walletFor(g.executor)
        .sendTransaction({ to: held.json.tx.to, data: held.json.tx.data, gas: 1_000_000n });
      expect((await dn.mined(replay)).status).toBe("reverted");
      const rows = (await agent.get("/me/sessions", g.walletKey)).json.sessions;
      expect(rows.find((x: any) => x.session_id === g.sessionId).status).toBe("revoked");
    },
  );
});

describe("grant and trade refusals", () => {
  let wallet: Awaited<ReturnType<Stack["dn"]["freshWallet"]>>;
  let key: string;
  let executor: Address;
  const grant = (body: Record<string, unknown>, k = key) =>
    stack.agent.post("/live/session/grant", { wallet: wallet.address, executor, ...body }, k);
  const code = async (p: Promise<{ status: number; json: any }>) => {
    const r = await p;
    return [r.status, r.json?.error?.code];
  };
  beforeAll(async () => {
    wallet = await stack.dn.freshWallet(parseEther("2"));
    key = await stack.agent.signIn(wallet);
    executor = (await stack.dn.freshWallet(0n)).address;
  });

  it("the same terms asked twice at once are one pending session (one root), never a 500", async () => {
    // Two grants in one second have the same root; a pair straddling a second boundary is asked
    // again (with other terms, so no earlier root is met) until one pair lands in one second.
    let sameRoot = 0;
    for (let attempt = 0; attempt < 5 && sameRoot === 0; attempt++) {
      const body = { max_trade_usd: 30, max_day_usd: 60 + attempt, max_trades: 3, expires_in_s: 1_800 };
      const [a, b] = await Promise.all([grant(body), grant(body)]);
      expect([a.status, b.status], JSON.stringify([a.json, b.json])).toEqual([200, 200]);
      if (a.json.sign.delegation.delegation_hash !== b.json.sign.delegation.delegation_hash) continue;
      sameRoot++;
      expect(b.json.session_id).toBe(a.json.session_id);
    }
    expect(sameRoot).toBe(1);
  });

  it("SESSION_LIMIT for every bound of the grant; BAD_EXECUTOR; WALLET_MISMATCH; unknown fields", async () => {
    for (const bad of [
      { max_trade_usd: 1_001 },
      { max_trade_usd: 0 },
      { max_trade_usd: 10, max_day_usd: 9 },
      { max_trade_usd: 10, max_day_usd: 1_001 },
      { max_trades: 0 },
      { max_trades: 10_001 },
      { max_trades: 1.5 },
      { expires_in_s: 59 },
      { expires_in_s: 30 * 86_400 + 1 },
      { tokens: ["ETH"] },
      { tokens: ["ETH", "eth"] },
      { setup_budget_usd: 10_001 },
    ])
      expect(await code(grant(bad)), JSON.stringify(bad)).toEqual([422, "SESSION_LIMIT"]);
    // The bounds themselves are fine.
    const edge = await grant({
      max_trade_usd: 1_000,
      max_day_usd: 100_000,
      max_trades: 10_000,
      expires_in_s: 30 * 86_400,
    });
    expect(edge.status, JSON.stringify(edge.json)).toBe(200);
    expect((await grant({ max_trades: 1, expires_in_s: 60, max_trade_usd: 1, max_day_usd: 100 })).status).toBe(200);
    expect(await code(grant({ executor: wallet.address }))).toEqual([422, "BAD_EXECUTOR"]);
    expect(await code(grant({ executor: stack.api.config.cosigner }))).toEqual([422, "BAD_EXECUTOR"]);
    const other = await stack.dn.freshWallet(0n);
    expect(await code(grant({ wallet: other.address }))).toEqual([403, "WALLET_MISMATCH"]);
    expect(await code(grant({ max_fee_bps: 10 }))).toEqual([400, "BAD_REQUEST"]);
  });

  it("WALLET_CODE for a wallet delegated to other code; TOKEN_NOT_ALLOWED for a symbol that is not core", async () => {
    const odd = await stack.dn.freshWallet(parseEther("1"));
    const oddKey = await stack.agent.signIn(odd);
    const auth = await odd.signAuthorization({
      contractAddress: stack.dn.token("WETH"),
      chainId: 4663,
      nonce: (await stack.dn.pub.getTransactionCount({ address: odd.address })) + 1,
    });
    await stack.dn.mined(
      await stack.dn.walletFor(odd).sendTransaction({ to: odd.address, data: "0x", authorizationList: [auth] }),
    );
    const wc = await stack.agent.post("/live/session/grant", { wallet: odd.address, executor }, oddKey);
    expect([wc.status, wc.json.error?.code], JSON.stringify(wc.json)).toEqual([422, "WALLET_CODE"]);
    expect(await code(grant({ tokens: ["ETH", "DOGE"] }))).toEqual([422, "TOKEN_NOT_ALLOWED"]);
    // An address that is no token: SPEC's grant code (404 UNKNOWN_TOKEN), not trading's TOKEN_UNKNOWN.
    expect(await code(grant({ tokens: ["ETH", "0x00000000000000000000000000000000000dead1"] }))).toEqual([
      404,
      "UNKNOWN_TOKEN",
    ]);
  });

  it(
    "switch-on: BAD_SIGNATURE for another signer, a chain-0 or foreign authorization, a missing authorization; " +
      "NO_SESSION for another wallet's key; SESSION_PENDING before it",
    async () => {
      const st = (await grant({})).json;
      const td = typedDataOf(st.sign.delegation.typed_data);
      const a = st.sign.authorization;
      const auth = await wallet.signAuthorization({
        contractAddress: a.contract_address,
        chainId: a.chain_id,
        nonce: a.nonce,
      });
      const sig = await wallet.signTypedData(td);
      const stranger = await stack.dn.freshWallet(0n);
      const on = (body: Record<string, unknown>, k = key) =>
        stack.agent.post("/live/session/grant", { session_id: st.session_id, ...body }, k);
      expect(
        await code(
          on({
            delegation_signature: await stranger.signTypedData(td),
            authorization_signature: serializeSignature(auth),
          }),
        ),
      ).toEqual([422, "BAD_SIGNATURE"]);
      expect(
        await code(on({ delegation_signature: "0x1234", authorization_signature: serializeSignature(auth) })),
      ).toEqual([400, "BAD_SIGNATURE"]);
      expect(await code(on({ delegation_signature: sig }))).toEqual([422, "BAD_SIGNATURE"]);
      const chain0 = await wallet.signAuthorization({
        contractAddress: a.contract_address,
        chainId: 0,
        nonce: a.nonce,
      });
      expect(
        await code(on({ delegation_signature: sig, authorization_signature: serializeSignature(chain0) })),
      ).toEqual([422, "BAD_SIGNATURE"]);
      const foreign = await wallet.signAuthorization({
        contractAddress: stack.dn.token("WETH"),
        chainId: 4663,
        nonce: a.nonce,
      });
      expect(
        await code(on({ delegation_signature: sig, authorization_signature: serializeSignature(foreign) })),
      ).toEqual([422, "BAD_SIGNATURE"]);
      const strangerKey = await stack.agent.signIn(stranger);
      expect(
        await code(on({ delegation_signature: sig, authorization_signature: serializeSignature(auth) }, strangerKey)),
      ).toEqual([404, "NO_SESSION"]);
      expect(
        await code(
          stack.agent.post(
            "/live/session/trade",
            { session_id: st.session_id, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
            key,
          ),
        ),
      ).toEqual([409, "SESSION_PENDING"]);
      // Nothing above changed it: the right signatures still switch it on, and again is the same answer.
      const ok = await on({ delegation_signature: sig, authorization_signature: serializeSignature(auth) });
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expect(ok.json).toMatchObject({
        status: "active",
        authorization_stored: true,
        delegation_hash: st.sign.delegation.delegation_hash,
      });
      expect(
        (await on({ delegation_signature: sig, authorization_signature: serializeSignature(auth) })).json.status,
      ).toBe("active");
    },
  );

  it(
    "trade: SESSION_TERMS for other risk terms, SESSION_SETUP for a token input without setup, NO_SESSION for an " +
      "unknown id",
    async () => {
      const g = await grantedSession(stack, {}, { setup: false });
      // Only the upgrade, no approvals: USDG cannot go in yet.
      const up = g.start.setup.steps.find((s: any) => s.kind === "upgrade");
      expect(up).toBeDefined();
      const t = (body: Record<string, unknown>) =>
        code(
          stack.agent.post(
            "/live/session/trade",
            { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5, ...body },
            g.executorKey,
          ),
        );
      expect(await t({ shield: true })).toEqual([400, "SESSION_TERMS"]);
      expect(await t({ accept_risks: ["HONEYPOT"] })).toEqual([400, "SESSION_TERMS"]);
      expect(await t({ token_in: "USDG", token_out: "ETH" })).toEqual([422, "SESSION_SETUP"]);
      expect(
        await code(
          stack.agent.post(
            "/live/session/trade",
            { session_id: "ses_00000000000000000000000000000000", token_in: "ETH", token_out: "USDG", notional_usd: 5 },
            g.executorKey,
          ),
        ),
      ).toEqual([404, "NO_SESSION"]);
      expect(
        await code(
          stack.agent.post(
            "/live/session/trade",
            { session_id: g.sessionId, token_in: "ETH", token_out: "USDG" },
            g.executorKey,
          ),
        ),
      ).toEqual([400, "BAD_REQUEST"]);
    },
  );
});

describe("a binding changed in a store, a sanctioned executor", () => {
  it(
    "SESSION_BOUND when the service's or the co-signer's stored binding no longer hashes to the signed root's " +
      "salt",
    async () => {
      const g = await grantedSession(stack, {}, { setup: false });
      const t = () =>
        stack.agent.post(
          "/live/session/trade",
          { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
          g.executorKey,
        );
      expect((await t()).status).toBe(200);
      const widen = (table: string, column: string) =>
        (table === "cosigner_roots" ? stack.api.signers!.cosignerDb : stack.store.db).query(
          `UPDATE app.${table} SET binding = replace(binding, '"max_trade_usd":50', '"max_trade_usd":1000') WHERE ` +
            `${column} = $1`,
          [g.sessionId],
        );
      await widen("cosigner_roots", "session_id");
      const byCosigner = await t();
      expect([byCosigner.status, byCosigner.json.error.code]).toEqual([409, "SESSION_BOUND"]);
      await widen("sessions", "id");
      const byService = await t();
      expect([byService.status, byService.json.error.code]).toEqual([409, "SESSION_BOUND"]);
    },
  );

  it("451 SANCTIONED for an executor on the sanctions list", async () => {
    const { dn, agent } = stack;
    const wallet = await dn.freshWallet(parseEther("1"));
    const key = await agent.signIn(wallet);
    const executor = (await dn.freshWallet(0n)).address;
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[executor]],
      }),
    );
    const r = await agent.post("/live/session/grant", { wallet: wallet.address, executor }, key);
    expect([r.status, r.json.error.code, r.json.error.field]).toEqual([451, "SANCTIONED", "executor"]);
  });
});

describe("npm run cosigner and npm run executors: the two signing services, each its own process", () => {
  it("co-signs and holds executor keys for an API that holds no key, each with its own secret and store; refuses a " +
    "wrong or swapped secret; a service that is gone signs nothing", async () => {
    const { dn } = stack;
    const [cPort, ePort] = [await freePort(), await freePort()];
    const [cToken, eToken] = [randomBytes(24).toString("hex"), randomBytes(24).toString("hex")];
    const dataDir = mkdtempSync(join(tmpdir(), "pit-signers-"));
    const { DATABASE_URL: _shared, ...env } = process.env;
    const run = (script: string, own: Record<string, string>) => {
      const child = spawn(process.execPath, ["--import", "tsx", script], {
        cwd: ROOT,
        env: { ...env, ANVIL_PORT: String(dn.anvil.port), DATA_DIR: dataDir, ...own },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout!.on("data", (d) => (out += d));
      child.stderr!.on("data", (d) => (out += d));
      return { child, out: () => out };
    };
    const cos = run("scripts/cosigner.ts", { COSIGNER_TOKEN: cToken, COSIGNER_PORT: String(cPort) });
    const exe = run("scripts/executors.ts", { EXECUTORS_TOKEN: eToken, EXECUTORS_PORT: String(ePort) });
    const [cUrl, eUrl] = [`http://127.0.0.1:${cPort}`, `http://127.0.0.1:${ePort}`];
    const apiWith = (ct: string, et: string) =>
      serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        cosigner: httpCosigner(cUrl, ct, stack.api.config.cosigner!),
        executors: httpExecutors(eUrl, et),
      });
    const [remote, wrong] = [await apiWith(cToken, eToken), await apiWith(eToken, cToken)];
    try {
      for (let i = 0; i < 600 && !(cos.out().includes("[cosigner]") && exe.out().includes("[executors]")); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(cos.out()).toContain(`[cosigner] ${stack.api.config.cosigner}`);
      expect(exe.out()).toContain("[executors] on");
      const s2 = { ...stack, api: remote, agent: agentOf(remote, dn) };
      const g = await grantedSession(s2);
      const t = await s2.agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
        g.executorKey,
      );
      expect(t.status, JSON.stringify(t.json)).toBe(200);
      const sent = await s2.agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(s2, g.executor, t.json.tx) },
        g.executorKey,
      );
      expect((await dn.mined(sent.json.tx_hash)).status).toBe("success");
      // The co-signer's limits answer through the wire with their codes.
      const over = await s2.agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 49, slippage_bps: 5_000 },
        g.executorKey,
      );
      expect(over.status).toBe(422);
      // The executor service's secret does not open the co-signer (nor the other way round).
      const w = agentOf(wrong, dn);
      const wk = await w.signIn(g.executor);
      const r = await w.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
        wk,
      );
      expect([r.status, r.json.error.code]).toEqual([503, "SIGNER_UNAVAILABLE"]);
      // A live agent's executor key is made and sealed in the executor service's own store: none in the
      // API's; its attestation is the executor's own. The co-signer's process serves no executor call.
      const owner = privateKeyToAccount(generatePrivateKey());
      const ok = await s2.agent.signIn(owner);
      const live = await remote.call(
        "POST",
        "/api/v1/hosted",
        {
          brain: "rule",
          params: { targets: { ETH: 0.5, USDG: 0.5 } },
          interval_s: 60,
          pairs: ["ETH/USDG"],
          limits: { max_trade_usd: 20, max_day_usd: 40, max_position_usd: 100 },
          mode: "live",
        },
        { authorization: `Bearer ${ok}` },
      );
      expect(live.status, live.text).toBe(201);
      expect(
        await verifyMessage({
          address: live.json.executor,
          message: live.json.executor_attestation.message,
          signature: live.json.executor_attestation.signature,
        }),
      ).toBe(true);
      expect(
        await stack.store.db.query("SELECT 1 FROM app.executor_keys WHERE address = $1", [
          live.json.executor.toLowerCase(),
        ]),
      ).toHaveLength(0);
      await expect(httpExecutors(cUrl, cToken).state(live.json.executor)).rejects.toMatchObject({
        code: "SIGNER_REQUIRED",
      });
      const view = await remote.call("GET", `/api/v1/hosted/${live.json.id}/executor`, undefined, {
        authorization: `Bearer ${ok}`,
      });
      expect(view.json).toMatchObject({
        executor: live.json.executor,
        executor_attestation: { executor: live.json.executor, owner: owner.address },
      });
      // Its refusals cross the wire with their codes: a transfer is not a redeem.
      await expect(
        httpExecutors(eUrl, eToken).signTrade(live.json.executor, {
          to: stack.dn.universe.contracts.delegationManager,
          data: "0xa9059cbb",
          chainId: 4663,
          nonce: 0,
          gas: 100_000n,
          maxFeePerGas: 10n ** 9n,
          maxPriorityFeePerGas: 1n,
          feeBps: 25,
        }),
      ).rejects.toMatchObject({ code: "TX_REFUSED" });
      await expect(httpExecutors(eUrl, cToken).state(live.json.executor)).rejects.toMatchObject({
        code: "SIGNER_REQUIRED",
      });
      cos.child.kill("SIGTERM");
      exe.child.kill("SIGTERM");
      await Promise.all(
        [cos, exe].map((p) => (p.child.exitCode !== null ? null : new Promise((res) => p.child.once("exit", res)))),
      );
      const gone = await s2.agent.post(
        "/live/session/trade",
        { session_id: g.sessionId, token_in: "ETH", token_out: "USDG", notional_usd: 5 },
        g.executorKey,
      );
      expect([gone.status, gone.json.error.code]).toEqual([503, "SIGNER_UNAVAILABLE"]);
      // A live agent needs its signing service: gone, create answers 503 SIGNER_REQUIRED.
      const noSigner = await remote.call(
        "POST",
        "/api/v1/hosted",
        {
          brain: "rule",
          params: { targets: { ETH: 0.5, USDG: 0.5 } },
          interval_s: 60,
          pairs: ["ETH/USDG"],
          limits: { max_trade_usd: 20, max_day_usd: 40, max_position_usd: 100 },
          mode: "live",
        },
        { authorization: `Bearer ${ok}` },
      );
      expect([noSigner.status, noSigner.json.error.code]).toEqual([503, "SIGNER_REQUIRED"]);
    } finally {
      cos.child.kill("SIGKILL");
      exe.child.kill("SIGKILL");
      await remote.close();
      await wrong.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
