import type { Address } from "viem";
import { z } from "zod";

/** A risk verdict for a token from the outside Shield provider. */
export type ShieldReport = {
  verdict: "verified" | "unverified" | "flagged";
  url: string;
  source: string;
  checked_at: number;
};

export interface ShieldProvider {
  /** The verdict, or a thrown ShieldUnavailable: an unreadable verdict is never "verified". */
  verdict(chainId: number, token: Address): Promise<ShieldReport>;
}

export class ShieldUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShieldUnavailable";
  }
}

const answer = z.object({
  verdict: z.enum(["verified", "unverified", "flagged"]),
  url: z.string().url(),
  source: z.string().min(1).max(200),
  checked_at: z.number().int().nonnegative(),
});

/**
 * HTTP client of the verdict provider: GET {base}/v1/verdicts/{chainId}/{address} answering
 * {verdict, url, source, checked_at}. Anything else (timeout, 5xx, malformed) is unavailable.
 */
export function httpShield(baseUrl: string, timeoutMs = 3_000): ShieldProvider {
  return {
    async verdict(chainId, token) {
      let res: Response;
      try {
        res = await fetch(`${baseUrl.replace(/\/$/, "")}/v1/verdicts/${chainId}/${token.toLowerCase()}`, {
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new ShieldUnavailable(`verdict provider unreachable: ${(err as Error).name}`);
      }
      if (res.status !== 200) throw new ShieldUnavailable(`verdict provider answered ${res.status}`);
      const parsed = answer.safeParse(await res.json().catch(() => null));
      if (!parsed.success) throw new ShieldUnavailable("verdict provider answered something unreadable");
      return parsed.data;
    },
  };
}
