import { encodeFunctionData, erc20Abi, keccak256, zeroAddress, type Hex, type PublicClient } from "viem";
import type { PlatformSigner } from "../ports/platformSigner.js";
import type { Planned, TransferRow } from "./close.js";

/** A planned transfer with the bytes that carry it, signed before any is sent. */
export type Send = Planned & { raw_tx: Hex; tx_hash: Hex };

const callOf = (p: Planned) =>
  p.token === zeroAddress
    ? { to: p.to, value: BigInt(p.amount), data: undefined }
    : { to: p.token, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [p.to, BigInt(p.amount)] }) };

/**
 * Signs every transfer of a week's split with consecutive nonces from the wallet's pending
 * nonce. The bytes are stored before the first is sent: sending them again can only land the
 * same transfers once (a nonce is spent once), so a closer that dies mid-way never pays twice.
 */
export async function signSplit(chain: PublicClient, signer: PlatformSigner, planned: Planned[]): Promise<Send[]> {
  if (planned.length === 0) return [];
  const [nonce, fees, chainId] = await Promise.all([chain.getTransactionCount({ address: signer.address, blockTag: "pending" }), chain.estimateFeesPerGas(), chain.getChainId()]);
  const sends: Send[] = [];
  for (const [i, p] of planned.entries()) {
    const call = callOf(p);
    const gas = ((await chain.estimateGas({ account: signer.address, ...call })) * 13n) / 10n;
    const raw = await signer.signTransaction({ ...call, chainId, nonce: nonce + i, gas, maxFeePerGas: fees.maxFeePerGas * 2n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas });
    sends.push({ ...p, raw_tx: raw, tx_hash: keccak256(raw) });
  }
  return sends;
}

/** Sends the stored bytes (again, where the node has not mined them) and waits for each receipt. */
export async function deliverSplit(chain: PublicClient, sends: Send[], timeoutMs = 60_000): Promise<TransferRow[]> {
  const out: TransferRow[] = [];
  for (const s of sends) {
    let receipt = await chain.getTransactionReceipt({ hash: s.tx_hash }).catch(() => null);
    if (!receipt) {
      // "already known" or "nonce too low" means these bytes (or, for the nonce, bytes already mined) are in: the receipt says which.
      await chain.sendRawTransaction({ serializedTransaction: s.raw_tx }).catch(() => undefined);
      receipt = await chain.waitForTransactionReceipt({ hash: s.tx_hash, timeout: timeoutMs, pollingInterval: 250 });
    }
    if (receipt.status !== "success") throw new Error(`split transfer ${s.tx_hash} (${s.bucket}, ${s.symbol}) reverted`);
    const { raw_tx: _raw, ...planned } = s;
    out.push({ ...planned, block: Number(receipt.blockNumber) });
  }
  return out;
}
