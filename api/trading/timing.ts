/** Milliseconds since `from` (performance.now()), to two decimals: the answers' `timings`. */
export const msSince = (from: number) => Math.round((performance.now() - from) * 100) / 100;

/** Dollars to the cent, as answers show them. */
export const round2 = (x: number) => Math.round(x * 100) / 100;
