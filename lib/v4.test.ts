import { encodeAbiParameters, getAddress, keccak256, zeroAddress } from "viem";
import { describe, expect, it } from "vitest";
import { poolKeyParam } from "../abis/uniswapV4.js";
import { poolId, type PoolKey } from "./v4.js";

const key: PoolKey = {
  currency0: zeroAddress,
  currency1: getAddress("0x00000000000000000000000000000000000000ab"),
  fee: 3000,
  tickSpacing: 60,
  hooks: zeroAddress,
};
const hashed = (k: PoolKey) => keccak256(encodeAbiParameters([poolKeyParam], [k]));

describe("poolId (remembered per key)", () => {
  it("is PoolIdLibrary's keccak of the encoded key, asked once or again, and differs in each field", () => {
    expect(poolId(key)).toBe(hashed(key));
    expect(poolId({ ...key })).toBe(hashed(key));
    for (const k of [
      { ...key, fee: 500 },
      { ...key, tickSpacing: 10 },
      { ...key, hooks: key.currency1 },
    ]) {
      expect(poolId(k)).toBe(hashed(k));
      expect(poolId(k)).not.toBe(poolId(key));
    }
  });

  it("answers right past the map's bound (it empties when full)", () => {
    const keys = Array.from({ length: 4_200 }, (_, i) => ({ ...key, fee: i }));
    for (const k of keys) poolId(k);
    for (const k of [keys[0]!, keys[4_095]!, keys[4_199]!]) expect(poolId(k)).toBe(hashed(k));
  });

  it("refuses a key viem refuses, every time: a bad checksum is not answered from a valid key's id", () => {
    // EIP-55's own example, and the same with one letter's case changed.
    const good = { ...key, currency1: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" as const };
    const bad = { ...key, currency1: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD" as const };
    expect(poolId(good)).toBe(hashed(good));
    expect(() => poolId(bad)).toThrow();
    expect(() => poolId(bad)).toThrow();
  });
});
