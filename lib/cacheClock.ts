/**
 * lru-cache options for a cache whose ttl runs on an injected clock. `ttlResolution: 0` because
 * lru-cache otherwise reuses the last clock reading until a 1 ms timer fires; under load that
 * timer runs late, and an entry past its ttl reads as fresh (seen as a flaky stats test in CI).
 */
export const onClock = (clock: () => number) => ({ perf: { now: clock }, ttlResolution: 0 }) as const;
