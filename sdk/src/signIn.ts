import type { LocalAccount } from "viem";
import { parseSiweMessage } from "viem/siwe";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";
import type { Pins } from "./pins.js";

/**
 * SPEC "Authentication" 1: the challenge (EIP-4361) must name the pinned domain, the pinned chain
 * and this wallet's own address before the wallet signs it: a server naming another domain could
 * replay the signature there. Answers the API key.
 */
export async function signIn(http: Http, account: LocalAccount, pins: Pins): Promise<string> {
  const ch = await http.post<{ message: string }>("/auth/challenge", { address: account.address });
  const m = parseSiweMessage(ch.message ?? "");
  const wrong =
    m.domain !== pins.domain
      ? `the domain ${pins.domain}`
      : m.chainId !== pins.chainId
        ? `chain ${pins.chainId}`
        : m.address?.toLowerCase() !== account.address.toLowerCase()
          ? "this wallet"
          : null;
  if (wrong) throw new PitError("CONFIG_MISMATCH", `the sign-in challenge does not name ${wrong}; nothing was signed`);
  // The nonce names exactly this challenge: without it verify tries the newest open ones, and
  // anyone may ask challenges for this wallet (a verify leaving by another address than the ask would miss its own).
  const v = await http.post<{ api_key: string }>("/auth/verify", {
    address: account.address,
    signature: await account.signMessage({ message: ch.message }),
    ...(m.nonce ? { nonce: m.nonce } : {}),
  });
  http.key = v.api_key;
  return v.api_key;
}
