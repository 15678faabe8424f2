import { parseTransaction, serializeTransaction, type Address, type Hex, type TransactionSerialized } from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { recoverTransactionAddress } from "../../lib/secp.js";
import { Refusal } from "../errors/index.js";

/** secp256k1's group order over two: a signature's s above it is the malleable twin (EIP-2). */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** A signed transaction as fast mode reads it, with what is wrong with its encoding. */
export type FastTx = {
  raw: Hex;
  hash: Hex;
  from: Address;
  type: string;
  chainId: number;
  nonce: number;
  to: Address | null;
  value: bigint;
  data: Hex;
  gas: bigint;
  maxFeePerGas: bigint | null;
  maxPriorityFeePerGas: bigint | null;
  /** TX_ENCODING causes: not the canonical RLP of its own fields, a high-s signature, a non-empty access list. */
  encoding: string[];
};

/**
 * The signer of a signed transaction (secp256k1 recovery: the costly part of decoding, so callers
 * start their I/O first); BAD_REQUEST when it does not recover.
 */
export async function signerOf(raw: Hex): Promise<Address> {
  try {
    return await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
  } catch (err) {
    throw new Refusal(
      "BAD_REQUEST",
      `raw_tx's signature does not recover a signer: ${(err as Error).message.split("\n")[0]!.slice(0, 120)}`,
      {},
      { cause: err },
    );
  }
}

/**
 * Decodes a signed transaction without its signer; BAD_REQUEST when it is unreadable. Canonical means
 * the bytes are exactly what re-serializing the parsed fields gives (no padded integers, no
 * long-form lengths, nothing trailing). Fast transactions carry an empty access list: a listed
 * address or slot changes the gas an SDK-built transaction was priced at.
 */
export function parseFastTx(raw: Hex): Omit<FastTx, "from"> {
  let parsed: ReturnType<typeof parseTransaction>;
  try {
    parsed = parseTransaction(raw as TransactionSerialized);
  } catch (err) {
    throw new Refusal(
      "BAD_REQUEST",
      `raw_tx is not a readable signed transaction: ${(err as Error).message.split("\n")[0]!.slice(0, 120)}`,
      {},
      { cause: err },
    );
  }
  const encoding: string[] = [];
  const { r, s, v, yParity, ...fields } = parsed as typeof parsed & { r?: Hex; s?: Hex; v?: bigint; yParity?: number };
  try {
    // Legacy transactions carry v (EIP-155: chain id inside); typed ones carry yParity.
    const signature =
      r && s
        ? parsed.type === "legacy"
          ? { r, s, v: v! }
          : { r, s, yParity: yParity ?? Number(v! - 27n) }
        : undefined;
    const again = serializeTransaction(fields as never, signature as never);
    if (again.toLowerCase() !== raw.toLowerCase()) encoding.push("not the canonical RLP encoding of its own fields");
  } catch {
    encoding.push("its fields do not serialize again");
  }
  if (s && BigInt(s) > HALF_N) encoding.push("high-s signature (not EIP-2 canonical)");
  const accessList = (parsed as { accessList?: unknown[] }).accessList;
  if (accessList && accessList.length > 0) encoding.push("a non-empty access list");
  const p = parsed as { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gas?: bigint; nonce?: number };
  return {
    raw,
    hash: keccak256(raw),
    type: parsed.type ?? "legacy",
    chainId: parsed.chainId ?? 0,
    nonce: p.nonce ?? 0,
    to: parsed.to ?? null,
    value: parsed.value ?? 0n,
    data: parsed.data ?? "0x",
    gas: p.gas ?? 0n,
    maxFeePerGas: p.maxFeePerGas ?? null,
    maxPriorityFeePerGas: p.maxPriorityFeePerGas ?? null,
    encoding,
  };
}
