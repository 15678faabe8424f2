import { onClock, upTo } from "../../lib/cacheClock.js";
import PQueue from "p-queue";
import { LRUCache } from "lru-cache";
import { getAddress, isAddress, type Address, type PublicClient } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { OTHER_BPS, MAJOR_TIERS, SHIELD_ADD_BPS, majorSymbols } from "../../lib/fees.js";
import { Refusal } from "../errors/index.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import { RateLimiter, type Limiter } from "../http/rateLimit.js";
import { ShieldUnavailable, type ShieldProvider, type ShieldReport } from "../ports/shield.js";
import type { Db } from "../ports/store/db.js";
import { coreKind, implementationOf, screenToken, type ScreenContext, type TokenRecord } from "./screen.js";
import {
  countRegistry,
  findRecords,
  loadRecord,
  othersWithSymbol,
  storeRecord,
  type RecordFilter,
  type TokenCounts,
} from "./store.js";
import type { Common } from "../ports/common.js";

export { TIER_LIMITS, type Risk, type TokenRecord } from "./screen.js";
export type { TokenCounts } from "./store.js";

/**
 * Screening: two at a time, four waiting; beyond that 503 SCREEN_UNAVAILABLE. New tokens spend the
 * caller's budget (20, then one a minute) and the service's overall budget beside it (SPEC Limits
 * "screening a token not yet seen | caller; overall"). Overall: 100 at once (five callers' bursts),
 * then one every 2 s, the pace the two slots keep at about 4 s a screen; keys are cheap (any wallet
 * signs in), so without it a crowd of fresh keys keeps the queue full and grows the registry
 * without bound. At this pace it grows by at most 1,800 tokens an hour (per instance, as every
 * overall bucket is).
 */
export type ScreenTuning = {
  concurrency: number;
  maxWaiting: number;
  answerWithinMs: number;
  newPerCallerBurst: number;
  newPerCallerPerSecond: number;
  newOverallBurst: number;
  newOverallPerSecond: number;
  implCheckTtlMs: number;
};
export const SCREEN_DEFAULTS: Readonly<ScreenTuning> = Object.freeze({
  concurrency: 2,
  maxWaiting: 4,
  answerWithinMs: 8_000,
  newPerCallerBurst: 20,
  newPerCallerPerSecond: 1 / 60,
  newOverallBurst: 100,
  newOverallPerSecond: 1 / 2,
  implCheckTtlMs: 5_000,
});
/**
 * A token that cannot be read (404 NOT_A_TOKEN, UNKNOWN_TOKEN: no code, reverts, runs out of the
 * fenced reads' gas) is answered from memory for this long without touching the chain again: a
 * caller naming it over and over costs nothing, and a token fixed since is seen within 10 min.
 */
export const UNREADABLE_TTL_MS = 600_000;
/**
 * Core records are seeded when the service is built; a search waits this long for the seed; a seed
 * that could not finish is tried again, for the first caller retryMs after it ended. The seed built with
 * the service usually runs before the indexer has its pools, so the retry is what the first trades after
 * a start wait for: a second, not ten (ten refused every USDG trade with SCREEN_UNAVAILABLE for up to 10 s
 * after npm start said ready). A few core screens a second at most, while the chain does not answer.
 */
export const SEED = { waitMs: 8_000, retryMs: 1_000 };
/** GET /tokens/stats and /stats count the registry at most this often (SPEC Limits "token stats every 30 s"). */
export const TOKEN_STATS_TTL_MS = 30_000;

/**
 * `reader`: the fenced client for the token's own code (lib/chain createUntrustedReader). `budget`: where
 * new-token screening budgets live (shared by instances through Redis); default this instance's memory.
 * `tuning`: the screening limits (default SCREEN_DEFAULTS); read at each use, so the one who passed it may
 * tighten it later (tests do).
 */
type Deps = Pick<Common, "config" | "chain" | "clock"> & {
  db: Db;
  reader: PublicClient;
  indexed: SqlIndexedReads;
  shield: ShieldProvider | null;
  budget?: Limiter;
  tuning?: ScreenTuning;
};

/** The promise's value, or null when it has not settled within ms. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
  Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms).unref())]);

/** The registry's state: its caches, its screening queue and budgets, the core seed's progress. */
type Registry = ReturnType<typeof registryState>;

