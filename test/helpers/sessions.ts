import { expect } from "vitest";
import { parseEther, parseUnits, serializeSignature } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Delegation } from "../../lib/delegation.js";
import type { PlanTx } from "./agent.js";
import type { Stack } from "./stack.js";

/** Sessions as an agent sets them up: sign in wallet and executor, grant, sign, switch on, send the setup. */
type Account = ReturnType<typeof privateKeyToAccount>;

export type Granted = {
  wallet: Account;
  executor: Account;
  walletKey: string;
  executorKey: string;
  sessionId: string;
  start: any;
  root: Delegation;
  curveRoots: Delegation[];
};

/**
 * A fresh wallet (ETH and USDG), a fresh executor (gas), both signed in; the session granted, switched on and set up.
 */
export async function grantedSession(
  s: Stack,
  limits: Record<string, unknown> = {},
  opts: { setup?: boolean } = {},
): Promise<Granted> {
  const g = await tryGrantedSession(s, limits, opts);
  if ("refused" in g) expect(g.refused.status, JSON.stringify(g.refused.json)).toBe(200);
  return g as Granted;
}

/** As grantedSession, but a refused start or switch-on is answered (status and code), not failed. */
export async function tryGrantedSession(
  s: Stack,
  limits: Record<string, unknown> = {},
  opts: { setup?: boolean } = {},
): Promise<Granted | { refused: { status: number; code: string; json: any } }> {
  const { dn, agent } = s;
  const wallet = await dn.freshWallet(parseEther("5"), [[dn.token("USDG"), parseUnits("1000", 6)]]);
  const executor = await dn.freshWallet(parseEther("1"));
  const walletKey = await agent.signIn(wallet);
  const executorKey = await agent.signIn(executor);
  const start = await agent.post(
    "/live/session/grant",
    {
      wallet: wallet.address,
      executor: executor.address,
      max_trade_usd: 50,
      max_day_usd: 120,
      max_trades: 5,
      expires_in_s: 3_600,
      ...limits,
    },
    walletKey,
  );
  if (start.status !== 200)
    return { refused: { status: start.status, code: start.json.error?.code, json: start.json } };
  const { body: switchOn, auth } = await walletSignatures(wallet, start.json);
  const sig = switchOn.delegation_signature;
  const curve: Record<string, string> = {};
  for (const r of start.json.sign.curve_roots)
    curve[r.delegation_hash] = await wallet.signTypedData(typedDataOf(r.typed_data));
  const on = await agent.post(
    "/live/session/grant",
    { ...switchOn, ...(start.json.sign.curve_roots.length ? { curve_root_signatures: curve } : {}) },
    walletKey,
  );
  if (on.status !== 200) return { refused: { status: on.status, code: on.json.error?.code, json: on.json } };
  if (opts.setup !== false) await runSetup(s, wallet, start.json.setup.steps, auth);
  const m = typedDataOf(start.json.sign.delegation.typed_data).message;
  const root: Delegation = { ...m, caveats: m.caveats.map((c: any) => ({ ...c, args: "0x" })), signature: sig };
  const signedOf = (t: any, signature: `0x${string}`): Delegation => {
    const x = typedDataOf(t).message;
    return { ...x, caveats: x.caveats.map((c: any) => ({ ...c, args: "0x" })), signature };
  };
  const curveRoots = start.json.sign.curve_roots.map((r: any) =>
    signedOf(r.typed_data, curve[r.delegation_hash] as `0x${string}`),
  );
  return {
    wallet,
    executor,
    walletKey,
    executorKey,
    sessionId: start.json.session_id,
    start: start.json,
    root,
    curveRoots,
  };
}

/** A grant started and not switched on: a fresh wallet (ETH) and executor, the wallet signed in, the start answer. */
export async function pendingGrant(s: Stack, body: Record<string, unknown>) {
  const { dn, agent } = s;
  const wallet = await dn.freshWallet(parseEther("2"));
  const executor = await dn.freshWallet(parseEther("1"));
  const key = await agent.signIn(wallet);
  const start = await agent.post(
    "/live/session/grant",
    { wallet: wallet.address, executor: executor.address, expires_in_s: 3_600, ...body },
    key,
  );
  expect(start.status, JSON.stringify(start.json)).toBe(200);
  return { wallet, executor, key, start: start.json };
}

/** The wallet's part of switch-on: its signature of the root and, for a plain EOA, of the EIP-7702 authorization. */
export async function walletSignatures(wallet: Account, start: any) {
  const delegation_signature = await wallet.signTypedData(typedDataOf(start.sign.delegation.typed_data));
  const a = start.sign.authorization;
  const auth = a
    ? await wallet.signAuthorization({ contractAddress: a.contract_address, chainId: a.chain_id, nonce: a.nonce })
    : null;
  return {
    body: {
      session_id: start.session_id as string,
      delegation_signature,
      ...(auth ? { authorization_signature: serializeSignature(auth) } : {}),
    },
    auth,
  };
}

/** The typed data of an answer as viem signs it (the salt travels as a decimal string). */
export const typedDataOf = (t: any) => ({ ...t, message: { ...t.message, salt: BigInt(t.message.salt) } });

/** The main key sends the setup steps: the 7702 upgrade (to itself, carrying the authorization), then approvals. */
export async function runSetup(
  s: Pick<Stack, "dn">,
  wallet: Account,
  steps: any[],
  auth: Awaited<ReturnType<Account["signAuthorization"]>> | null,
) {
  const w = s.dn.walletFor(wallet);
  for (const step of steps) {
    const hash =
      step.kind === "upgrade"
        ? await w.sendTransaction({ to: wallet.address, data: "0x", authorizationList: [auth!] })
        : // The upgrade bumped the nonce twice (its authorization too): take it from the mined state,
          // not the pool's view.
          await w.sendTransaction({
            to: step.tx.to,
            data: step.tx.data,
            value: BigInt(step.tx.value),
            nonce: await s.dn.pub.getTransactionCount({ address: wallet.address, blockTag: "latest" }),
          });
    expect((await s.dn.mined(hash)).status, step.kind).toBe("success");
  }
}

/** The executor signs the answer's redeem transaction with its own nonce and gas. */
export async function executorSigns(s: Stack, executor: Account, tx: PlanTx & { gas?: number }) {
  return s.agent.sign(executor, tx);
}
