import type { Address, Hex, LocalAccount, TransactionSerializableEIP1559 } from "viem";
import { numberToHex } from "viem";
import type { Config } from "../../lib/config.js";
import { devnetAccount } from "../../lib/devnetAccount.js";

/** Account 1 of the devnet mnemonic is the devnet's platform wallet. */
const DEVNET_PLATFORM_INDEX = 1;

/**
 * The platform wallet's signer: the only key that may move the treasury's split. The API process
 * holds no raw key for it outside the devnet: in production it asks a separate signer (Clef,
 * Web3Signer or any JSON-RPC signer) for `eth_signTransaction` and sends the bytes itself.
 */
export type PlatformSigner = {
  readonly address: Address;
  signTransaction(tx: TransactionSerializableEIP1559 & { nonce: number; gas: bigint; chainId: number }): Promise<Hex>;
};

/** Devnet: an anvil account in this process. */
export function localPlatformSigner(account: LocalAccount): PlatformSigner {
  return { address: account.address, signTransaction: (tx) => account.signTransaction({ ...tx, type: "eip1559" }) };
}

/** A remote JSON-RPC signer holding the key (eth_signTransaction; answers the signed bytes). */
export function rpcPlatformSigner(url: string, address: Address, timeoutMs = 10_000): PlatformSigner {
  let id = 0;
  return {
    address,
    async signTransaction(tx) {
      const q = (v: bigint | number | undefined) => (v === undefined ? undefined : numberToHex(v));
      const params = [
        {
          from: address,
          to: tx.to,
          data: tx.data,
          value: q(tx.value ?? 0n),
          nonce: q(tx.nonce),
          gas: q(tx.gas),
          maxFeePerGas: q(tx.maxFeePerGas),
          maxPriorityFeePerGas: q(tx.maxPriorityFeePerGas),
          chainId: q(tx.chainId),
          type: "0x2",
        },
      ];
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "eth_signTransaction", params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
      // Clef answers {raw, tx}; anvil and Web3Signer the raw bytes.
      const raw = typeof body.result === "string" ? body.result : (body.result as { raw?: unknown } | undefined)?.raw;
      if (typeof raw !== "string" || !/^0x[0-9a-fA-F]+$/.test(raw))
        throw new Error(`the platform signer refused: ${body.error?.message ?? res.status}`);
      return raw as Hex;
    },
  };
}

/** TREASURY_SIGNER_URL's signer; on the devnet, account 1 in process; else none (the split is booked, not moved). */
export function platformSignerFromConfig(config: Config): PlatformSigner | null {
  if (config.treasurySignerUrl) return rpcPlatformSigner(config.treasurySignerUrl, config.feeRecipient);
  if (!config.devnet) return null;
  const account = devnetAccount(DEVNET_PLATFORM_INDEX);
  return account.address.toLowerCase() === config.feeRecipient.toLowerCase() ? localPlatformSigner(account) : null;
}

/** Account 4 of the devnet mnemonic holds the devnet's prize reserve (lib/config). */
const DEVNET_RESERVE_INDEX = 4;

/**
 * The league reserve wallet's signer: LEAGUE_SIGNER_URL's, on the devnet account 4 in process, else none (payouts stay
 * planned).
 */
export function reserveSignerFromConfig(config: Config): PlatformSigner | null {
  const wallet = config.league.reserveWallet;
  if (!wallet) return null;
  if (config.league.signerUrl) return rpcPlatformSigner(config.league.signerUrl, wallet);
  if (!config.devnet) return null;
  const account = devnetAccount(DEVNET_RESERVE_INDEX);
  return account.address.toLowerCase() === wallet.toLowerCase() ? localPlatformSigner(account) : null;
}
