import type { Hex } from "viem";
import { mnemonicToAccount, privateKeyToAccount, type LocalAccount } from "viem/accounts";

/** anvil's development mnemonic: the devnet's well-known accounts (platform 1, co-signer 2), never real money. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

/**
 * The keys of the mnemonic's first ten accounts (m/44'/60'/0'/0/0-9), as anvil prints them at every start: public
 * test keys, held to the mnemonic by devnetAccount.test.ts. Deriving one costs the seed's PBKDF2 (2,048 rounds of
 * SHA-512 in JavaScript, 60-110 ms), which every process on the devnet paid again: each of a test run's ~55 indexer
 * starts derived the league's reserve while loading its config.
 */
export const DEVNET_KEYS: readonly Hex[] = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
];

const accounts = new Map<number, LocalAccount>();

/** Account `index` of the devnet mnemonic, made once per process (from its known key where there is one). */
export function devnetAccount(index: number): LocalAccount {
  let account = accounts.get(index);
  if (!account) {
    const key = DEVNET_KEYS[index];
    account = key ? privateKeyToAccount(key) : mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index });
    accounts.set(index, account);
  }
  return account;
}
