import { onClock } from "../../lib/cacheClock.js";
import PQueue from "p-queue";
import { LRUCache } from "lru-cache";
import { getAddress, isAddress, parseUnits, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { beaconAbi, launchpadAbi, partnerAgentVaultAbi, stockTokenAbi } from "../../abis/fixtures.js";
import type { Config, TokenEntry } from "../../lib/config.js";
import { fencedRead } from "../../lib/chain.js";
import { OTHER_BPS, MAJOR_TIERS, SHIELD_ADD_BPS, majorSymbols } from "../../lib/fees.js";
import { RISKS, type RiskCode } from "../../lib/risks.js";
import { Q96 } from "../../lib/v4.js";
import { BEACON_SLOT, IMPL_SLOT, slotAddress } from "../../lib/eip1967.js";
import { Refusal } from "../errors/index.js";
import { deepestPool, independentBasis, TWAP_WINDOW_S } from "../market/index.js";
import type { SqlIndexedReads, PoolState } from "../ports/indexed.js";
import { RateLimiter, type Limiter } from "../http/rateLimit.js";
import { ShieldUnavailable, type ShieldProvider, type ShieldReport } from "../ports/shield.js";
import { probeBuySell, type Probe } from "../ports/simulation.js";
import type { Db } from "../ports/store/db.js";

/**
 * Screening: two at a time, four waiting; beyond that 503 SCREEN_UNAVAILABLE. New tokens spend the
 * caller's budget (20, then one a minute) and the service's overall budget beside it (SPEC Limits
 * "screening a token not yet seen | caller; overall"). Overall: 100 at once (five callers' bursts),
 * then one every 2 s, the pace the two slots keep at about 4 s a screen; keys are cheap (any wallet
 * signs in), so without it a crowd of fresh keys keeps the queue full and grows the registry
 * without bound. At this pace it grows by at most 1,800 tokens an hour (per instance, as every
 * overall bucket is).
 */
export const SCREEN = {
  concurrency: 2, maxWaiting: 4, answerWithinMs: 8_000, newPerCallerBurst: 20, newPerCallerPerSecond: 1 / 60, newOverallBurst: 100, newOverallPerSecond: 1 / 2, implCheckTtlMs: 5_000,
};
/**
 * A token that cannot be read (404 NOT_A_TOKEN, UNKNOWN_TOKEN: no code, reverts, runs out of the
 * fenced reads' gas) is answered from memory for this long without touching the chain again: a
 * caller naming it over and over costs nothing, and a token fixed since is seen within 10 min.
 */
export const UNREADABLE_TTL_MS = 600_000;
/** Core records are seeded when the service is built; a search waits this long for the seed; a seed that could not finish is tried again after retryMs. */
export const SEED = { waitMs: 8_000, retryMs: 10_000 };
/** GET /tokens/stats and /stats count the registry at most this often (SPEC Limits "token stats every 30 s"). */
export const TOKEN_STATS_TTL_MS = 30_000;
export const TIER_LIMITS = { A: 10_000, B: 2_500, C: 500, blocked: 0 } as const;
const B_MIN_LIQUIDITY_USD = 250_000;

export type Risk = { code: RiskCode; severity: "severe" | "info"; detail: string };
export type TokenRecord = Record<string, unknown> & { address: Address; symbol: string; name: string; kind: string; tier: string; stock_beacon: boolean; risks: Risk[] };

/** The registry's counts (GET /tokens/stats without cached_s) and the clock time they were taken. */
export type TokenCounts = { at: number; body: { total: number; tradable: number; by_tier: Record<string, number>; by_kind: Record<string, number>; by_risk: Record<string, number>; blocked_by_reason: Record<string, number>; generated_at: number } };

/** `reader`: the fenced client for the token's own code (lib/chain createUntrustedReader). `budget`: where new-token screening budgets live (shared by instances through Redis); default this instance's memory. */
type Deps = { db: Db; config: Config; chain: PublicClient; reader: PublicClient; indexed: SqlIndexedReads; shield: ShieldProvider | null; clock: () => number; budget?: Limiter };

const poolVenue = (p: PoolState) => ({ type: "v4-pool", pool_id: p.id, currency0: p.currency0, currency1: p.currency1, fee: p.fee, tick_spacing: p.tickSpacing, hooks: p.hooks });

/** A core asset's record kind: the issuer's stocks are `stock`, the rest `core`. */
const coreKind = (t: TokenEntry) => (t.kind === "stock" ? "stock" : "core");

/** The promise's value, or null when it has not settled within ms. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | null> => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms).unref())]);

const asAddress = slotAddress;

/**
 * The token registry (app store), seeded with the core assets when built, and on-demand
 * screening. Symbols and names are deployer text: stored and returned exactly as read (the
 * record is kept as JSON text so even NUL survives), never interpreted here.
 */
export function createTokens(d: Deps) {
  const { config, chain, reader } = d;
  const coreByAddress = new Map(Object.values(config.tokens).map((t) => [t.address.toLowerCase(), t] as const));
  const usdg = config.tokens.USDG!;
  const majors = new Set(majorSymbols(config.tokens));
  const queue = new PQueue({ concurrency: SCREEN.concurrency });
  const inflight = new Map<string, Promise<TokenRecord>>();
  // A proxy's implementation as last read (a screen sets it; a miss reads the chain). A screen's
  // set while a read runs would abort that read (lru-cache rejects it): ignoreFetchAbort lets the
  // read answer its caller; the cache keeps the screen's value. Likewise for records.
  const implChecked = new LRUCache<string, Address | "none">({
    max: 50_000,
    ttl: SCREEN.implCheckTtlMs,
    ignoreFetchAbort: true,
    fetchMethod: async (key) => (await implementationOf(key as Address)).impl ?? "none",
  });
  // Screens that ended in NOT_A_TOKEN or UNKNOWN_TOKEN, answered again without a chain call.
  const unreadable = new LRUCache<string, Refusal>({ max: 50_000, ttl: UNREADABLE_TTL_MS, ...onClock(d.clock) });
  // Screened records in memory, loaded from the registry on a miss (a re-screen here replaces its
  // entry; other instances see it within the TTL, the same window as the implementation check).
  const records = new LRUCache<string, TokenRecord>({ max: 20_000, ttl: SCREEN.implCheckTtlMs, ignoreFetchAbort: true, fetchMethod: (key) => loadRecord(key) });
  // One count shared by every caller, at most every 30 s by the service's clock; past that the
  // last count answers while the next runs (and stays when the registry does not answer). Counts
  // taken before the core seed landed are kept apart: the first ask after it counts afresh.
  const counted = new LRUCache<"early" | "seeded", TokenCounts>({
    max: 2,
    ttl: TOKEN_STATS_TTL_MS,
    ...onClock(d.clock),
    allowStale: true,
    allowStaleOnFetchRejection: true,
    noDeleteOnFetchRejection: true,
    fetchMethod: () => countRegistry(),
  });
  // The new-token screening budget guards the chain and the queue: on even when request limits are off.
  const budget: Limiter = d.budget ?? new RateLimiter(d.clock, 100_000, true);
  const now = () => Math.floor(d.clock() / 1000);

  /** A core symbol or a 0x address; any other symbol must be given by address. */
  function resolve(param: string): Address {
    const core = config.tokens[param.toUpperCase()];
    if (core && !/^0x/i.test(param)) return core.address;
    if (/^0x[0-9a-fA-F]{40}$/.test(param) && isAddress(param, { strict: false })) return getAddress(param);
    if (/^[A-Za-z0-9.$_-]{1,32}$/.test(param)) throw new Refusal("ADDRESS_REQUIRED", `${param} is not a core symbol: name the token by its 0x address`);
    throw new Refusal("BAD_REQUEST", "a token is a core symbol or a 0x address");
  }

  async function implementationOf(address: Address): Promise<{ impl: Address | null; beacon: Address | null }> {
    const [implSlot, beaconSlot] = await Promise.all([chain.getStorageAt({ address, slot: IMPL_SLOT }), chain.getStorageAt({ address, slot: BEACON_SLOT })]);
    const beacon = asAddress(beaconSlot);
    if (beacon) {
      // The beacon is whatever the token's slot names: its code is fenced like the token's.
      const impl = await fencedRead(reader, { address: beacon, abi: beaconAbi, functionName: "implementation" });
      return { impl: impl.status === "success" ? getAddress(impl.result) : null, beacon };
    }
    return { impl: asAddress(implSlot), beacon: null };
  }

  function liquidityUsd(pool: PoolState, quote: TokenEntry, quoteUsd: number): number {
    // Full-range depth of the quote side: L·√P for currency1, L/√P for currency0.
    const quoteIs1 = pool.currency1.toLowerCase() === quote.address.toLowerCase();
    const atoms = quoteIs1 ? (pool.liquidity * pool.sqrtPriceX96) / Q96 : pool.sqrtPriceX96 > 0n ? (pool.liquidity * Q96) / pool.sqrtPriceX96 : 0n;
    return 2 * (Number(atoms) / 10 ** quote.decimals) * quoteUsd;
  }

  /** Native ETH has no contract: its record comes from config and its pools. */
  async function nativeRecord(t: TokenEntry): Promise<TokenRecord> {
    const pools = await d.indexed.poolsOf(t.address);
    return {
      address: t.address, symbol: t.symbol, name: t.name, decimals: t.decimals, kind: "core", stock_beacon: false, tier: "A", tradable: true, blocked_reason: null,
      venues: pools.map(poolVenue),
      reference: t.feed ? { source: "oracle", feed: t.feed } : { source: "none" },
      liquidity_usd: null, creator_tax_bps: 0, curve_fee_bps: null, multiplier: null,
      flags: { core: true, proxy: false, implementation: null, paused: false, on_curve: false, native: true },
      simulation: null, risks: [], limits: { max_trade_usd: TIER_LIMITS.A }, warnings: [], screened_at: now(), screen_status: "SCREENED",
    } as TokenRecord;
  }

  async function screen(address: Address): Promise<TokenRecord> {
    const coreEntry = coreByAddress.get(address.toLowerCase());
    if (coreEntry?.native) return nativeRecord(coreEntry);
    const code = await chain.getCode({ address });
    if (!code || code === "0x") throw new Refusal("NOT_A_TOKEN", `${address} has no contract code on chain ${config.chainId}`);
    // The token's own code, each read apart with its own gas cap (one multicall would let a
    // gas-burning name() starve the rest) on the fenced reader.
    const [name, symbol, decimals, supply] = await Promise.all([
      fencedRead(reader, { address, abi: erc20Abi, functionName: "name" }),
      fencedRead(reader, { address, abi: erc20Abi, functionName: "symbol" }),
      fencedRead(reader, { address, abi: erc20Abi, functionName: "decimals" }),
      fencedRead(reader, { address, abi: erc20Abi, functionName: "totalSupply" }),
    ]);
    if (decimals.status !== "success" || supply.status !== "success") throw new Refusal("NOT_A_TOKEN", `${address} does not answer decimals() and totalSupply() like an ERC-20`);
    if (name.status !== "success" && symbol.status !== "success") throw new Refusal("UNKNOWN_TOKEN", `${address} gives neither name nor symbol: unknown token`);
    const core = coreByAddress.get(address.toLowerCase());
    const { impl, beacon } = await implementationOf(address);
    const stockBeacon = beacon !== null && beacon.toLowerCase() === config.contracts.stockBeacon.toLowerCase();
    const risks: Risk[] = [];
    const warnings: string[] = [];
    const add = (c: RiskCode, detail: string) => risks.push({ code: c, severity: RISKS[c], detail });

    let paused = false;
    let multiplier: number | null = null;
    if (stockBeacon) {
      // Anyone can write the issuer's beacon into a contract's slot: still the token's code, fenced.
      const [p, m] = await Promise.all([fencedRead(reader, { address, abi: stockTokenAbi, functionName: "paused" }), fencedRead(reader, { address, abi: stockTokenAbi, functionName: "uiMultiplier" })]);
      paused = p.status === "success" && p.result;
      multiplier = Number(m.status === "success" ? m.result : 10n ** 18n) / 1e18;
      if (paused) add("STOCK_PAUSED", "the issuer has paused transfers of this stock token");
    }

    // Kind: core list, issuer list (core stocks), partner vault, launchpad curve, else plain ERC-20.
    let kind = core ? (core.kind === "stock" ? "stock" : "core") : "erc20";
    const curve = await chain.readContract({ address: config.contracts.launchpad, abi: launchpadAbi, functionName: "curves", args: [address] }).catch(() => null);
    const onCurve = curve !== null && curve[3] > 0n;
    if (!core) {
      const count = await chain.readContract({ address: config.contracts.partnerAgentVault, abi: partnerAgentVaultAbi, functionName: "agentCount" }).catch(() => 0n);
      for (let id = 1n; id <= count && id <= 500n; id++) {
        const agent = await chain.readContract({ address: config.contracts.partnerAgentVault, abi: partnerAgentVaultAbi, functionName: "getAgent", args: [id] }).catch(() => null);
        if (agent && agent.token.toLowerCase() === address.toLowerCase()) kind = "partner_agent";
      }
      if (kind === "erc20" && onCurve) kind = "launchpad";
    }

    const pools = await d.indexed.poolsOf(address);
    const venues: Record<string, unknown>[] = pools.map(poolVenue);
    if (onCurve) venues.push({ type: "curve", curve: config.contracts.launchpad, graduated: curve![2] });
    // WETH trades as ETH: the router wraps and unwraps.
    if (core?.kind === "wrapped") venues.push({ type: "wrap", with: "ETH", via: config.contracts.universalRouter });

    const ethMark = config.tokens.ETH?.feed ? await d.indexed.latestMark(config.tokens.ETH.feed, now()).catch(() => null) : null;
    const ethUsd = ethMark ? Number(ethMark.answer) / 1e8 : null;
    const quoted = pools
      .map((p) => {
        const other = p.currency0.toLowerCase() === address.toLowerCase() ? p.currency1 : p.currency0;
        const quote = other.toLowerCase() === usdg.address.toLowerCase() ? usdg : other === zeroAddress && ethUsd ? config.tokens.ETH! : null;
        return quote ? { pool: p, quote, liquidity: liquidityUsd(p, quote, quote === usdg ? 1 : ethUsd!) } : null;
      })
      .filter((x): x is NonNullable<typeof x> => x !== null)
      .sort((a, b) => b.liquidity - a.liquidity);
    const best = quoted[0] ?? null;
    const liquidity = best ? Math.round(best.liquidity) : onCurve ? Math.round((Number(curve![6]) / 1e18) * (ethUsd ?? 0)) : 0;

    let probe: Probe | null = null;
    if (best && !core) {
      const amount = best.quote === usdg ? parseUnits("100", usdg.decimals) : parseUnits((100 / ethUsd!).toFixed(18), 18);
      probe = await probeBuySell({
        chain,
        router: config.contracts.universalRouter,
        quoter: config.contracts.v4Quoter,
        poolKey: { currency0: best.pool.currency0, currency1: best.pool.currency1, fee: best.pool.fee, tickSpacing: best.pool.tickSpacing, hooks: best.pool.hooks },
        token: address,
        quote: best.quote.address,
        quoteAmount: amount,
      }).catch((err: Error) => ({ ok: false, buyTaxBps: null, sellTaxBps: null, honeypot: false, reason: `simulation failed: ${err.message.slice(0, 200)}`, funded_by_overrides: true as const }));
      if (probe.honeypot) add("HONEYPOT", `buying works but selling fails (${probe.reason ?? "no output"})`);
      const tax = Math.max(probe.buyTaxBps ?? 0, probe.sellTaxBps ?? 0);
      if (tax >= 1000) add("SELL_TAX_HIGH", `measured transfer tax ${tax} bps`);
      else if (tax >= 10) add("TRANSFER_TAX", `measured transfer tax ${tax} bps`);
    }
    let creatorTaxBps = probe ? Math.max(probe.buyTaxBps ?? 0, probe.sellTaxBps ?? 0) : 0;
    let curveFeeBps: number | null = null;
    if (onCurve) {
      const fees = await chain.readContract({ address: config.contracts.launchpad, abi: launchpadAbi, functionName: "feeBps", args: [address] }).catch(() => null);
      if (fees) {
        curveFeeBps = Number(fees[0] + fees[2]);
        creatorTaxBps = Number(fees[1]);
        if (fees[1] > 0n) add("CREATOR_TAX", `the curve pays ${fees[1]} bps of each trade to the creator`);
      }
      add("CURVE_TOKEN", "trades on the launchpad bonding curve until it graduates");
    }
    if (impl && !stockBeacon) add("UPGRADEABLE", `behind a proxy: its code (now ${impl}) can be replaced`);
    if (!core && liquidity < 50_000 && venues.length > 0) add("LOW_LIQUIDITY", `about $${liquidity.toLocaleString("en-US")} of pool depth`);

    // Independent marks are market's rule (USDG $1, feeds, the partner token's USDG-pool TWAP).
    const basis = independentBasis(core);
    const twapPool = basis === "twap" ? deepestPool(pools, address, usdg.address) : null;
    const reference = core?.feed
      ? { source: "oracle", feed: core.feed }
      : twapPool
        ? { source: "twap", pool_id: twapPool.id, window_s: TWAP_WINDOW_S }
        : best
          ? // Market prices other pool tokens at the pool's mid: say so (not independent).
            { source: "spot", pool_id: best.pool.id }
          : onCurve
            ? { source: "curve", curve: config.contracts.launchpad }
            : { source: "none" };
    if (basis === null || (basis === "twap" && !twapPool)) add("NO_INDEPENDENT_MARK", `no oracle: priced from the ${reference.source === "none" ? "nothing" : reference.source}`);

    risks.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "severe" ? -1 : 1));
    const severe = risks.some((r) => r.severity === "severe" && r.code !== "NO_INDEPENDENT_MARK");
    const blockedReason = venues.length === 0 ? "NO_ROUTE" : probe?.honeypot ? "HONEYPOT" : paused ? "STOCK_PAUSED" : null;
    const tier = blockedReason ? "blocked" : core ? "A" : liquidity >= B_MIN_LIQUIDITY_USD && !severe && creatorTaxBps < 100 ? "B" : "C";
    if (tier === "C") warnings.push("Tier C: small trades only; expect thin liquidity or taxes.");
    if (blockedReason === "NO_ROUTE") warnings.push("No pool or curve trades this token: nothing can be built.");
    if (creatorTaxBps > 0) warnings.push(`Transfers lose about ${creatorTaxBps} bps to taxes or creator fees.`);

    return {
      address,
      symbol: symbol.status === "success" ? symbol.result : "",
      name: name.status === "success" ? name.result : "",
      decimals: decimals.result,
      kind,
      stock_beacon: stockBeacon,
      tier,
      tradable: tier !== "blocked",
      blocked_reason: blockedReason,
      venues,
      reference,
      liquidity_usd: liquidity,
      creator_tax_bps: creatorTaxBps,
      curve_fee_bps: curveFeeBps,
      multiplier,
      flags: { core: !!core, proxy: impl !== null, implementation: impl, paused, on_curve: onCurve },
      simulation: probe ? { ok: probe.ok, buy_tax_bps: probe.buyTaxBps, sell_tax_bps: probe.sellTaxBps, honeypot: probe.honeypot, reason: probe.reason, funded_by_overrides: true } : null,
      risks,
      limits: { max_trade_usd: TIER_LIMITS[tier as keyof typeof TIER_LIMITS] },
      warnings,
      screened_at: now(),
      screen_status: "SCREENED",
    } as TokenRecord;
  }

  async function store(rec: TokenRecord) {
    const clean = (s: string) => s.replace(/\u0000/g, "\uFFFD");
    await d.db.query(
      `INSERT INTO app.tokens (address, symbol, name, kind, tier, tradable, blocked_reason, risk_codes, implementation, record, screened_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (address) DO UPDATE SET symbol = $2, name = $3, kind = $4, tier = $5, tradable = $6, blocked_reason = $7, risk_codes = $8, implementation = $9, record = $10, screened_at = $11`,
      [rec.address.toLowerCase(), clean(rec.symbol), clean(rec.name), rec.kind, rec.tier, rec.tradable, rec.blocked_reason, rec.risks.map((r) => r.code), (rec.flags as { implementation: string | null }).implementation?.toLowerCase() ?? null, JSON.stringify(rec), rec.screened_at],
    );
    implChecked.set(rec.address.toLowerCase(), ((rec.flags as { implementation: Address | null }).implementation ?? "none") as Address | "none");
    records.set(rec.address.toLowerCase(), rec);
  }

  function startScreen(address: Address): Promise<TokenRecord> {
    const key = address.toLowerCase();
    const running = inflight.get(key);
    if (running) return running;
    if (queue.size >= SCREEN.maxWaiting) throw new Refusal("SCREEN_UNAVAILABLE", "no screening slot is free; retry shortly", {}, { retryAfterS: 5 });
    const job = queue
      .add(async () => {
        let rec: TokenRecord;
        try {
          rec = await screen(address);
        } catch (err) {
          if (err instanceof Refusal && (err.code === "NOT_A_TOKEN" || err.code === "UNKNOWN_TOKEN")) unreadable.set(key, err);
          throw err;
        }
        await store(rec);
        // Only a screen that completed spends the service's budget (peeked before it started).
        await budget.spend([{ key: "screenNew:overall", rule: overallRule() }]).catch(() => 0);
        return rec;
      })
      .finally(() => inflight.delete(key)) as Promise<TokenRecord>;
    inflight.set(key, job);
    job.catch(() => {});
    return job;
  }

  /** The stored record (undefined: never screened); 503 REGISTRY_UNAVAILABLE when the store does not answer. */
  async function loadRecord(key: string): Promise<TokenRecord | undefined> {
    let rows: { record: string }[];
    try {
      rows = await d.db.query<{ record: string }>("SELECT record FROM app.tokens WHERE address = $1", [key]);
    } catch {
      throw new Refusal("REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, { retryAfterS: 5 });
    }
    return rows[0] ? (JSON.parse(rows[0].record) as TokenRecord) : undefined;
  }

  const cached = async (address: Address): Promise<TokenRecord | null> => (await records.fetch(address.toLowerCase())) ?? null;

  /** TOKEN_CHANGED when a proxy's implementation moved since the screen (checked at most every 5 s). */
  async function assertUnchanged(rec: TokenRecord) {
    const key = rec.address.toLowerCase();
    const recorded = ((rec.flags as { implementation: Address | null }).implementation ?? "none").toString().toLowerCase();
    const current = (await implChecked.fetch(key))!;
    if (current.toLowerCase() !== recorded) {
      startScreen(rec.address);
      throw new Refusal("TOKEN_CHANGED", `the proxy's implementation changed (${recorded} -> ${current.toLowerCase()}); it is being re-screened`);
    }
  }

  function decorate(rec: TokenRecord, shield: boolean, report: ShieldReport | null) {
    const core = coreByAddress.get(rec.address.toLowerCase());
    const major = (core !== undefined && majors.has(core.symbol)) || rec.stock_beacon;
    const base = major ? MAJOR_TIERS[0]!.bps : OTHER_BPS;
    return { ...rec, fee_bps: base + (shield ? SHIELD_ADD_BPS : 0), fee_class: major ? "major" : "other", shield, ...(shield ? { report } : { shield_available: true }) };
  }

  async function shieldReport(address: Address): Promise<ShieldReport> {
    if (!d.shield) throw new Refusal("REPORT_UNAVAILABLE", "no Shield provider is configured; trade without Shield", {}, { retryAfterS: 15 });
    try {
      return await d.shield.verdict(config.chainId, address);
    } catch (err) {
      if (err instanceof ShieldUnavailable) throw new Refusal("REPORT_UNAVAILABLE", `${err.message}; retry after 15 s or trade without Shield`, {}, { retryAfterS: 15 });
      throw err;
    }
  }

  /** Shield's verdict for each row, eight asked at once; the first unreadable one refuses them all (503 REPORT_UNAVAILABLE). */
  function reportsFor(addresses: Address[]): Promise<ShieldReport[]> {
    const asking = new PQueue({ concurrency: 8 });
    return Promise.all(addresses.map((a) => asking.add(() => shieldReport(a))));
  }

  const overallRule = () => ({ burst: SCREEN.newOverallBurst, perSecond: SCREEN.newOverallPerSecond });

  /**
   * A token not yet seen spends the caller's budget now and the overall one once its screen
   * completes; either spent: 429 with Retry-After 60 (SPEC Limits).
   */
  async function spendNewScreenBudget(keyId: number) {
    const spent = (whose: string) => new Refusal("RATE_LIMITED", `${whose} budget of new-token screens is spent; retry after the pause`, { retry_after_s: 60 }, { retryAfterS: 60 });
    // The service's budget is peeked here and spent when the screen completes (a token that
    // cannot be read spends none of it); the caller's is spent now.
    if ((await budget.wait("screenNew:overall", overallRule())) > 0) throw spent("the service's");
    if ((await budget.spend([{ key: `screenNew:key:${keyId}`, rule: { burst: SCREEN.newPerCallerBurst, perSecond: SCREEN.newPerCallerPerSecond } }])) > 0) throw spent("your");
  }

  /**
   * Core assets are in the registry from the start: screened when the service is built, not when
   * someone first asks for one. Several instances on one store each seed (an upsert: the last
   * screen wins; all read the same chain). A core asset whose screen sees none of the pools the
   * universe lists for it was read before the indexer caught up: it is not stored (it would say
   * NO_ROUTE) but tried again, as is one the chain or the store did not answer.
   */
  const seededHere = new Set<string>();
  let seed: { run: Promise<boolean>; retryAt: number } | null = null;

  function indexedYet(t: TokenEntry, rec: TokenRecord): boolean {
    const listed = config.pools.some((p) => p.currency0.toLowerCase() === t.address.toLowerCase() || p.currency1.toLowerCase() === t.address.toLowerCase());
    return !listed || (rec.venues as { type: string }[]).some((v) => v.type === "v4-pool");
  }

  async function seedOne(t: TokenEntry) {
    try {
      const rec = await screen(t.address);
      if (!indexedYet(t, rec)) return;
      await store(rec);
      seededHere.add(t.address.toLowerCase());
    } catch {
      // The chain or the store did not answer: the next seed tries again.
    }
  }

  /** All core assets at once (a handful, fixed by config: they need no screening slot). */
  async function seedCore(): Promise<boolean> {
    await Promise.all([...coreByAddress.values()].filter((t) => !seededHere.has(t.address.toLowerCase())).map(seedOne));
    return seededHere.size === coreByAddress.size;
  }

  /** The seed, one at a time: true once every core record is stored. */
  function seeded(): Promise<boolean> {
    if (seed === null || performance.now() >= seed.retryAt) {
      const current = { run: Promise.resolve(false), retryAt: Infinity };
      current.run = seedCore().then((complete) => {
        // A complete seed never runs again; an incomplete one starts again for the first caller SEED.retryMs after it ended.
        if (!complete) current.retryAt = performance.now() + SEED.retryMs;
        return complete;
      });
      seed = current;
    }
    return seed.run;
  }

  /** A core asset the seed has not stored yet, as GET /tokens/<address> answers one still screening. */
  function unscreenedCore(t: TokenEntry): Record<string, unknown> & { address: Address } {
    return {
      address: t.address, symbol: t.symbol, name: t.name, decimals: t.decimals, kind: coreKind(t),
      screen_status: "UNSCREENED", tier: null, tradable: false, risks: [], warnings: ["This core asset's screen has not finished on this server: ask again in a few seconds."],
    };
  }

  async function countRegistry(): Promise<TokenCounts> {
    const at = d.clock();
    const q = <T>(sql: string) => d.db.query<T>(sql);
    const [totals] = await q<{ total: string; tradable: string }>("SELECT count(*)::text AS total, count(*) FILTER (WHERE tradable)::text AS tradable FROM app.tokens");
    const group = async (sql: string) => Object.fromEntries((await q<{ k: string; n: string }>(sql)).map((r) => [r.k, Number(r.n)]));
    return {
      at,
      body: {
        total: Number(totals!.total),
        tradable: Number(totals!.tradable),
        by_tier: await group("SELECT tier AS k, count(*)::text AS n FROM app.tokens GROUP BY tier"),
        by_kind: await group("SELECT kind AS k, count(*)::text AS n FROM app.tokens GROUP BY kind"),
        by_risk: await group("SELECT r AS k, count(*)::text AS n FROM app.tokens, unnest(risk_codes) AS r GROUP BY r"),
        blocked_by_reason: await group("SELECT blocked_reason AS k, count(*)::text AS n FROM app.tokens WHERE blocked_reason IS NOT NULL GROUP BY blocked_reason"),
        generated_at: Math.floor(at / 1000),
      },
    };
  }

  /** The latest counts; null while the first has not landed within waitMs; 503 REGISTRY_UNAVAILABLE when no count could be had. */
  async function counts(waitMs: number): Promise<TokenCounts | null> {
    try {
      return (await within(counted.fetch(seededHere.size === coreByAddress.size ? "seeded" : "early"), waitMs)) ?? null;
    } catch {
      throw new Refusal("REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, { retryAfterS: 5 });
    }
  }

  void seeded();

  return {
    resolve,
    queue,
    counts,
    /** GET /tokens/stats: the counts with their age; 503 STATS_PENDING until the first lands (answered if within 1 s). */
    async stats() {
      const c = await counts(1_000);
      if (!c) throw new Refusal("STATS_PENDING", "the first registry count is running", {}, { retryAfterS: 5 });
      return { ...c.body, cached_s: Math.floor((d.clock() - c.at) / 1000) };
    },
    /** Shield's verdict on a token; 503 REPORT_UNAVAILABLE without a provider or when unreadable. */
    report: shieldReport,
    async get(param: string, opts: { shield: boolean; keyId: number; clientAddr: string }) {
      const address = resolve(param);
      let rec = await cached(address);
      if (rec) {
        await assertUnchanged(rec);
      } else if (coreByAddress.has(address.toLowerCase())) {
        // Core assets come from config and are stored by the seed alone, which stores none read
        // before the indexer has its pools (it would say NO_ROUTE): until then, not screened yet.
        await within(seeded(), SEED.waitMs);
        rec = await cached(address);
        if (!rec) return { ...unscreenedCore(coreByAddress.get(address.toLowerCase())!), shield: opts.shield, ...(opts.shield ? { report: null } : { shield_available: true }) };
      } else {
        const known = unreadable.get(address.toLowerCase());
        if (known) throw known;
        await spendNewScreenBudget(opts.keyId);
        const job = startScreen(address);
        const timeout = new Promise<null>((r) => setTimeout(() => r(null), SCREEN.answerWithinMs).unref());
        rec = await Promise.race([job, timeout]);
        if (!rec) return { address, screen_status: "UNSCREENED", tier: null, tradable: false, risks: [], warnings: ["Screening is still running: ask again in a few seconds."], shield: opts.shield, ...(opts.shield ? { report: null } : { shield_available: true }) };
      }
      const report = opts.shield ? await shieldReport(address) : null;
      return decorate(rec, opts.shield, report);
    },

    /**
     * GET /tokens. With shield=1 every row carries Shield's report, core assets too: the provider's
     * verdict, as GET /tokens/<address>?shield=1 gives it (the server never writes a verdict of its
     * own). One unreadable verdict refuses the whole answer, 503 REPORT_UNAVAILABLE: a row without
     * its verdict would either vanish from the list or carry a report SPEC does not shape, and a
     * client filtering on verdicts must not read an absent one as verified.
     */
    async search(p: { q?: string; tier?: string; kind?: string; limit: number; shield: boolean }) {
      // A fresh server answers with its core records: wait (bounded) for the seed.
      await within(seeded(), SEED.waitMs);
      const where: string[] = [];
      const params: unknown[] = [];
      const warnings: string[] = [];
      let query: Record<string, unknown> = { q: p.q ?? null, tier: p.tier ?? null, kind: p.kind ?? null, limit: p.limit };
      const core = p.q ? config.tokens[p.q.toUpperCase()] : undefined;
      if (core && !/^0x/i.test(p.q!)) {
        params.push(core.address.toLowerCase());
        where.push(`address = $${params.length}`);
        const [{ n }] = (await d.db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.tokens WHERE lower(symbol) = lower($1) AND address <> $2", [core.symbol, core.address.toLowerCase()])) as [{ n: string }];
        query = { ...query, core_symbol: core.symbol, others_with_symbol: Number(n) };
        if (Number(n) > 0) warnings.push(`${n} other token(s) also call themselves ${core.symbol}; only ${core.address} is the core asset.`);
      } else if (p.q && /^0x[0-9a-fA-F]{0,40}$/.test(p.q)) {
        params.push(`${p.q.toLowerCase()}%`);
        where.push(`address LIKE $${params.length}`);
      } else if (p.q) {
        params.push(`%${p.q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
        where.push(`(lower(symbol) LIKE $${params.length} OR lower(name) LIKE $${params.length})`);
      }
      if (p.tier) (params.push(p.tier), where.push(`tier = $${params.length}`));
      if (p.kind) (params.push(p.kind), where.push(`kind = $${params.length}`));
      params.push(p.limit);
      const rows = await d.db
        .query<{ record: string }>(`SELECT record FROM app.tokens ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY (tier = 'blocked'), tier, lower(symbol), address LIMIT $${params.length}`, params)
        .catch(() => {
          throw new Refusal("REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, { retryAfterS: 5 });
        });
      const found: (Record<string, unknown> & { address: Address })[] = rows.map((r) => JSON.parse(r.record) as TokenRecord);
      // A core symbol always finds its asset, screened or not yet.
      if (core && !/^0x/i.test(p.q!) && found.length === 0 && !p.tier && (!p.kind || p.kind === coreKind(core))) {
        found.push(unscreenedCore(core));
        warnings.push(`${core.symbol}'s screen has not finished on this server; its record is not complete yet.`);
      }
      const reports = p.shield ? await reportsFor(found.map((r) => r.address)) : null;
      const tokens = found.map((r, i) =>
        r.screen_status === "UNSCREENED" ? { ...r, shield: p.shield, ...(reports ? { report: reports[i] } : { shield_available: true }) } : decorate(r as TokenRecord, p.shield, reports?.[i] ?? null),
      );
      return { query, tokens, count: tokens.length, warnings, shield: p.shield };
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
