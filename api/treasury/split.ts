/** SPEC "Limits": the weekly split of what reached the platform wallet, in basis points. */
export const SPLIT_BPS = { operations: 5_000, buybacks: 4_000, treasury: 1_000 } as const;
export type Bucket = keyof typeof SPLIT_BPS;
export const BUCKETS = Object.keys(SPLIT_BPS) as Bucket[];
export type PerBucket<T = bigint> = Record<Bucket, T>;
/**
 * A week's pool worth less than this (USD at the week's mark) is carried, not split: the transfers would cost
 * more than they move.
 */
export const DUST_USD = 1;

export type TokenStatus = "split" | "dust" | "unpriced" | "nothing";

export type SplitInput = {
  carriedIn: bigint;
  received: bigint;
  outside: bigint;
  /** Shares booked in earlier weeks for buckets that had no wallet, still held. */
  owedIn: PerBucket;
  decimals: number;
  /** USD per whole token with 8 decimals, or null when the token has no independent mark. */
  markE8: bigint | null;
  /** Buckets with a wallet: their share (and what they were owed) moves this week. */
  bucketSet: PerBucket<boolean>;
};

export type SplitOutput = {
  pool: bigint;
  status: TokenStatus;
  booked: PerBucket;
  moved: PerBucket;
  owedOut: PerBucket;
  carriedOut: bigint;
  valueUsdCents: bigint | null;
};

const perBucket = <T>(f: (b: Bucket) => T): PerBucket<T> => ({
  operations: f("operations"),
  buybacks: f("buybacks"),
  treasury: f("treasury"),
});

/** USD cents of `atoms` at a mark of 8 decimals, rounded down (integers only: any reader recomputes it exactly). */
export const valueCents = (atoms: bigint, decimals: number, markE8: bigint): bigint =>
  (atoms * markE8) / 10n ** BigInt(decimals + 6);

/**
 * One token's week: pool = carried_in + received + outside. Priced and worth DUST_USD or more, it
 * is split by SPLIT_BPS, each share rounded down to atoms, the remainder carried. Dust and
 * unpriced pools are carried whole (an unpriced token waits for a mark rather than be split blind).
 * A bucket with a wallet receives its share plus what it was owed; one without keeps owing it.
 */
export function splitToken(i: SplitInput): SplitOutput {
  const pool = i.carriedIn + i.received + i.outside;
  const valueUsdCents = i.markE8 === null ? null : valueCents(pool, i.decimals, i.markE8);
  const status: TokenStatus =
    pool === 0n
      ? "nothing"
      : valueUsdCents === null
        ? "unpriced"
        : valueUsdCents < BigInt(DUST_USD * 100)
          ? "dust"
          : "split";
  const booked = perBucket((b) => (status === "split" ? (pool * BigInt(SPLIT_BPS[b])) / 10_000n : 0n));
  const carriedOut = pool - BUCKETS.reduce((s, b) => s + booked[b], 0n);
  const moved = perBucket((b) => (i.bucketSet[b] ? i.owedIn[b] + booked[b] : 0n));
  const owedOut = perBucket((b) => i.owedIn[b] + booked[b] - moved[b]);
  return { pool, status, booked, moved, owedOut, carriedOut, valueUsdCents };
}

export const zeroBuckets = (): PerBucket => perBucket(() => 0n);
export const bucketStrings = (p: PerBucket): PerBucket<string> => perBucket((b) => p[b].toString());
export const bucketsFrom = (p: PerBucket<string> | undefined): PerBucket => perBucket((b) => BigInt(p?.[b] ?? "0"));
export { perBucket };
