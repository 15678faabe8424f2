/**
 * secp256k1 signature recovery behind viem's interfaces (issue 31 point 3): the same functions, the
 * same inputs and answers, the same refusals, with the curve math in libsecp256k1 (npm `secp256k1`,
 * whose package ships its prebuilt Node-API binary; nothing is downloaded or compiled at install).
 * viem keeps hashMessage, hashTypedData and transaction serialization; the signing hash of a transaction and a
 * key's address are lib/keccak's (viem's keccak256 in C). Where the binary cannot load (another platform, a failed
 * self-test, or SECP256K1_BACKEND=viem), every curve function is viem's own JavaScript.
 *
 * Equivalence: the native path takes only the plain shapes (a 32-byte hash; a 65-byte signature, or
 * {r, s, yParity | v} with 1 <= r, s < n and a recovery bit viem accepts). Anything else, and any
 * signature libsecp256k1 does not recover, is handed to viem, so a refusal is viem's refusal with
 * viem's error. High-s signatures recover as in viem (neither normalises nor refuses them; the
 * callers that refuse them, e.g. fast mode's TX_ENCODING, still do).
 */
import { createRequire } from "node:module";
import {
  bytesToHex,
  checksumAddress,
  getAddress,
  hashMessage,
  hashTypedData,
  hexToBytes,
  InvalidYParityError,
  isAddressEqual,
  parseTransaction,
  recoverAddress as viemRecoverAddress,
  recoverPublicKey as viemRecoverPublicKey,
  serializeTransaction,
  type Address,
  type ByteArray,
  type Hex,
  type RecoverTransactionAddressParameters,
  type Signature,
  type TypedData,
} from "viem";
import { keccak256 } from "./keccak.js";
import {
  hashAuthorization,
  type RecoverAddressParameters,
  type RecoverAuthorizationAddressParameters,
  type RecoverMessageAddressParameters,
  type RecoverPublicKeyParameters,
  type RecoverTypedDataAddressParameters,
  type VerifyHashParameters,
  type VerifyMessageParameters,
  type VerifyTypedDataParameters,
} from "viem/utils";

