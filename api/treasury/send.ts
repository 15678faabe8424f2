import {
  encodeFunctionData,
  erc20Abi,
  parseTransaction,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { recoverTransactionAddress } from "../../lib/secp.js";
import { fencedRead } from "../../lib/chain.js";
import type { PlatformSigner } from "../ports/platformSigner.js";
import type { Planned, TransferRow } from "./close.js";
import type { Bucket, PerBucket } from "./split.js";
import { isFinal } from "../../lib/finality.js";

/** The closer stops rather than send: a human must look (the error names why). */
export class SplitRefused extends Error {}

/** A planned transfer with the bytes that carry it, signed before any is sent. */
export type Send = Planned & { raw_tx: Hex; tx_hash: Hex };

const callOf = (p: Planned) =>
  p.token === zeroAddress
    ? { to: p.to, value: BigInt(p.amount), data: undefined }
    : {
        to: p.token,
        value: 0n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [p.to, BigInt(p.amount)] }),
      };

/**
 * The wallet's balance of a token it may have been airdropped (anyone's code): a fenced read (UNTRUSTED_GAS);
 * one that cannot be read refuses the split.
 */
async function tokenBalance(chain: PublicClient, token: Address, holder: Address): Promise<bigint> {
  const r = await fencedRead(chain, { address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
  if (r.status === "failure")
    throw new SplitRefused(`the platform wallet's balance of ${token} cannot be read (${r.error}); nothing is sent`);
  return r.result;
}

/**
 * Signs every transfer of a week's split with consecutive nonces from the wallet's nonce. The
 * bytes are stored before the first is sent: sending them again can only land the same transfers
 * once (a nonce is spent once), so a closer that dies mid-way never pays twice.
 * Refuses (SplitRefused) when a transaction of the wallet is still in flight, or when the wallet
 * could not send the split and still hold what the record says it holds (`held`: carried and
 * owed per token) plus, in ETH, the split's gas: income counted that never arrived is never paid
 * out of someone else's share.
 */
export async function signSplit(
  chain: PublicClient,
  signer: PlatformSigner,
  planned: Planned[],
  held: Map<string, bigint>,
): Promise<Send[]> {
  if (planned.length === 0) return [];
  const [latest, pending, fees, chainId] = await Promise.all([
    chain.getTransactionCount({ address: signer.address, blockTag: "latest" }),
    chain.getTransactionCount({ address: signer.address, blockTag: "pending" }),
    chain.estimateFeesPerGas(),
    chain.getChainId(),
  ]);
  if (pending !== latest)
    throw new SplitRefused(
      `the platform wallet has ${pending - latest} transaction(s) in flight; no split is signed over them`,
    );
  // Checked before any estimate: a transfer the wallet cannot cover would only fail to estimate.
  const covered = async (gasWei: bigint) => {
    for (const token of new Set(planned.map((p) => p.token.toLowerCase()))) {
      const out =
        planned.filter((p) => p.token.toLowerCase() === token).reduce((s, p) => s + BigInt(p.amount), 0n) +
        (token === zeroAddress ? gasWei : 0n);
      const need = out + (held.get(token) ?? 0n);
      const has =
        token === zeroAddress
          ? await chain.getBalance({ address: signer.address })
          : await tokenBalance(chain, token as Address, signer.address);
      if (has < need)
        throw new SplitRefused(
          `the platform wallet holds ${has} of ${token}, the split and what the record holds need ${need}; ` +
            `nothing is sent`,
        );
    }
  };
  await covered(0n);
  const sends: Send[] = [];
  let gasWei = 0n;
  for (const [i, p] of planned.entries()) {
    const call = callOf(p);
    const gas = ((await chain.estimateGas({ account: signer.address, ...call })) * 13n) / 10n;
    const maxFeePerGas = fees.maxFeePerGas * 2n;
    gasWei += gas * maxFeePerGas;
    const raw = await signer.signTransaction({
      ...call,
      chainId,
      nonce: latest + i,
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    sends.push({ ...p, raw_tx: raw, tx_hash: keccak256(raw) });
  }
  await covered(gasWei);
  return sends;
}

/** The signed bytes must carry exactly the planned transfer, from the platform wallet, to the bucket configured now. */
async function assertAsPlanned(s: Send, from: Address, buckets: PerBucket<Address | null>) {
  const tx = parseTransaction(s.raw_tx);
  const want = callOf(s);
  const signer = await recoverTransactionAddress({ serializedTransaction: s.raw_tx as never });
  const bucket = buckets[s.bucket as Bucket];
  const ok =
    signer.toLowerCase() === from.toLowerCase() &&
    tx.to?.toLowerCase() === want.to.toLowerCase() &&
    (tx.value ?? 0n) === want.value &&
    (tx.data ?? "0x") === (want.data ?? "0x") &&
    !!bucket &&
    bucket.toLowerCase() === s.to.toLowerCase();
  if (!ok)
    throw new SplitRefused(
      `the stored transfer ${s.tx_hash} (${s.bucket}, ${s.symbol}) is not the planned one to the ` +
        `${s.bucket} bucket configured now; nothing more is sent`,
    );
}

/**
 * Sends the stored bytes (again, where the node has not mined them) and waits for each receipt. The
 * transfers are recorded only once each receipt is `confirmations` deep (null until then: the next
 * pass reads them again, and sends again bytes a reorg dropped), so the record never names a
 * transfer that a reorg could still drop or move, and a dropped one's nonce is never signed again.
 */
export async function deliverSplit(
  chain: PublicClient,
  sends: Send[],
  check: { from: Address; buckets: PerBucket<Address | null> },
  o: { timeoutMs?: number; confirmations: number },
): Promise<TransferRow[] | null> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const out: TransferRow[] = [];
  for (const s of sends) {
    let receipt = await chain.getTransactionReceipt({ hash: s.tx_hash }).catch(() => null);
    if (!receipt) {
      await assertAsPlanned(s, check.from, check.buckets);
      // "already known" or "nonce too low" means these bytes (or, for the nonce, bytes already mined) are in:
      // the receipt says which.
      await chain.sendRawTransaction({ serializedTransaction: s.raw_tx }).catch(() => undefined);
      receipt = await chain.waitForTransactionReceipt({ hash: s.tx_hash, timeout: timeoutMs, pollingInterval: 250 });
    }
    if (receipt.status !== "success")
      throw new Error(`split transfer ${s.tx_hash} (${s.bucket}, ${s.symbol}) reverted`);
    const { raw_tx: _raw, ...planned } = s;
    out.push({ ...planned, block: Number(receipt.blockNumber) });
  }
  const head = sends.length ? await chain.getBlockNumber({ cacheTime: 0 }) : 0n;
  return out.every((t) => isFinal(head, BigInt(t.block), o.confirmations)) ? out : null;
}
