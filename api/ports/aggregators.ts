import type { Address } from "viem";

/** Aggregators quoted for comparison only (never built: QUOTE_ONLY). */
export const AGGREGATOR_VENUES = ["zeroex", "oneinch", "odos"] as const;
export type AggregatorVenue = (typeof AGGREGATOR_VENUES)[number];

export type AggregatorRow = {
  id: AggregatorVenue;
  venue: AggregatorVenue;
  label: string;
  quote_only: true;
  ok: boolean;
  amount_out: string | null;
  gas?: number | null;
  error: string | null;
};

/** How long a comparison quote may take: it never holds up our own answer for long. */
const TIMEOUT_MS = 1_500;

/**
 * One aggregator's price for the same trade: GET {base}/quote?chainId&sellToken&buyToken&sellAmount
 * answering {buyAmount, gas}. Never throws: an unconfigured or failing aggregator is a row with
 * ok false and the reason.
 */
export async function aggregatorQuote(p: {
  venue: AggregatorVenue;
  url: string | undefined;
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  sellAmount: bigint;
}): Promise<AggregatorRow> {
  const base = { id: p.venue, venue: p.venue, label: `${p.venue} (comparison only)`, quote_only: true as const };
  if (!p.url) return { ...base, ok: false, amount_out: null, error: "not configured on this server" };
  try {
    const res = await fetch(
      `${p.url.replace(/\/$/, "")}/quote?chainId=${p.chainId}` +
        `&sellToken=${p.sellToken}&buyToken=${p.buyToken}&sellAmount=${p.sellAmount}`,
      { signal: AbortSignal.timeout(TIMEOUT_MS) },
    );
    const body = (await res.json()) as { buyAmount?: string; gas?: string };
    if (res.status !== 200 || !body.buyAmount || !/^\d+$/.test(body.buyAmount))
      throw new Error(`answered ${res.status}`);
    return { ...base, ok: true, amount_out: body.buyAmount, gas: body.gas ? Number(body.gas) : null, error: null };
  } catch (err) {
    return { ...base, ok: false, amount_out: null, error: `unavailable: ${(err as Error).message.slice(0, 120)}` };
  }
}