/** What this module needs of the `secp256k1` package: recovery to an uncompressed 65-byte key. */
export type NativeCurve = {
  ecdsaRecover(sig64: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
};
export type SecpBackend = "native" | "viem";

/** secp256k1's group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A signature by private key 1 (whose address is below) that a loaded binary must recover before it is used. */
const SELF_TEST = {
  hash: "0x5e736e8980fb5d4551bfe824197b841bf593720591ce59ff0adcd3034343383c",
  signature: ("0xd920f7f8fc163af1d6f70666e20984ec2e86010b49d8fa6ce6eae2f936bb7bfe" +
    "4e3c3282253993cad6bf67949234ec36e1cc2f23c8aae12688d06525625231671b") as Hex,
  address: "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf",
} as const;

/**
 * The `secp256k1` package's native binding (not its index, which silently falls back to the slow
 * `elliptic`), or null when it does not load or does not recover the self-test signature.
 */
export function loadNative(id = "secp256k1/bindings.js"): NativeCurve | null {
  try {
    const curve = createRequire(import.meta.url)(id) as NativeCurve;
    const inputs = nativeInputs(SELF_TEST.hash, SELF_TEST.signature)!;
    const key = curve.ecdsaRecover(inputs.sig64, inputs.recid, inputs.msg32, false);
    return addressOfKey(key) === SELF_TEST.address ? curve : null;
  } catch {
    return null;
  }
}

const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const SIG65 = /^0x[0-9a-fA-F]{130}$/;
const SCALAR = /^0x[0-9a-fA-F]{1,64}$/;

/** viem's yParity-or-v to recovery bit (0, 1, 27, 28), or null where viem throws. */
const recoveryBit = (x: number): 0 | 1 | null => (x === 0 || x === 27 ? 0 : x === 1 || x === 28 ? 1 : null);

/** An r or s viem reads as 1 <= x < n, as 32 bytes; null for anything else. */
function scalar32(x: unknown): Uint8Array | null {
  if (typeof x !== "string" || !SCALAR.test(x)) return null;
  const v = BigInt(x);
  return v >= 1n && v < N ? hexToBytes(`0x${x.slice(2).padStart(64, "0")}`) : null;
}

/** The recovery bit of an {r, s, v, yParity} exactly as viem derives it, or null where it is not a plain case. */
function objectRecoveryBit(sig: { v?: unknown; yParity?: unknown }): 0 | 1 | null {
  if (sig.yParity === 0 || sig.yParity === 1) return sig.yParity;
  if (sig.yParity !== undefined || typeof sig.v !== "bigint") return null;
  // EIP-155 v (chainId * 2 + 35 + yParity): the parity of the bigint, as viem reads it.
  if (sig.v >= 35n) return sig.v % 2n === 0n ? 1 : 0;
  return recoveryBit(Number(sig.v));
}

/**
 * The native inputs for the plain shapes (32-byte hash; 65-byte signature or {r, s, yParity | v});
 * null where viem must decide (a longer or shorter hash, a malformed or out-of-range signature).
 */
function nativeInputs(
  hash: Hex | ByteArray,
  signature: Hex | ByteArray | Signature,
): { sig64: Uint8Array; recid: 0 | 1; msg32: Uint8Array } | null {
  const msg32 =
    hash instanceof Uint8Array ? (hash.length === 32 ? hash : null) : HASH32.test(hash) ? hexToBytes(hash) : null;
  if (!msg32) return null;
  if (typeof signature === "object" && !(signature instanceof Uint8Array)) {
    if (!("r" in signature && "s" in signature)) return null;
    const [r, s, recid] = [scalar32(signature.r), scalar32(signature.s), objectRecoveryBit(signature)];
    if (!r || !s || recid === null) return null;
    const sig64 = new Uint8Array(64);
    sig64.set(r, 0);
    sig64.set(s, 32);
    return { sig64, recid, msg32 };
  }
  const bytes =
    signature instanceof Uint8Array
      ? signature
      : typeof signature === "string" && SIG65.test(signature)
        ? hexToBytes(signature)
        : null;
  if (!bytes || bytes.length !== 65) return null;
  const recid = recoveryBit(bytes[64]!);
  const sig64 = bytes.subarray(0, 64);
  if (recid === null || !scalar32(bytesToHex(sig64.subarray(0, 32))) || !scalar32(bytesToHex(sig64.subarray(32))))
    return null;
  return { sig64, recid, msg32 };
}

/** viem's publicKeyToAddress on a 65-byte uncompressed key: the last 20 bytes of keccak256(x || y), checksummed. */
function addressOfKey(key: Uint8Array): Address {
  return checksumAddress(`0x${keccak256(key.subarray(1)).slice(26)}`);
}

/** The recovery functions over one backend: native where it loaded (null: viem's JavaScript throughout). */
export function secpWith(native: NativeCurve | null) {
  /** The uncompressed key's bytes from the binary, or null where viem must answer (or refuse). */
  const nativeKey = (p: RecoverPublicKeyParameters): Uint8Array | null => {
    if (!native) return null;
    const inputs = nativeInputs(p.hash, p.signature);
    if (!inputs) return null;
    try {
      return native.ecdsaRecover(inputs.sig64, inputs.recid, inputs.msg32, false);
    } catch {
      return null; // not recoverable: viem refuses it below with its own error
    }
  };
  const recoverPublicKey = async (p: RecoverPublicKeyParameters): Promise<Hex> => {
    const key = nativeKey(p);
    return key ? bytesToHex(key) : viemRecoverPublicKey(p);
  };
  const recoverAddress = async (p: RecoverAddressParameters): Promise<Address> => {
    const key = nativeKey(p);
    return key ? addressOfKey(key) : viemRecoverAddress(p);
  };
  const verifyHash = async (p: VerifyHashParameters) => isAddressEqual(getAddress(p.address), await recoverAddress(p));
  return {
    backend: (native ? "native" : "viem") as SecpBackend,
    recoverPublicKey,
    recoverAddress,
    verifyHash,
    ...wrappers(recoverAddress),
  };
}

type Recover = (p: RecoverAddressParameters) => Promise<Address>;

/** viem's message, typed-data, transaction and authorization wrappers, over `recoverAddress`, as viem writes them. */
function wrappers(recoverAddress: Recover) {
  const recoverMessageAddress = async ({ message, signature }: RecoverMessageAddressParameters) =>
    recoverAddress({ hash: hashMessage(message), signature });
  const verifyMessage = async ({ address, message, signature }: VerifyMessageParameters) =>
    isAddressEqual(getAddress(address), await recoverMessageAddress({ message, signature }));
  const recoverTypedDataAddress = async <
    const typedData extends TypedData | Record<string, unknown>,
    primaryType extends keyof typedData | "EIP712Domain",
  >(
    p: RecoverTypedDataAddressParameters<typedData, primaryType>,
  ) => {
    const { domain, message, primaryType, signature, types } = p as unknown as RecoverTypedDataAddressParameters;
    return recoverAddress({ hash: hashTypedData({ domain, message, primaryType, types } as never), signature });
  };
  const verifyTypedData = async <
    const typedData extends TypedData | Record<string, unknown>,
    primaryType extends keyof typedData | "EIP712Domain",
  >(
    p: VerifyTypedDataParameters<typedData, primaryType>,
  ) => {
    const { address, ...rest } = p as unknown as VerifyTypedDataParameters;
    return isAddressEqual(
      getAddress(address),
      await recoverTypedDataAddress(rest as RecoverTypedDataAddressParameters),
    );
  };
  const recoverTransactionAddress = async (p: RecoverTransactionAddressParameters) => {
    const transaction = parseTransaction(p.serializedTransaction);
    const signature = p.signature ?? {
      r: transaction.r!,
      s: transaction.s!,
      v: transaction.v!,
      yParity: transaction.yParity!,
    };
    const unsigned = {
      ...transaction,
      r: undefined,
      s: undefined,
      v: undefined,
      yParity: undefined,
      sidecars: undefined,
    };
    return recoverAddress({ hash: keccak256(serializeTransaction(unsigned as never)), signature });
  };
  const recoverAuthorizationAddress = async (p: RecoverAuthorizationAddressParameters) => {
    const signature = (p.signature ?? p.authorization) as Signature;
    // EIP-7702 takes y_parity as the raw recovery id: a tuple whose yParity is 27 or 28 has no authority.
    if (typeof signature === "object" && typeof signature.yParity === "number" && ![0, 1].includes(signature.yParity))
      throw new InvalidYParityError({ yParity: BigInt(signature.yParity) });
    return recoverAddress({ hash: hashAuthorization(p.authorization as never), signature });
  };
  return {
    recoverMessageAddress,
    verifyMessage,
    recoverTypedDataAddress,
    verifyTypedData,
    recoverTransactionAddress,
    recoverAuthorizationAddress,
  };
}

/** The process's functions: native unless SECP256K1_BACKEND=viem or the binary does not load here. */
const secp = secpWith(process.env.SECP256K1_BACKEND === "viem" ? null : loadNative());

export const {
  backend: secpBackend,
  recoverPublicKey,
  recoverAddress,
  verifyHash,
  recoverMessageAddress,
  verifyMessage,
  recoverTypedDataAddress,
  verifyTypedData,
  recoverTransactionAddress,
  recoverAuthorizationAddress,
} = secp;
