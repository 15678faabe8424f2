import { bytesToHex, keccak256 as viemKeccak256, type ByteArray, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { rng } from "../test/helpers/rng.js";
import { keccak256, keccakWith, loadNativeSponge, selfTested, type NativeSponge } from "./keccak.js";

/** The real binary, counted: a comparison that never reached it would prove nothing. */
function counted() {
  const real = loadNativeSponge()!;
  const c = { hashes: 0 };
  const sponge: NativeSponge = {
    initialize: (r, cap) => (c.hashes++, real.initialize(r, cap)),
    absorb: (d) => real.absorb(d),
    absorbLastFewBits: (b) => real.absorbLastFewBits(b),
    squeeze: (n) => real.squeeze(n),
  };
  return { sponge, c };
}

/**
 * Inputs as viem reads them: bytes of every length around the 136-byte block (and views into a larger buffer, at an
 * offset), hex of even and odd length, upper case, and strings that are not hex (viem hashes their UTF-8).
 */
function inputs(count: number, seed: number): (Hex | ByteArray)[] {
  const r = rng(seed);
  // Strings that are not hex are outside viem's type, yet it hashes them (their UTF-8): so must this.
  const out = ["0x", "", "hello", "0xZZ", "0xabc", "0xABCDEF", "ünïcödé"] as (Hex | ByteArray)[];
  for (let i = 0; i < count; i++) {
    const n = i < 300 ? i : Math.floor(r() * 5_000);
    const big = Uint8Array.from({ length: n + 7 }, () => Math.floor(r() * 256));
    const bytes = i % 3 === 0 ? big.subarray(3, 3 + n) : big.slice(0, n);
    out.push(
      i % 2 ? bytes : ((i % 4 === 0 ? bytesToHex(bytes).toUpperCase().replace("0X", "0x") : bytesToHex(bytes)) as Hex),
    );
  }
  return out;
}

describe("lib/keccak: the Keccak team's C behind viem's keccak256", () => {
  it("loads here (the package's prebuilt binary) and the process's keccak256 answers as viem's", () => {
    expect(loadNativeSponge()).not.toBeNull();
    expect(keccak256).not.toBe(viemKeccak256);
    for (const x of inputs(200, 31)) {
      expect(keccak256(x)).toBe(viemKeccak256(x));
      expect(bytesToHex(keccak256(x, "bytes"))).toBe(bytesToHex(viemKeccak256(x, "bytes")));
    }
  });

  it("hands out plain Uint8Arrays of its own, not the binary's Buffer", () => {
    const out = keccak256("0x1234", "bytes");
    expect(Object.getPrototypeOf(out)).toBe(Uint8Array.prototype);
    expect(out.byteLength).toBe(32);
    expect(out.buffer.byteLength).toBe(32);
  });

  it("refuses what viem refuses (another typed array, an object from JSON) instead of hashing its fields", () => {
    const looksLikeBytes = [
      new Uint16Array([0xdead, 0xbeef]),
      new DataView(new ArrayBuffer(4)),
      { buffer: "deadbeef", byteOffset: "hex" },
      { buffer: [1, 2, 3] },
    ];
    for (const x of looksLikeBytes) {
      const theirs = (() => {
        try {
          return viemKeccak256(x as never);
        } catch (err) {
          return (err as Error).message;
        }
      })();
      expect(() => keccak256(x as never)).toThrow(theirs);
    }
  });

  it("reads its input before it hashes, so a getter that hashes cannot land inside another hash", () => {
    class Sneaky extends Uint8Array {
      override get byteOffset() {
        keccak256("0xdeadbeef");
        return super.byteOffset;
      }
    }
    const x = new Sneaky([1, 2, 3]);
    expect(keccak256(x)).toBe(viemKeccak256(Uint8Array.from([1, 2, 3])));
  });

  it("hashes a detached buffer's view as viem does (as nothing)", () => {
    const x = new Uint8Array(8);
    structuredClone(x.buffer, { transfer: [x.buffer] });
    expect(x.byteLength).toBe(0);
    expect(keccak256(x)).toBe(viemKeccak256(x));
  });

  it("answers exactly as viem on thousands of inputs, as hex and as bytes", () => {
    const { sponge, c } = counted();
    const native = keccakWith(sponge);
    for (const x of inputs(3_000, 4663)) {
      expect(native(x)).toBe(viemKeccak256(x));
      expect(native(x, "hex")).toBe(viemKeccak256(x, "hex"));
      expect(bytesToHex(native(x, "bytes"))).toBe(bytesToHex(viemKeccak256(x, "bytes")));
    }
    expect(c.hashes).toBeGreaterThanOrEqual(9_000);
  });

  it("leaves its input untouched and hands out bytes of its own (one hash does not change another's answer)", () => {
    const native = keccakWith(loadNativeSponge());
    const input = Uint8Array.from({ length: 200 }, (_, i) => i);
    const a = native(input, "bytes");
    const copy = bytesToHex(a);
    native(Uint8Array.from([1, 2, 3]), "bytes");
    expect(bytesToHex(a)).toBe(copy);
    expect(input.every((v, i) => v === i)).toBe(true);
  });

  it("falls back to viem's where the binary does not load or does not answer its self-test", () => {
    expect(loadNativeSponge("no-such-package")).toBeNull();
    expect(keccakWith(null)).toBe(viemKeccak256);
    const real = loadNativeSponge()!;
    expect(selfTested(real)).toBe(real);
    // A binary that pads as SHA-3 does (suffix 0x06), or hashes only a block's worth, is refused at load.
    const sha3: NativeSponge = {
      initialize: (r, cap) => real.initialize(r, cap),
      absorb: (d) => real.absorb(d),
      absorbLastFewBits: () => real.absorbLastFewBits(0x06),
      squeeze: (n) => real.squeeze(n),
    };
    expect(selfTested(sha3)).toBeNull();
    const short: NativeSponge = {
      initialize: (r, cap) => real.initialize(r, cap),
      absorb: (d) => real.absorb(d.subarray(0, 136)),
      absorbLastFewBits: (b) => real.absorbLastFewBits(b),
      squeeze: (n) => real.squeeze(n),
    };
    expect(selfTested(short)).toBeNull();
  });
});
