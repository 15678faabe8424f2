import { encodeFunctionData, getAddress, zeroAddress, type Address } from "viem";
import { z } from "zod";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { permit2Abi } from "../../abis/permit2.js";
import { nonceEnforcerAbi } from "../../lib/delegation.js";
import { rpc } from "../errors/index.js";
import { simulateCalls } from "../ports/simulation.js";
import { buildApprove, buildLockdown, type PlanTx, type Who } from "../trading/index.js";
import type { SessionDeps } from "./deps.js";
import type { StoredSession } from "./store.js";
import { ownSession } from "./grant.js";

export const revokeRequest = z
  .object({ session_id: z.string().min(1).max(64), reset_code: z.boolean().default(false) })
  .strict();
/** A revoke, as the revoke route parses it. */
export type RevokeSessionParameters = z.infer<typeof revokeRequest>;

/** One transaction the main key sends to end the session on chain, and why. */
type OnChainStep = { kind: string; why: string; tx: PlanTx };
type Approval = { token: Address; spender: Address; amount: string | null; expiration: number | null };

/**
 * live/session/revoke (the wallet's key): the service and its co-signer stop at once, for every
 * key; the answer lists what the main key sends to end it on chain too: disableDelegation of the
 * root, a bump of the wallet's nonce at the delegation manager (every root carrying the old nonce
 * dies), the Permit2 lockdown of the router's allowances, and, when asked, the code reset.
 */
export async function revokeSession(d: SessionDeps, q: RevokeSessionParameters, who: Who) {
  const s = await ownSession(d, q.session_id, who);
  const signed = s.activatedAt !== null;
  if (signed) await d.cosigner?.revoke(s.delegationHash);
  const revokedAt = await d.store.revoke(s.id);
  const onChain = signed ? signedRootSteps(d, s) : [];
  const approvals = await routerApprovals(d, s);
  const lockdown = lockdownStep(d, approvals);
  if (lockdown) onChain.push(lockdown);
  const simulation = await simulateSteps(d, s, onChain);
  return {
    session_id: s.id,
    status: "revoked",
    revoked_at: revokedAt,
    effective:
      "the service and its co-signer sign nothing more for this session; leaves already signed expire " +
      "within 120 s unless the on-chain steps land first",
    signer_revoked: signed,
    on_chain: onChain,
    simulation,
    approvals,
    reset_code: q.reset_code ? await resetCode(d, s) : null,
  };
}

const planTx = (d: SessionDeps, to: Address, data: `0x${string}`): PlanTx => ({
  to,
  data,
  value: "0",
  chain_id: d.config.chainId,
});

/**
 * A switched-on session's steps: disable its root (and curve roots) at the delegation manager,
 * bump the wallet's nonce there, and take back the launchpad's allowance of each curve token.
 */
function signedRootSteps(d: SessionDeps, s: StoredSession): OnChainStep[] {
  const c = d.config.contracts;
  const steps: OnChainStep[] = [...[s.root, ...s.curveRoots].entries()].map(([i, r]) => {
    const unsignedArgs = { ...r, caveats: r.caveats.map((x) => ({ ...x, args: "0x" as const })) };
    return {
      kind: "disable_delegation",
      why: `the delegation manager refuses ${i === 0 ? "this root" : "the session's curve root"} from now on`,
      tx: planTx(
        d,
        c.delegationManager,
        encodeFunctionData({ abi: delegationManagerAbi, functionName: "disableDelegation", args: [unsignedArgs] }),
      ),
    };
  });
  steps.push({
    kind: "increment_nonce",
    why: "every session root of this wallet signed at the old nonce stops at once",
    tx: planTx(
      d,
      c.enforcers.NonceEnforcer!,
      encodeFunctionData({ abi: nonceEnforcerAbi, functionName: "incrementNonce", args: [c.delegationManager] }),
    ),
  });
  for (const token of s.binding.curve_tokens ?? [])
    steps.push({
      kind: "approve",
      why: "take back the launchpad's allowance of the curve token from setup",
      tx: buildApprove(d.config.chainId, getAddress(token), c.launchpad, 0n),
    });
  return steps;
}

/** The router's Permit2 allowances of the session's ERC-20 tokens, as the chain reads now (null: unread). */
async function routerApprovals(d: SessionDeps, s: StoredSession): Promise<Approval[]> {
  const c = d.config.contracts;
  const erc20s = s.tokens.filter((t) => t.address && t.address !== zeroAddress).map((t) => t.address!);
  const allowances = erc20s.length
    ? await rpc(
        d.chain.multicall({
          contracts: erc20s.map((token) => ({
            address: c.permit2,
            abi: permit2Abi,
            functionName: "allowance" as const,
            args: [s.wallet, token, c.universalRouter] as const,
          })),
          allowFailure: true,
        }),
      )
    : [];
  return erc20s.map((token, i) => {
    const r = allowances[i];
    const [amount, expiration] =
      r?.status === "success" ? (r.result as readonly [bigint, number, number]) : [null, null];
    return { token, spender: c.universalRouter, amount: amount?.toString() ?? null, expiration };
  });
}

/** The Permit2 lockdown of the allowances still open, or null when none is. */
function lockdownStep(d: SessionDeps, approvals: Approval[]): OnChainStep | null {
  const open = approvals.filter((a) => a.amount !== null && a.amount !== "0" && Number(a.expiration) > d.now());
  if (!open.length) return null;
  return {
    kind: "lockdown",
    why: "Permit2: the router may no longer pull these tokens",
    tx: buildLockdown(
      d.config.chainId,
      d.config.contracts.permit2,
      open.map((a) => ({ token: a.token, spender: a.spender })),
    ),
  };
}

/** Each step simulated from the wallet, in order. */
async function simulateSteps(d: SessionDeps, s: StoredSession, steps: OnChainStep[]) {
  if (!steps.length) return [];
  const res = await rpc(
    simulateCalls(
      d.chain,
      s.wallet,
      [],
      steps.map((x) => ({ to: x.tx.to, data: x.tx.data })),
    ),
  );
  return res.map((r, i) => ({ kind: steps[i]!.kind, ok: r.status === "0x1", error: r.error?.message ?? null }));
}

/** The EIP-7702 authorization that clears the wallet's code, at the nonce after its next transaction. */
async function resetCode(d: SessionDeps, s: StoredSession) {
  const nonce = await rpc(d.chain.getTransactionCount({ address: s.wallet, blockTag: "pending" }));
  return {
    authorization: { contract_address: zeroAddress, chain_id: d.config.chainId, nonce: nonce + 1, executor: "self" },
    why:
      "an EIP-7702 authorization to the zero address clears the wallet's code " +
      "(send it in a type-4 transaction to itself)",
  };
}