function registryState(d: Deps) {
  const coreByAddress = new Map(Object.values(d.config.tokens).map((t) => [t.address.toLowerCase(), t] as const));
  const ctx: ScreenContext = {
    config: d.config,
    chain: d.chain,
    reader: d.reader,
    indexed: d.indexed,
    coreByAddress,
    now: () => Math.floor(d.clock() / 1000),
  };
  const tuning = d.tuning ?? { ...SCREEN_DEFAULTS };
  return {
    d,
    ctx,
    tuning,
    coreByAddress,
    majors: new Set(majorSymbols(d.config.tokens)),
    queue: new PQueue({ concurrency: tuning.concurrency }),
    inflight: new Map<string, Promise<TokenRecord>>(),
    ...registryCaches(d, ctx, tuning),
    // The new-token screening budget guards the chain and the queue: on even when request limits are off.
    budget: d.budget ?? new RateLimiter(d.clock, 100_000, true),
    seededHere: new Set<string>(),
    seed: null as { run: Promise<boolean>; retryAt: number } | null,
  };
}

function registryCaches(d: Deps, ctx: ScreenContext, tuning: ScreenTuning) {
  return {
    // A proxy's implementation as last read (a screen sets it; a miss reads the chain). A screen's
    // set while a read runs would abort that read (lru-cache rejects it): ignoreFetchAbort lets the
    // read answer its caller; the cache keeps the screen's value. Likewise for records.
    implChecked: new LRUCache<string, Address | "none">({
      ...upTo(50_000),
      ttl: tuning.implCheckTtlMs,
      ignoreFetchAbort: true,
      fetchMethod: async (key) => (await implementationOf(ctx, key as Address)).impl ?? "none",
    }),
    // Screens that ended in NOT_A_TOKEN or UNKNOWN_TOKEN, answered again without a chain call.
    unreadable: new LRUCache<string, Refusal>({ ...upTo(50_000), ttl: UNREADABLE_TTL_MS, ...onClock(d.clock) }),
    // Screened records in memory, loaded from the registry on a miss (a re-screen here replaces its
    // entry; other instances see it within the TTL, the same window as the implementation check).
    records: new LRUCache<string, TokenRecord>({
      ...upTo(20_000),
      ttl: tuning.implCheckTtlMs,
      ignoreFetchAbort: true,
      fetchMethod: (key) => loadRecord(d.db, key),
    }),
    // One count shared by every caller, at most every 30 s by the service's clock; past that the
    // last count answers while the next runs (and stays when the registry does not answer). Counts
    // taken before the core seed landed are kept apart: the first ask after it counts afresh.
    counted: new LRUCache<"early" | "seeded", TokenCounts>({
      max: 2,
      ttl: TOKEN_STATS_TTL_MS,
      ...onClock(d.clock),
      allowStale: true,
      allowStaleOnFetchRejection: true,
      noDeleteOnFetchRejection: true,
      fetchMethod: () => countRegistry(d.db, d.clock),
    }),
  };
}

/** A core symbol or a 0x address; any other symbol must be given by address. */
export function resolveToken(config: Config, param: string): Address {
  const core = config.tokens[param.toUpperCase()];
  if (core && !/^0x/i.test(param)) return core.address;
  if (/^0x[0-9a-fA-F]{40}$/.test(param) && isAddress(param, { strict: false })) return getAddress(param);
  if (/^[A-Za-z0-9.$_-]{1,32}$/.test(param))
    throw new Refusal("ADDRESS_REQUIRED", `${param} is not a core symbol: name the token by its 0x address`);
  throw new Refusal("BAD_REQUEST", "a token is a core symbol or a 0x address");
}

/** Stores a screen and keeps this instance's caches of it (its implementation and its record). */
async function keepRecord(r: Registry, rec: TokenRecord) {
  await storeRecord(r.d.db, rec);
  r.implChecked.set(
    rec.address.toLowerCase(),
    ((rec.flags as { implementation: Address | null }).implementation ?? "none") as Address | "none",
  );
  r.records.set(rec.address.toLowerCase(), rec);
}

/**
 * The screen of a token not yet seen, one per token at a time, in the queue (503 SCREEN_UNAVAILABLE
 * when it is full).
 */
