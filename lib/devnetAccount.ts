import { mnemonicToAccount, type HDAccount } from "viem/accounts";

/** anvil's development mnemonic: the devnet's well-known accounts (platform 1, co-signer 2), never real money. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

const derived = new Map<number, HDAccount>();

/**
 * Account `index` of the devnet mnemonic, derived once per process: the seed's PBKDF2 (2,048 rounds of
 * SHA-512 in JavaScript) costs 60-100 ms a call, and config, the devnet signers and the test helpers ask for
 * the same few accounts over and over (every loadConfig on the devnet derived the league's reserve again).
 */
export function devnetAccount(index: number): HDAccount {
  let account = derived.get(index);
  if (!account) derived.set(index, (account = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index })));
  return account;
}
