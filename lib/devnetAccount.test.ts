import { describe, expect, it } from "vitest";
import { mnemonicToAccount } from "viem/accounts";
import { DEVNET_KEYS, DEVNET_MNEMONIC, devnetAccount } from "./devnetAccount.js";

describe("devnetAccount", () => {
  it("is the mnemonic's account at each index, from a known key or derived", async () => {
    for (let i = 0; i < DEVNET_KEYS.length + 2; i++) {
      const derived = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: i });
      const account = devnetAccount(i);
      expect(account.address).toBe(derived.address);
      // The same key: both sign the same message to the same signature (RFC 6979 is deterministic).
      expect(await account.signMessage({ message: `index ${i}` })).toBe(
        await derived.signMessage({ message: `index ${i}` }),
      );
    }
  });
});