function startScreen(r: Registry, address: Address): Promise<TokenRecord> {
  const key = address.toLowerCase();
  const running = r.inflight.get(key);
  if (running) return running;
  if (r.queue.size >= r.tuning.maxWaiting)
    throw new Refusal("SCREEN_UNAVAILABLE", "no screening slot is free; retry shortly", {}, { retryAfterS: 5 });
  const job = r.queue
    .add(async () => {
      let rec: TokenRecord;
      try {
        rec = await screenToken(r.ctx, address);
      } catch (err) {
        if (err instanceof Refusal && (err.code === "NOT_A_TOKEN" || err.code === "UNKNOWN_TOKEN"))
          r.unreadable.set(key, err);
        throw err;
      }
      await keepRecord(r, rec);
      // Only a screen that completed spends the service's budget (peeked before it started).
      await r.budget.spend([{ key: "screenNew:overall", rule: overallRule(r.tuning) }]).catch(() => 0);
      return rec;
    })
    .finally(() => r.inflight.delete(key)) as Promise<TokenRecord>;
  r.inflight.set(key, job);
  job.catch(() => {});
  return job;
}

const cached = async (r: Registry, address: Address): Promise<TokenRecord | null> =>
  (await r.records.fetch(address.toLowerCase())) ?? null;

/** TOKEN_CHANGED when a proxy's implementation moved since the screen (checked at most every 5 s). */
async function assertUnchanged(r: Registry, rec: TokenRecord) {
  const key = rec.address.toLowerCase();
  const recorded = ((rec.flags as { implementation: Address | null }).implementation ?? "none")
    .toString()
    .toLowerCase();
  const current = (await r.implChecked.fetch(key))!;
  if (current.toLowerCase() !== recorded) {
    startScreen(r, rec.address);
    throw new Refusal(
      "TOKEN_CHANGED",
      `the proxy's implementation changed (${recorded} -> ${current.toLowerCase()}); it is being re-screened`,
    );
  }
}

/** A record as answered: its fee class and fee, with Shield's report or the offer of one. */
function decorate(r: Registry, rec: TokenRecord, shield: boolean, report: ShieldReport | null) {
  const core = r.coreByAddress.get(rec.address.toLowerCase());
  const major = (core !== undefined && r.majors.has(core.symbol)) || rec.stock_beacon;
  const base = major ? MAJOR_TIERS[0]!.bps : OTHER_BPS;
  return {
    ...rec,
    fee_bps: base + (shield ? SHIELD_ADD_BPS : 0),
    fee_class: major ? "major" : "other",
    shield,
    ...(shield ? { report } : { shield_available: true }),
  };
}

/** Shield's verdict on a token; 503 REPORT_UNAVAILABLE without a provider or when unreadable. */
async function shieldReport(d: Deps, address: Address): Promise<ShieldReport> {
  if (!d.shield)
    throw new Refusal(
      "REPORT_UNAVAILABLE",
      "no Shield provider is configured; trade without Shield",
      {},
      { retryAfterS: 15 },
    );
  try {
    return await d.shield.verdict(d.config.chainId, address);
  } catch (err) {
    if (err instanceof ShieldUnavailable)
      throw new Refusal(
        "REPORT_UNAVAILABLE",
        `${err.message}; retry after 15 s or trade without Shield`,
        {},
        { retryAfterS: 15 },
      );
    throw err;
  }
}

/**
 * Shield's verdict for each row, eight asked at once; the first unreadable one refuses them all (503
 * REPORT_UNAVAILABLE).
 */
function reportsFor(d: Deps, addresses: Address[]): Promise<ShieldReport[]> {
  const asking = new PQueue({ concurrency: 8 });
  return Promise.all(addresses.map((a) => asking.add(() => shieldReport(d, a))));
}

const overallRule = (t: ScreenTuning) => ({ burst: t.newOverallBurst, perSecond: t.newOverallPerSecond });

/**
 * A token not yet seen spends the caller's budget now and the overall one once its screen
 * completes; either spent: 429 with Retry-After 60 (SPEC Limits).
 */
async function spendNewScreenBudget(r: Registry, keyId: number) {
  const t = r.tuning;
  const spent = (whose: string) =>
    new Refusal(
      "RATE_LIMITED",
      `${whose} budget of new-token screens is spent; retry after the pause`,
      { retry_after_s: 60 },
      { retryAfterS: 60 },
    );
  // The service's budget is peeked here and spent when the screen completes (a token that
  // cannot be read spends none of it); the caller's is spent now.
  if ((await r.budget.wait("screenNew:overall", overallRule(t))) > 0) throw spent("the service's");
  if (
    (await r.budget.spend([
      { key: `screenNew:key:${keyId}`, rule: { burst: t.newPerCallerBurst, perSecond: t.newPerCallerPerSecond } },
    ])) > 0
  )
    throw spent("your");
}

