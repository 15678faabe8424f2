import { expect } from "vitest";
import { parseEther, parseUnits, serializeSignature } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Delegation } from "../../lib/delegation.js";
import type { PlanTx } from "./agent.js";
import type { Stack } from "./stack.js";

/** Sessions as an agent sets them up: sign in wallet and executor, grant, sign, switch on, send the setup. */
type Account = ReturnType<typeof privateKeyToAccount>;

export type Granted = { wallet: Account; executor: Account; walletKey: string; executorKey: string; sessionId: string; start: any; root: Delegation };

/** A fresh wallet (ETH and USDG), a fresh executor (gas), both signed in; the session granted, switched on and set up. */
export async function grantedSession(s: Stack, limits: Record<string, unknown> = {}, opts: { setup?: boolean } = {}): Promise<Granted> {
  const { dn, agent } = s;
  const wallet = await dn.freshWallet(parseEther("5"), [[dn.token("USDG"), parseUnits("1000", 6)]]);
  const executor = await dn.freshWallet(parseEther("1"));
  const walletKey = await agent.signIn(wallet);
  const executorKey = await agent.signIn(executor);
  const start = await agent.post("/live/session/grant", { wallet: wallet.address, executor: executor.address, max_trade_usd: 50, max_day_usd: 120, max_trades: 5, expires_in_s: 3_600, ...limits }, walletKey);
  expect(start.status, JSON.stringify(start.json)).toBe(200);
  const sig = await wallet.signTypedData(typedDataOf(start.json.sign.delegation.typed_data));
  const a = start.json.sign.authorization;
  const auth = a ? await wallet.signAuthorization({ contractAddress: a.contract_address, chainId: a.chain_id, nonce: a.nonce }) : null;
  const on = await agent.post("/live/session/grant", { session_id: start.json.session_id, delegation_signature: sig, ...(auth ? { authorization_signature: serializeSignature(auth) } : {}) }, walletKey);
  expect(on.status, JSON.stringify(on.json)).toBe(200);
  if (opts.setup !== false) await runSetup(s, wallet, start.json.setup.steps, auth);
  const m = typedDataOf(start.json.sign.delegation.typed_data).message;
  const root: Delegation = { ...m, caveats: m.caveats.map((c: any) => ({ ...c, args: "0x" })), signature: sig };
  return { wallet, executor, walletKey, executorKey, sessionId: start.json.session_id, start: start.json, root };
}

/** The typed data of an answer as viem signs it (the salt travels as a decimal string). */
export const typedDataOf = (t: any) => ({ ...t, message: { ...t.message, salt: BigInt(t.message.salt) } });

/** The main key sends the setup steps: the 7702 upgrade (to itself, carrying the authorization), then approvals. */
async function runSetup(s: Stack, wallet: Account, steps: any[], auth: Awaited<ReturnType<Account["signAuthorization"]>> | null) {
  const w = s.dn.walletFor(wallet);
  for (const step of steps) {
    const hash =
      step.kind === "upgrade"
        ? await w.sendTransaction({ to: wallet.address, data: "0x", authorizationList: [auth!] })
        : await w.sendTransaction({ to: step.tx.to, data: step.tx.data, value: BigInt(step.tx.value) });
    expect((await s.dn.mined(hash)).status, step.kind).toBe("success");
  }
}

/** The executor signs the answer's redeem transaction with its own nonce and gas. */
export async function executorSigns(s: Stack, executor: Account, tx: PlanTx & { gas?: number }) {
  return s.agent.sign(executor, tx);
}

