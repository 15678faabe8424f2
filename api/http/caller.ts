import type { Address } from "viem";
import { Refusal } from "../errors/index.js";
import type { RawCall } from "./route.js";

/** The signed-in caller as keyed actions take it: the key's wallet and the key's id. */
export type Caller = { wallet: Address; keyId: number };

/**
 * A route's `first` step for a key that acts for its wallet: the caller, or 403 WALLET_NOT_BOUND
 * (`why` says what needed the wallet) before any field of the input is read.
 */
export const boundCaller =
  (why = UNBOUND) =>
  ({ c }: RawCall): Caller =>
    callerOf(c.get("key"), why);

const UNBOUND = "this key is bound to no wallet";

/** The key's caller, or 403 WALLET_NOT_BOUND (`why` says what needed the wallet). */
export function callerOf(key: { wallet: Address | null; keyId: number }, why = UNBOUND): Caller {
  if (!key.wallet) throw new Refusal("WALLET_NOT_BOUND", why);
  return { wallet: key.wallet, keyId: key.keyId };
}