/*
 * Core assets are in the registry from the start: screened when the service is built, not when
 * someone first asks for one. Several instances on one store each seed (an upsert: the last
 * screen wins; all read the same chain). A core asset whose screen sees none of the pools the
 * universe lists for it was read before the indexer caught up: it is not stored (it would say
 * NO_ROUTE) but tried again, as is one the chain or the store did not answer.
 */

function indexedYet(config: Config, t: TokenEntry, rec: TokenRecord): boolean {
  const listed = config.pools.some(
    (p) =>
      p.currency0.toLowerCase() === t.address.toLowerCase() || p.currency1.toLowerCase() === t.address.toLowerCase(),
  );
  return !listed || (rec.venues as { type: string }[]).some((v) => v.type === "v4-pool");
}

async function seedOne(r: Registry, t: TokenEntry) {
  try {
    const rec = await screenToken(r.ctx, t.address);
    if (!indexedYet(r.d.config, t, rec)) return;
    await keepRecord(r, rec);
    r.seededHere.add(t.address.toLowerCase());
  } catch {
    // The chain or the store did not answer: the next seed tries again.
  }
}

/** All core assets at once (a handful, fixed by config: they need no screening slot). */
async function seedCore(r: Registry): Promise<boolean> {
  await Promise.all(
    [...r.coreByAddress.values()].filter((t) => !r.seededHere.has(t.address.toLowerCase())).map((t) => seedOne(r, t)),
  );
  return r.seededHere.size === r.coreByAddress.size;
}

/** The seed, one at a time: true once every core record is stored. */
function seeded(r: Registry): Promise<boolean> {
  if (r.seed === null || performance.now() >= r.seed.retryAt) {
    const current = { run: Promise.resolve(false), retryAt: Infinity };
    current.run = seedCore(r).then((complete) => {
      // A complete seed never runs again; an incomplete one starts again for the first caller SEED.retryMs after
      // it ended.
      if (!complete) current.retryAt = performance.now() + SEED.retryMs;
      return complete;
    });
    r.seed = current;
  }
  return r.seed.run;
}

/** A core asset the seed has not stored yet, as GET /tokens/<address> answers one still screening. */
function unscreenedCore(t: TokenEntry): Record<string, unknown> & { address: Address } {
  return {
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
    kind: coreKind(t),
    screen_status: "UNSCREENED",
    tier: null,
    tradable: false,
    risks: [],
    warnings: ["This core asset's screen has not finished on this server: ask again in a few seconds."],
  };
}

/**
 * The latest counts; null while the first has not landed within waitMs; 503 REGISTRY_UNAVAILABLE when
 * no count could be had.
 */
