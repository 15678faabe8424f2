import { encodeFunctionData, getAddress, zeroAddress, type Address } from "viem";
import { z } from "zod";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { permit2Abi } from "../../abis/permit2.js";
import { nonceEnforcerAbi } from "../../lib/delegation.js";
import { rpc } from "../errors/index.js";
import { simulateCalls } from "../ports/simulation.js";
import { buildApprove, buildLockdown, type PlanTx, type Who } from "../trading/index.js";
import type { SessionDeps } from "./deps.js";
import { ownSession } from "./grant.js";

export const revokeRequest = z
  .object({ session_id: z.string().min(1).max(64), reset_code: z.boolean().default(false) })
  .strict();
/** A revoke, as the revoke route parses it. */
export type RevokeSessionParameters = z.infer<typeof revokeRequest>;

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
  const c = d.config.contracts;
  const tx = (to: Address, data: `0x${string}`): PlanTx => ({ to, data, value: "0", chain_id: d.config.chainId });

  const onChain: { kind: string; why: string; tx: PlanTx }[] = [];
  if (signed) {
    for (const [i, r] of [s.root, ...s.curveRoots].entries()) {
      const unsignedArgs = { ...r, caveats: r.caveats.map((x) => ({ ...x, args: "0x" as const })) };
      onChain.push({
        kind: "disable_delegation",
        why: `the delegation manager refuses ${i === 0 ? "this root" : "the session's curve root"} from now on`,
        tx: tx(
          c.delegationManager,
          encodeFunctionData({ abi: delegationManagerAbi, functionName: "disableDelegation", args: [unsignedArgs] }),
        ),
      });
    }
    onChain.push({
      kind: "increment_nonce",
      why: "every session root of this wallet signed at the old nonce stops at once",
      tx: tx(
        c.enforcers.NonceEnforcer!,
        encodeFunctionData({ abi: nonceEnforcerAbi, functionName: "incrementNonce", args: [c.delegationManager] }),
      ),
    });
    for (const token of s.binding.curve_tokens ?? []) {
      onChain.push({
        kind: "approve",
        why: "take back the launchpad's allowance of the curve token from setup",
        tx: buildApprove(d.config.chainId, getAddress(token), c.launchpad, 0n),
      });
    }
  }
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
  const approvals = erc20s.map((token, i) => {
    const r = allowances[i];
    const [amount, expiration] =
      r?.status === "success" ? (r.result as readonly [bigint, number, number]) : [null, null];
    return { token, spender: c.universalRouter, amount: amount?.toString() ?? null, expiration };
  });
  const open = approvals.filter((a) => a.amount !== null && a.amount !== "0" && Number(a.expiration) > d.now());
  if (open.length)
    onChain.push({
      kind: "lockdown",
      why: "Permit2: the router may no longer pull these tokens",
      tx: buildLockdown(
        d.config.chainId,
        c.permit2,
        open.map((a) => ({ token: a.token, spender: a.spender })),
      ),
    });

  const simulation = onChain.length
    ? await rpc(
        simulateCalls(
          d.chain,
          s.wallet,
          [],
          onChain.map((x) => ({ to: x.tx.to, data: x.tx.data })),
        ),
      ).then((res) =>
        res.map((r, i) => ({ kind: onChain[i]!.kind, ok: r.status === "0x1", error: r.error?.message ?? null })),
      )
    : [];
  const nonce = q.reset_code ? await rpc(d.chain.getTransactionCount({ address: s.wallet, blockTag: "pending" })) : 0;
  return {
    session_id: s.id,
    status: "revoked",
    revoked_at: revokedAt,
    effective:
      "the service and its co-signer sign nothing more for this session; leaves already signed expire within 120 s unless the on-chain steps land first",
    signer_revoked: signed,
    on_chain: onChain,
    simulation,
    approvals,
    reset_code: q.reset_code
      ? {
          authorization: {
            contract_address: zeroAddress,
            chain_id: d.config.chainId,
            nonce: nonce + 1,
            executor: "self",
          },
          why: "an EIP-7702 authorization to the zero address clears the wallet's code (send it in a type-4 transaction to itself)",
        }
      : null,
  };
}
