import { encodeFunctionData, getAddress, zeroAddress, type Address } from "viem";
import { z } from "zod";
import { cappedMulticall } from "../../lib/chain.js";
import { erc20Abi } from "../../abis/erc20.js";
import { multicall3Abi } from "../../abis/multicall3.js";
import { permit2Abi } from "../../abis/permit2.js";
import type { Config } from "../../lib/config.js";
import { Refusal, rpc } from "../errors/index.js";
import { buildApprove, buildLockdown, type Step } from "./txs.js";
import type { KeyRecord } from "../auth/index.js";
import { simulateCalls } from "../ports/simulation.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x address");
export const revokeRequest = z
  .object({
    wallet: address,
    tokens: z.array(z.string().min(1).max(64)).min(1).max(20).default(["USDG"]),
    spender: address.optional(),
    action: z.literal("revoke").optional(),
  })
  .strict();
/** live/revoke's request as its route's schema parsed it. */
export type RevokeParameters = z.infer<typeof revokeRequest>;

// biome-ignore lint/suspicious/noExplicitAny: several ABIs through one encoder; each call names its ABI's function
const encodeCall = (abi: any, functionName: string, args: unknown[]) =>
  encodeFunctionData({ abi, functionName, args } as never);

type RevokeDeps = Pick<Common, "config" | "chain"> & { resolveToken: (param: string) => Address };
type Allowances = Awaited<ReturnType<typeof readAllowances>>;

/**
 * live/revoke: approve(spender, 0) where an allowance remains, and the permit contract's lockdown
 * where the router holds a live permit allowance, simulated against the wallet.
 */
export function createRevoke(d: RevokeDeps) {
  return async function revoke(q: RevokeParameters, who: { key: KeyRecord }) {
    if (lc(q.wallet) !== lc(who.key.wallet))
      throw new Refusal("WALLET_MISMATCH", "this key is bound to another wallet");
    const wallet = getAddress(q.wallet);
    const spender = q.spender ? getAddress(q.spender) : d.config.contracts.permit2;
    const tokens: Address[] = [];
    for (const t of q.tokens) {
      const a = d.resolveToken(t);
      if (a === zeroAddress) throw new Refusal("BAD_REQUEST", "ETH has no allowance to revoke");
      tokens.push(a);
    }
    const read = await readAllowances(d, wallet, spender, tokens);
    const { steps, before } = revokeSteps(d.config, read);
    const simulation = steps.length ? await simulateRevoke(d, read, steps) : null;
    return {
      steps,
      before,
      simulation,
      ready: steps.length > 0,
      nothing_to_revoke: steps.length === 0,
      note: steps.length
        ? "send the steps in order from the wallet; nothing moves funds"
        : "no allowance remains for these tokens",
    };
  };
}

/** Each token's allowance to the spender and the router's permit allowance, and the chain's time. */
async function readAllowances(d: RevokeDeps, wallet: Address, spender: Address, tokens: Address[]) {
  const c = d.config.contracts;
  const calls = tokens.flatMap((t) => [
    { address: t, abi: erc20Abi, functionName: "allowance", args: [wallet, spender] } as const,
    { address: c.permit2, abi: permit2Abi, functionName: "allowance", args: [wallet, t, c.universalRouter] } as const,
  ]);
  const [res, time] = await rpc(
    Promise.all([
      cappedMulticall(d.chain, { contracts: calls }),
      d.chain.readContract({ address: c.multicall3, abi: multicall3Abi, functionName: "getCurrentBlockTimestamp" }),
    ]),
  );
  return { wallet, spender, tokens, res, time };
}

/** approve(spender, 0) for each allowance left, then one lockdown of the router's live permits; `before` as read. */
function revokeSteps(config: Config, { spender, tokens, res, time }: Allowances) {
  const c = config.contracts;
  const steps: Step[] = [];
  const lockdown: { token: Address; spender: Address }[] = [];
  const before = tokens.map((t, i) => {
    const allowance = res[2 * i]!.status === "success" ? (res[2 * i]!.result as bigint) : null;
    const p =
      res[2 * i + 1]!.status === "success" ? (res[2 * i + 1]!.result as readonly [bigint, number, number]) : null;
    if (allowance === null) throw new Refusal("TOKEN_UNKNOWN", `${t} does not answer allowance() like an ERC-20`);
    if (allowance > 0n)
      steps.push({
        kind: "approve",
        why: `set ${t}'s allowance to ${spender} to zero`,
        tx: buildApprove(config.chainId, t, spender, 0n),
        decoded: { function: "approve", token: t, spender, amount: "0" },
      });
    const live = p !== null && p[0] > 0n && BigInt(p[1]) > time;
    if (live) lockdown.push({ token: t, spender: c.universalRouter });
    return {
      token: t,
      spender,
      allowance: allowance.toString(),
      router_permit: p ? { amount: p[0].toString(), expiration: Number(p[1]), live } : null,
    };
  });
  if (lockdown.length)
    steps.push({
      kind: "approve",
      why: "lock down the router's permit allowances",
      tx: buildLockdown(config.chainId, c.permit2, lockdown),
      decoded: { function: "lockdown", approvals: lockdown },
    });
  return { steps, before };
}

/** The steps simulated from the wallet, then the allowances read again: what is left after them. */
async function simulateRevoke(d: RevokeDeps, { wallet, spender, tokens }: Allowances, steps: Step[]) {
  const c = d.config.contracts;
  const reads = tokens.flatMap((t) => [
    { to: t, data: encodeCall(erc20Abi, "allowance", [wallet, spender]) },
    { to: c.permit2, data: encodeCall(permit2Abi, "allowance", [wallet, t, c.universalRouter]) },
  ]);
  const out = await rpc(
    simulateCalls(d.chain, wallet, [], [...steps.map((s) => ({ to: s.tx!.to, data: s.tx!.data })), ...reads]),
  );
  const stepRes = out.slice(0, steps.length);
  const ok = stepRes.every((x) => BigInt(x.status) === 1n);
  const after = tokens.map((t, i) => {
    const a = out[steps.length + 2 * i]!;
    const p = out[steps.length + 2 * i + 1]!;
    return {
      token: t,
      allowance: BigInt(a.returnData.slice(0, 66)).toString(),
      router_permit_amount: BigInt(`0x${p.returnData.slice(2, 66)}`).toString(),
    };
  });
  return { ok, after };
}
