import { describe, expect, it } from "vitest";
import { generateSiweNonce } from "viem/siwe";
import { newNonce } from "./signin.js";

/**
 * Problems of a run of nonces: repeats, and any 12-character piece found in two nonces (a nonce
 * shifted from another shares all its pieces but one; 12 random hex digits collide across 1000
 * nonces about once in a million runs).
 */
function problems(nonces: string[]): string[] {
  const found: string[] = [];
  if (new Set(nonces).size !== nonces.length) found.push("a nonce repeats");
  const seen = new Map<string, number>();
  nonces.forEach((n, i) => {
    if (!/^[A-Za-z0-9]{8,}$/.test(n)) found.push(`nonce ${i} is not EIP-4361 (alphanumeric, at least 8)`);
    for (let at = 0; at + 12 <= n.length; at++) {
      const piece = n.slice(at, at + 12);
      const j = seen.get(piece);
      if (j !== undefined && j !== i) found.push(`nonces ${j} and ${i} share ${piece}`);
      seen.set(piece, i);
    }
  });
  return found;
}

describe("sign-in nonces (issue 30)", () => {
  it("are 1000 EIP-4361 nonces, none repeated and none a shifted copy of another", () => {
    const nonces = Array.from({ length: 1000 }, newNonce);
    expect(problems(nonces)).toEqual([]);
    expect(nonces.every((n) => n.length >= 32)).toBe(true);
  });

  it("the check itself finds viem's Math.random nonces, each the last one shifted by a character", () => {
    const nonces = Array.from({ length: 1000 }, generateSiweNonce);
    expect(nonces.some((n, i) => i > 0 && n.slice(0, -1) === nonces[i - 1]!.slice(1))).toBe(true);
    expect(problems(nonces).length).toBeGreaterThan(0);
  });
});
