import type { Address } from "viem";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";

/** The `me/*` answers the SDK reads, and the keys each must carry. */
const SHAPES = {
  "/me/portfolio": ["wallet", "block", "holdings", "total_usd", "volume"],
  "/me/trades": ["wallet", "trades", "next_before"],
  "/league/me": ["wallet", "entries"],
} as const;
export type AccountPath = keyof typeof SHAPES;

/**
 * An account read (SPEC "Your account"): ACCOUNT_SHAPE when the answer lacks its fields,
 * ACCOUNT_WALLET when it is another wallet's (the answer is not used).
 */
export async function account<T = Record<string, unknown>>(
  http: Http,
  wallet: Address,
  path: AccountPath,
  query = "",
): Promise<T> {
  const body = await http.get<Record<string, unknown> | null>(`${path}${query}`);
  if (!body || typeof body !== "object" || SHAPES[path].some((k) => !(k in body)))
    throw new PitError(
      "ACCOUNT_SHAPE",
      `${path} answered without ${SHAPES[path].filter((k) => !body || !(k in body)).join(", ")}`,
    );
  if (typeof body.wallet !== "string" || body.wallet.toLowerCase() !== wallet.toLowerCase())
    throw new PitError("ACCOUNT_WALLET", `${path} answered for ${String(body.wallet)}, not ${wallet}; ignored`);
  return body as T;
}
