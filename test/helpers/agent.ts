import type { Address, Hex } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Api } from "./api.js";
import type { Devnet } from "./devnet.js";

type Account = ReturnType<typeof privateKeyToAccount>;
export type PlanTx = { to: Address; data: Hex; value: string; chain_id: number };

/** What an agent does: sign in with its wallet, call with its key, sign plan transactions locally. */
export function agentOf(api: Api, dn: Devnet) {
  return {
    async signIn(a: Account): Promise<string> {
      const ch = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
      if (typeof ch?.message !== "string") throw new Error(`the sign-in challenge answered ${JSON.stringify(ch)}`);
      return (
        await api.call("POST", "/api/v1/auth/verify", {
          address: a.address,
          signature: await a.signMessage({ message: ch.message }),
        })
      ).json.api_key;
    },
    post: (path: string, body: unknown, key: string) =>
      api.call("POST", `/api/v1${path}`, body, { authorization: `Bearer ${key}` }),
    get: (path: string, key: string) =>
      api.call("GET", `/api/v1${path}`, undefined, { authorization: `Bearer ${key}` }),
    /**
     * Signs with the agent's own nonce and fees, the answer's gas when it gives one; our to, data, value and chain id.
     */
    async sign(a: Account, tx: PlanTx & { gas?: number }, opts: { nonceOffset?: number; nonce?: number } = {}) {
      const nonce =
        opts.nonce ??
        (await dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" })) + (opts.nonceOffset ?? 0);
      const fees = await dn.pub.estimateFeesPerGas();
      return a.signTransaction({
        chainId: tx.chain_id,
        to: tx.to,
        data: tx.data,
        value: BigInt(tx.value),
        nonce,
        gas: BigInt(Math.max(tx.gas ?? 0, 1_000_000)),
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
    },
  };
}
