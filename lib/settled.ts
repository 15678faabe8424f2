/**
 * Promise.all that waits for every promise to settle before it throws: work still running after the first failure
 * would go on touching what its caller hands to the next attempt (a buffer to reuse, state kept between passes).
 * Throws the first rejection in the array's order; answers the values in order as Promise.all does.
 */
export async function allSettledOrThrow<T extends readonly unknown[] | []>(
  ps: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const done = (await Promise.allSettled(ps)) as PromiseSettledResult<unknown>[];
  for (const r of done) if (r.status === "rejected") throw r.reason;
  return done.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