async function counts(r: Registry, waitMs: number): Promise<TokenCounts | null> {
  try {
    return (
      (await within(r.counted.fetch(r.seededHere.size === r.coreByAddress.size ? "seeded" : "early"), waitMs)) ?? null
    );
  } catch {
    throw new Refusal("REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, { retryAfterS: 5 });
  }
}

/** GET /tokens/stats: the counts with their age; 503 STATS_PENDING until the first lands (answered if within 1 s). */
async function stats(r: Registry) {
  const c = await counts(r, 1_000);
  if (!c) throw new Refusal("STATS_PENDING", "the first registry count is running", {}, { retryAfterS: 5 });
  return { ...c.body, cached_s: Math.floor((r.d.clock() - c.at) / 1000) };
}

type GetOptions = { shield: boolean; keyId: number; clientAddr: string };
const shieldFields = (shield: boolean) => ({ shield, ...(shield ? { report: null } : { shield_available: true }) });

/**
 * A token not yet seen, screened (spending the budgets); null when the screen outlasts the answer
 * window (it runs on).
 */
async function screenNew(r: Registry, address: Address, keyId: number): Promise<TokenRecord | null> {
  const known = r.unreadable.get(address.toLowerCase());
  if (known) throw known;
  await spendNewScreenBudget(r, keyId);
  const job = startScreen(r, address);
  const timeout = new Promise<null>((res) => setTimeout(() => res(null), r.tuning.answerWithinMs).unref());
  return Promise.race([job, timeout]);
}

/** GET /tokens/<token>: the record (screened now if never seen), its fee class, Shield's report when asked. */
async function getToken(r: Registry, param: string, opts: GetOptions) {
  const address = resolveToken(r.d.config, param);
  let rec = await cached(r, address);
  if (rec) {
    await assertUnchanged(r, rec);
  } else if (r.coreByAddress.has(address.toLowerCase())) {
    // Core assets come from config and are stored by the seed alone, which stores none read
    // before the indexer has its pools (it would say NO_ROUTE): until then, not screened yet.
    await within(seeded(r), SEED.waitMs);
    rec = await cached(r, address);
    if (!rec) return { ...unscreenedCore(r.coreByAddress.get(address.toLowerCase())!), ...shieldFields(opts.shield) };
  } else {
    rec = await screenNew(r, address, opts.keyId);
    if (!rec)
      return {
        address,
        screen_status: "UNSCREENED",
        tier: null,
        tradable: false,
        risks: [],
        warnings: ["Screening is still running: ask again in a few seconds."],
        ...shieldFields(opts.shield),
      };
  }
  const report = opts.shield ? await shieldReport(r.d, address) : null;
  return decorate(r, rec, opts.shield, report);
}

type SearchParams = { q?: string; tier?: string; kind?: string; limit: number; shield: boolean };

/**
 * The search's filter and what the answer says of the query (a core symbol: how many others use it,
 * with a warning).
 */
async function searchFilter(r: Registry, p: SearchParams, core: TokenEntry | undefined) {
  const warnings: string[] = [];
  let query: Record<string, unknown> = { q: p.q ?? null, tier: p.tier ?? null, kind: p.kind ?? null, limit: p.limit };
  let match: RecordFilter["match"];
  if (core) {
    match = { by: "address", value: core.address };
    const n = await othersWithSymbol(r.d.db, core.symbol, core.address);
    query = { ...query, core_symbol: core.symbol, others_with_symbol: n };
    if (n > 0)
      warnings.push(`${n} other token(s) also call themselves ${core.symbol}; only ${core.address} is the core asset.`);
  } else if (p.q && /^0x[0-9a-fA-F]{0,40}$/.test(p.q)) {
    match = { by: "prefix", value: p.q };
  } else if (p.q) {
    match = { by: "text", value: p.q };
  }
  return { filter: { match, tier: p.tier, kind: p.kind, limit: p.limit }, query, warnings };
}

/**
 * GET /tokens. With shield=1 every row carries Shield's report, core assets too: the provider's
 * verdict, as GET /tokens/<address>?shield=1 gives it (the server never writes a verdict of its
 * own). One unreadable verdict refuses the whole answer, 503 REPORT_UNAVAILABLE: a row without
 * its verdict would either vanish from the list or carry a report SPEC does not shape, and a
 * client filtering on verdicts must not read an absent one as verified.
 */
async function searchTokens(r: Registry, p: SearchParams) {
  // A fresh server answers with its core records: wait (bounded) for the seed.
  await within(seeded(r), SEED.waitMs);
  const named = p.q ? r.d.config.tokens[p.q.toUpperCase()] : undefined;
  const core = named && !/^0x/i.test(p.q!) ? named : undefined;
  const { filter, query, warnings } = await searchFilter(r, p, core);
  const found: (Record<string, unknown> & { address: Address })[] = await findRecords(r.d.db, filter);
  // A core symbol always finds its asset, screened or not yet.
  if (core && found.length === 0 && !p.tier && (!p.kind || p.kind === coreKind(core))) {
    found.push(unscreenedCore(core));
    warnings.push(`${core.symbol}'s screen has not finished on this server; its record is not complete yet.`);
  }
  const reports = p.shield
    ? await reportsFor(
        r.d,
        found.map((x) => x.address),
      )
    : null;
  const tokens = found.map((x, i) =>
    x.screen_status === "UNSCREENED"
      ? { ...x, shield: p.shield, ...(reports ? { report: reports[i] } : { shield_available: true }) }
      : decorate(r, x as TokenRecord, p.shield, reports?.[i] ?? null),
  );
  return { query, tokens, count: tokens.length, warnings, shield: p.shield };
}

/**
 * The token registry (app store), seeded with the core assets when built, and on-demand
 * screening (api/tokens/screen.ts) stored through api/tokens/store.ts. Symbols and names are
 * deployer text: stored and returned exactly as read, never interpreted here.
 */
export function createTokens(d: Deps) {
  const r = registryState(d);
  void seeded(r);
  return {
    resolve: (param: string) => resolveToken(d.config, param),
    queue: r.queue,
    counts: (waitMs: number) => counts(r, waitMs),
    stats: () => stats(r),
    /** Shield's verdict on a token; 503 REPORT_UNAVAILABLE without a provider or when unreadable. */
    report: (address: Address) => shieldReport(d, address),
    get: (param: string, opts: GetOptions) => getToken(r, param, opts),
    search: (p: SearchParams) => searchTokens(r, p),
  };
}

export type Tokens = ReturnType<typeof createTokens>;
