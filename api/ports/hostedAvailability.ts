import { zeroAddress } from "viem";
import type { Config } from "../../lib/config.js";
import type { ExecutorPort } from "./executors.js";

/**
 * One probe's limit: me/sessions waits at most this long for the signing service, never more (as a
 * chain call's 2 s: short, yet a cold connection on a loaded host is not read as an outage).
 */
export const AVAILABILITY_BUDGET_MS = 2_000;
/** How long a probe's answer is kept, so a burst of me/sessions reads costs one call. */
export const AVAILABILITY_CACHE_MS = 5_000;

type AvailabilityDeps = {
  config: Pick<Config, "hostedKillSwitch" | "hostedLive">;
  /** The executor signing service; null when none is configured (live agents answer SIGNER_REQUIRED). */
  executors: Pick<ExecutorPort, "state"> | null;
  clock: () => number;
  budgetMs?: number;
  cacheMs?: number;
};
type State = {
  d: AvailabilityDeps;
  last: { at: number; ok: boolean } | null;
  pending: Promise<boolean> | null;
};

/**
 * me/sessions `hosted_available`: whether hosted agents can trade live on this server now. True only
 * when neither HOSTED_KILL_SWITCH nor HOSTED_LIVE=false holds live agents, an executor signing
 * service is configured, and it answers a state read within the budget (of the zero address: it
 * holds no key for it, so the read signs nothing and costs one store lookup behind its bearer
 * secret). Paper agents need none of this and run either way. The answer is kept `cacheMs`
 * (concurrent reads share one probe); a probe that does not answer in `budgetMs` is false.
 */
export function hostedAvailability(d: AvailabilityDeps): () => Promise<boolean> {
  const s: State = { d, last: null, pending: null };
  return () => available(s);
}

async function available(s: State): Promise<boolean> {
  const { config, executors, clock } = s.d;
  if (config.hostedKillSwitch || !config.hostedLive || !executors) return false;
  const now = clock();
  const cacheMs = s.d.cacheMs ?? AVAILABILITY_CACHE_MS;
  // A clock moved back (tests drive it) counts as stale, never as fresh for ever.
  if (s.last && now >= s.last.at && now - s.last.at < cacheMs) return s.last.ok;
  s.pending ??= probe(executors, s.d.budgetMs ?? AVAILABILITY_BUDGET_MS).then((ok) => {
    s.last = { at: clock(), ok };
    s.pending = null;
    return ok;
  });
  return s.pending;
}

/** One state read raced against the budget: any answer is true; a refusal, an error or silence is false. */
async function probe(executors: Pick<ExecutorPort, "state">, budgetMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), budgetMs);
    timer.unref();
  });
  try {
    return await Promise.race([
      executors.state(zeroAddress).then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
