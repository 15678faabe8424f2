/**
 * keccak-256 behind viem's `keccak256` (issue 31 point 3): the same inputs and answers, the sponge in the Keccak
 * team's C (npm `keccak`, whose package ships its prebuilt Node-API binary; nothing is downloaded or compiled at
 * install). A transaction's hash, its signing hash and a recovered key's address are each a keccak: in viem's
 * JavaScript they were about 0.1 ms for a swap's 600 bytes, the binary takes a tenth of that.
 *
 * Only the binary's raw sponge is used, not the package's stream wrapper (a stream per hash cost more than the
 * hash). Where the binary cannot load or does not answer its self-test, or with KECCAK_BACKEND=viem, this is viem's
 * own keccak256. lib/ modules the SDK bundles (v4, sessionBinding, markSource) keep viem's: the SDK runs where Node's
 * modules do not (test/layering.test.ts holds its bundle to the packages it names).
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { bytesToHex, keccak256 as viemKeccak256, toBytes, type ByteArray, type Hex } from "viem";

/** What this module needs of the binary: a Keccak sponge state (FIPS 202's rate and capacity in bits). */
export type NativeSponge = {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(bytes: number): Buffer;
};

/** keccak-256: rate 1088 bits, capacity 512, the original Keccak padding (suffix 0x01, not SHA-3's 0x06). */
const RATE = 1088;
const CAPACITY = 512;
const SUFFIX = 0x01;

/**
 * Inputs the binary must hash exactly as viem before it is used: empty, one byte, and lengths on each side of the
 * 136-byte block (where the padding moves to a block of its own).
 */
const SELF_TEST: Uint8Array[] = [0, 1, 135, 136, 137, 600].map((n) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff),
);

/** The package's native sponge, or null when it does not load or does not hash the self-test inputs as viem. */
export function loadNativeSponge(pkg = "keccak"): NativeSponge | null {
  try {
    const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
    // node-gyp-build as the package itself finds it: its prebuilt binary for this platform.
    const State = createRequire(manifest)("node-gyp-build")(dirname(manifest)) as new () => NativeSponge;
    return selfTested(new State());
  } catch {
    return null;
  }
}

/** `sponge` if it hashes the self-test inputs exactly as viem, else null. */
export function selfTested(sponge: NativeSponge): NativeSponge | null {
  const hash = hashWith(sponge);
  return SELF_TEST.every((x) => bytesToHex(hash(x)) === viemKeccak256(x)) ? sponge : null;
}

const EMPTY = Buffer.alloc(0);

/**
 * One hash on `sponge`, re-initialised each time. The input is read before the sponge is touched, so that nothing a
 * read runs (a subclass's getter hashing something else) lands in the middle of this hash; an empty input, a detached
 * buffer's among them, is hashed as viem hashes it (nothing).
 */
function hashWith(sponge: NativeSponge): (bytes: Uint8Array) => Uint8Array {
  return (bytes) => {
    const length = bytes.byteLength;
    const input = length === 0 ? EMPTY : Buffer.from(bytes.buffer, bytes.byteOffset, length);
    sponge.initialize(RATE, CAPACITY);
    sponge.absorb(input);
    sponge.absorbLastFewBits(SUFFIX);
    return new Uint8Array(sponge.squeeze(32));
  };
}

type Keccak256 = {
  (value: Hex | ByteArray, to?: "hex"): Hex;
  (value: Hex | ByteArray, to: "bytes"): ByteArray;
};

/** viem's keccak256 on `sponge`'s binary, or viem's own without one. */
export function keccakWith(sponge: NativeSponge | null): Keccak256 {
  if (!sponge) return viemKeccak256 as Keccak256;
  const hash = hashWith(sponge);
  // As viem reads its input: a string is hex (an odd length padded on the left) or else UTF-8, a Uint8Array bytes.
  // Anything else (another typed array, a plain object from JSON) is viem's to refuse, as it always was.
  return ((value: Hex | ByteArray, to?: "hex" | "bytes") => {
    if (typeof value !== "string" && !(value instanceof Uint8Array)) return viemKeccak256(value, to as "hex");
    const out = hash(typeof value === "string" ? toBytes(value) : value);
    return to === "bytes" ? out : bytesToHex(out);
  }) as Keccak256;
}

/** The process's keccak256: native unless KECCAK_BACKEND=viem or the binary does not load here. */
export const keccak256: Keccak256 = keccakWith(process.env.KECCAK_BACKEND === "viem" ? null : loadNativeSponge());
