import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as viem from "viem";
import { hexToBigInt, keccak256, numberToHex, toHex, type Hex } from "viem";
import { privateKeyToAccount, publicKeyToAddress, sign } from "viem/accounts";
import { recoverAuthorizationAddress as viemRecoverAuthorizationAddress } from "viem/utils";
import { describe, expect, it } from "vitest";
import { loadNative, secpBackend, secpWith, type NativeCurve } from "./secp.js";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** Deterministic 32-byte values, so that a failing case can be read again. */
const rand = (tag: string, i: number): Hex => keccak256(toHex(`${tag}:${i}`));
const word = (x: bigint): Hex => numberToHex(x, { size: 32 });

/** What a call answers, or the error it throws: the two backends must agree on both. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    (ok) => ({ ok }),
    (err: Error) => ({ err: err.message }),
  );

/** The real binary, counted: a comparison that never reached it would prove nothing. */
function counted() {
  const real = loadNative()!;
  const c = { calls: 0 };
  const curve: NativeCurve = { ecdsaRecover: (...a) => (c.calls++, real.ecdsaRecover(...a)) };
  return { curve, c };
}

type Case = { hash: Hex | Uint8Array; signature: Hex | Uint8Array | viem.Signature };

/**
 * Signatures as the service meets them, and the ones it must refuse: valid ones in every shape viem takes,
 * their high-s twins (either parity), random (r, s) pairs (about half have no point at r), and edges
 * (zero, n, above n, bad recovery bits, wrong lengths, odd hashes).
 */
async function cases(count: number): Promise<{ valid: Case[]; other: Case[] }> {
  const valid: Case[] = [];
  const other: Case[] = [];
  for (let i = 0; i < count; i++) {
    const hash = rand("hash", i);
    const s = await sign({ hash, privateKey: rand("key", i % 97) });
    const shape = i % 5;
    if (shape === 0) valid.push({ hash, signature: viem.serializeSignature(s) });
    if (shape === 1)
      valid.push({ hash: viem.hexToBytes(hash), signature: viem.hexToBytes(viem.serializeSignature(s)) });
    if (shape === 2) valid.push({ hash, signature: { r: s.r, s: s.s, yParity: s.yParity! } });
    if (shape === 3) valid.push({ hash, signature: { r: s.r, s: s.s, v: 27n + BigInt(s.yParity!) } });
    if (shape === 4) valid.push({ hash, signature: { r: s.r, s: s.s, v: 4663n * 2n + 35n + BigInt(s.yParity!) } });
    // The high-s twin, with its own and the other parity (one recovers the same key, one another).
    const high = word(N - hexToBigInt(s.s));
    other.push({ hash, signature: { r: s.r, s: high, yParity: s.yParity! } });
    other.push({ hash, signature: `${s.r}${high.slice(2)}${s.yParity ? "1b" : "1c"}` as Hex });
    other.push({ hash, signature: `${rand("r", i)}${rand("s", i).slice(2)}${i % 2 ? "1b" : "00"}` as Hex });
  }
  const r = rand("r", 0);
  const edge = (rx: Hex, sx: Hex, v: string) =>
    other.push({ hash: rand("hash", 0), signature: `${rx}${sx.slice(2)}${v}` as Hex });
  for (const bad of [0n, N, N + 1n, 2n ** 256n - 1n]) edge(word(bad), r, "1b"), edge(r, word(bad), "1c");
  edge(r, word(N - 1n), "1b");
  edge(word(1n), word(1n), "1b");
  for (const v of ["02", "03", "1d", "25", "ff"]) edge(r, r, v);
  const good = valid[0]!;
  other.push(
    { hash: good.hash, signature: "0x1234" },
    { hash: good.hash, signature: `${(good.signature as Hex).slice(0, 130)}` as Hex },
    { hash: good.hash, signature: `${good.signature as Hex}00` as Hex },
    { hash: good.hash, signature: `${(good.signature as Hex).slice(0, 131)}` as Hex },
    { hash: good.hash, signature: (good.signature as Hex).toUpperCase().replace("0X", "0x") as Hex },
    { hash: `${(good.hash as Hex).slice(0, 64)}` as Hex, signature: good.signature },
    { hash: `${good.hash as Hex}ab` as Hex, signature: good.signature },
    { hash: "0x", signature: good.signature },
    { hash: good.hash, signature: { r: "0x", s: r, yParity: 0 } },
    { hash: good.hash, signature: { r, s: r, yParity: 2 } },
    { hash: good.hash, signature: { r, s: r, v: 29n } },
    { hash: good.hash, signature: { r, s: r } as viem.Signature },
    { hash: good.hash, signature: { r: `0x00${r.slice(2)}`, s: r, yParity: 1 } },
    { hash: good.hash, signature: { r: "0x1", s: "0x1", yParity: 1 } },
  );
  return { valid, other };
}

describe("lib/secp: libsecp256k1 behind viem's recovery functions", () => {
  it("loads the native binary on this machine (the package ships it; nothing was built or downloaded)", () => {
    expect(secpBackend).toBe("native");
    expect(loadNative()).not.toBeNull();
  });

  it("falls back to viem where the binary does not load or does not pass its self-test", async () => {
    expect(loadNative("secp256k1-not-installed")).toBeNull();
    // A binding that loads but recovers the wrong key is not used.
    const dir = mkdtempSync(join(tmpdir(), "secp-"));
    writeFileSync(join(dir, "wrong.cjs"), "module.exports = { ecdsaRecover: () => new Uint8Array(65).fill(4) };");
    expect(loadNative(join(dir, "wrong.cjs"))).toBeNull();
    const js = secpWith(null);
    expect(js.backend).toBe("viem");
    const a = privateKeyToAccount(rand("key", 1));
    const hash = rand("hash", 1);
    expect(await js.recoverAddress({ hash, signature: await a.sign({ hash }) })).toBe(a.address);
    expect(await js.recoverMessageAddress({ message: "hi", signature: await a.signMessage({ message: "hi" }) })).toBe(
      a.address,
    );
    // The fallback never touches a binary and answers as viem on valid, high-s and invalid signatures alike.
    const { valid, other } = await cases(40);
    for (const k of [...valid, ...other])
      expect(await outcome(js.recoverAddress(k))).toEqual(await outcome(viem.recoverAddress(k)));
  }, 120_000);

  it("answers and refuses exactly as viem on thousands of signatures, high-s and invalid ones included", async () => {
    const { valid, other } = await cases(600);
    const { curve, c } = counted();
    const native = secpWith(curve);
    const differ: string[] = [];
    let refused = 0;
    for (const k of [...valid, ...other]) {
      const want = await outcome(viem.recoverPublicKey(k));
      const got = await outcome(native.recoverPublicKey(k));
      const gotAddress = await outcome(native.recoverAddress(k));
      // viem's recoverAddress is publicKeyToAddress of the key it recovers.
      const wantAddress = "ok" in want ? { ok: publicKeyToAddress(want.ok as Hex) } : want;
      if ("err" in want) refused++;
      if (JSON.stringify([got, gotAddress]) !== JSON.stringify([want, wantAddress]))
        differ.push(
          `${JSON.stringify(k, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}: viem ${JSON.stringify(want)}`,
        );
    }
    expect(differ).toEqual([]);
    // Every valid signature went through the binary, and the set held refusals to compare.
    expect(c.calls).toBeGreaterThanOrEqual(valid.length);
    expect(refused).toBeGreaterThan(other.length / 10);
  }, 300_000);
});

describe.each([
  ["native", secpWith(loadNative())],
  ["viem fallback", secpWith(null)],
])("lib/secp's wrappers (%s) answer as viem's", (_, s) => {
  const a = privateKeyToAccount(rand("key", 7));
  const typed = {
    domain: { name: "Permit2", chainId: 4663, verifyingContract: "0x000000000022D473030F116dDEE9F6B43aC78BA3" },
    types: { Ping: [{ name: "n", type: "uint256" }] },
    primaryType: "Ping",
    message: { n: 7n },
  } as const;

  it("message and typed data: recovered, verified, and a tampered one refused the same way", async () => {
    const signature = await a.signMessage({ message: "sign in" });
    expect(await s.recoverMessageAddress({ message: "sign in", signature })).toBe(a.address);
    expect(await s.verifyMessage({ address: a.address, message: "sign in", signature })).toBe(true);
    expect(await s.verifyMessage({ address: a.address, message: "sign out", signature })).toBe(false);
    const sig = await a.signTypedData(typed);
    expect(await s.recoverTypedDataAddress({ ...typed, signature: sig })).toBe(a.address);
    expect(await s.verifyTypedData({ ...typed, address: a.address, signature: sig })).toBe(true);
    const other = { ...typed, message: { n: 8n } };
    expect(await s.verifyTypedData({ ...other, address: a.address, signature: sig })).toBe(false);
    const bad = `${sig.slice(0, 66)}${"0".repeat(64)}1b` as Hex;
    expect(await outcome(s.recoverTypedDataAddress({ ...typed, signature: bad }))).toEqual(
      await outcome(viem.recoverTypedDataAddress({ ...typed, signature: bad })),
    );
    // A malformed typed message is a rejected promise, as in viem (callers .catch it).
    const malformed = { ...typed, message: { n: "x" } } as never;
    expect(await outcome(s.recoverTypedDataAddress({ ...(malformed as object), signature: sig } as never))).toEqual(
      await outcome(viem.recoverTypedDataAddress({ ...(malformed as object), signature: sig } as never)),
    );
  });

  it("transactions of every type, and authorizations, recover the same signer", async () => {
    const base = { chainId: 4663, nonce: 3, to: a.address, value: 1n, gas: 21_000n, data: "0x" as Hex };
    const raws = [
      await a.signTransaction({ ...base, type: "legacy", gasPrice: 2n }),
      await a.signTransaction({ ...base, type: "eip2930", gasPrice: 2n, accessList: [] }),
      await a.signTransaction({ ...base, type: "eip1559", maxFeePerGas: 3n, maxPriorityFeePerGas: 1n }),
    ];
    for (const raw of raws) {
      expect(await s.recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(a.address);
      const tampered = `${raw.slice(0, -4)}${raw.slice(-4) === "0000" ? "0001" : "0000"}` as Hex;
      expect(await outcome(s.recoverTransactionAddress({ serializedTransaction: tampered as never }))).toEqual(
        await outcome(viem.recoverTransactionAddress({ serializedTransaction: tampered as never })),
      );
    }
    expect(await outcome(s.recoverTransactionAddress({ serializedTransaction: "0x02zz" as never }))).toEqual(
      await outcome(viem.recoverTransactionAddress({ serializedTransaction: "0x02zz" as never })),
    );
    const authorization = { address: a.address, chainId: 4663, nonce: 5 };
    const signed = await a.signAuthorization(authorization);
    expect(await s.recoverAuthorizationAddress({ authorization, signature: signed })).toBe(a.address);
    const as27 = { ...signed, yParity: 27 };
    expect(await outcome(s.recoverAuthorizationAddress({ authorization, signature: as27 }))).toEqual(
      await outcome(viemRecoverAuthorizationAddress({ authorization, signature: as27 })),
    );
  });
});
