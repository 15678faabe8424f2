import PQueue from "p-queue";
import { LRUCache } from "lru-cache";
import { getAddress, isAddress, parseUnits, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { erc20Abi } from "../abis/erc20.js";
import { beaconAbi, launchpadAbi, partnerAgentVaultAbi, stockTokenAbi } from "../abis/fixtures.js";
import type { Config, TokenEntry } from "../lib/config.js";
import { OTHER_BPS, MAJOR_TIERS, SHIELD_ADD_BPS, majorSymbols } from "../lib/fees.js";
import { RISKS, type RiskCode } from "../lib/risks.js";
import { Q96 } from "../lib/v4.js";
import { ApiError } from "./errors.js";
import type { SqlIndexedReads, PoolState } from "./indexed.js";
import { RateLimiter } from "./rateLimit.js";
import { ShieldUnavailable, type ShieldProvider, type ShieldReport } from "./shield.js";
import { probeBuySell, type Probe } from "./simulateTrade.js";
import type { Db } from "./store/db.js";

const IMPL_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const BEACON_SLOT = "0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50";
/** Screening: two at a time, four waiting; beyond that 503 SCREEN_UNAVAILABLE. */
export const SCREEN = { concurrency: 2, maxWaiting: 4, answerWithinMs: 8_000, newPerCallerBurst: 20, newPerCallerPerSecond: 1 / 60, implCheckTtlMs: 5_000 };
export const TIER_LIMITS = { A: 10_000, B: 2_500, C: 500, blocked: 0 } as const;
const B_MIN_LIQUIDITY_USD = 250_000;

export type Risk = { code: RiskCode; severity: "severe" | "info"; detail: string };
export type TokenRecord = Record<string, unknown> & { address: Address; symbol: string; name: string; kind: string; tier: string; stock_beacon: boolean; risks: Risk[] };

type Deps = { db: Db; config: Config; chain: PublicClient; indexed: SqlIndexedReads; shield: ShieldProvider | null; limiter: RateLimiter; clock: () => number };

const poolVenue = (p: PoolState) => ({ type: "v4-pool", pool_id: p.id, currency0: p.currency0, currency1: p.currency1, fee: p.fee, tick_spacing: p.tickSpacing, hooks: p.hooks });

const asAddress = (slotValue: Hex | undefined): Address | null => {
  if (!slotValue || /^0x0*$/.test(slotValue)) return null;
  return getAddress(`0x${slotValue.slice(-40)}`);
};

/**
 * The token registry (app store) and on-demand screening. Symbols and names are deployer text:
 * stored and returned exactly as read (the record is kept as JSON text so even NUL survives),
 * never interpreted here.
 */
export function createTokens(d: Deps) {
  const { config, chain } = d;
  const coreByAddress = new Map(Object.values(config.tokens).map((t) => [t.address.toLowerCase(), t] as const));
  const usdg = config.tokens.USDG!;
  const majors = new Set(majorSymbols(config.tokens));
  const queue = new PQueue({ concurrency: SCREEN.concurrency });
  const inflight = new Map<string, Promise<TokenRecord>>();
  const implChecked = new LRUCache<string, Address | "none">({ max: 50_000, ttl: SCREEN.implCheckTtlMs });
  // Screened records in memory (a re-screen here replaces its entry; other instances see it
  // within the TTL, the same window as the implementation check).
  const records = new LRUCache<string, TokenRecord>({ max: 20_000, ttl: SCREEN.implCheckTtlMs });
  // The new-token screening budget guards the chain and the queue: on even when request limits are off.
  const budget = new RateLimiter(d.clock, 100_000, true);
  const now = () => Math.floor(d.clock() / 1000);

  /** A core symbol or a 0x address; any other symbol must be given by address. */
  function resolve(param: string): Address {
    const core = config.tokens[param.toUpperCase()];
    if (core && !/^0x/i.test(param)) return core.address;
    if (/^0x[0-9a-fA-F]{40}$/.test(param) && isAddress(param, { strict: false })) return getAddress(param);
    if (/^[A-Za-z0-9.$_-]{1,32}$/.test(param)) throw new ApiError(400, "ADDRESS_REQUIRED", `${param} is not a core symbol: name the token by its 0x address`);
    throw new ApiError(400, "BAD_REQUEST", "a token is a core symbol or a 0x address");
  }

  async function implementationOf(address: Address): Promise<{ impl: Address | null; beacon: Address | null }> {
    const [implSlot, beaconSlot] = await Promise.all([chain.getStorageAt({ address, slot: IMPL_SLOT }), chain.getStorageAt({ address, slot: BEACON_SLOT })]);
    const beacon = asAddress(beaconSlot);
    if (beacon) {
      const impl = await chain.readContract({ address: beacon, abi: beaconAbi, functionName: "implementation" }).catch(() => null);
      return { impl: impl ? getAddress(impl) : null, beacon };
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
    const pools = await d.indexed.poolsOf(t.address).catch(() => [] as PoolState[]);
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
    if (!code || code === "0x") throw new ApiError(404, "NOT_A_TOKEN", `${address} has no contract code on chain ${config.chainId}`);
    const [name, symbol, decimals, supply] = await chain.multicall({
      contracts: [
        { address, abi: erc20Abi, functionName: "name" },
        { address, abi: erc20Abi, functionName: "symbol" },
        { address, abi: erc20Abi, functionName: "decimals" },
        { address, abi: erc20Abi, functionName: "totalSupply" },
      ] as const,
      allowFailure: true,
    });
    if (decimals.status !== "success" || supply.status !== "success") throw new ApiError(404, "NOT_A_TOKEN", `${address} does not answer decimals() and totalSupply() like an ERC-20`);
    if (name.status !== "success" && symbol.status !== "success") throw new ApiError(404, "UNKNOWN_TOKEN", `${address} gives neither name nor symbol: unknown token`);
    const core = coreByAddress.get(address.toLowerCase());
    const { impl, beacon } = await implementationOf(address);
    const stockBeacon = beacon !== null && beacon.toLowerCase() === config.contracts.stockBeacon.toLowerCase();
    const risks: Risk[] = [];
    const warnings: string[] = [];
    const add = (c: RiskCode, detail: string) => risks.push({ code: c, severity: RISKS[c], detail });

    let paused = false;
    let multiplier: number | null = null;
    if (stockBeacon) {
      paused = await chain.readContract({ address, abi: stockTokenAbi, functionName: "paused" }).catch(() => false);
      multiplier = Number(await chain.readContract({ address, abi: stockTokenAbi, functionName: "uiMultiplier" }).catch(() => 10n ** 18n)) / 1e18;
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

    const pools = await d.indexed.poolsOf(address).catch(() => [] as PoolState[]);
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

    const reference = core?.feed
      ? { source: "oracle", feed: core.feed }
      : best
        ? { source: "twap", pool_id: best.pool.id, window_s: 1800 }
        : onCurve
          ? { source: "curve", curve: config.contracts.launchpad }
          : { source: "none" };
    if (!core?.feed && reference.source !== "oracle") add("NO_INDEPENDENT_MARK", `no oracle: priced from the ${reference.source === "none" ? "nothing" : reference.source}`);

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
    if (queue.size >= SCREEN.maxWaiting) throw new ApiError(503, "SCREEN_UNAVAILABLE", "no screening slot is free; retry shortly", {}, 5);
    const job = queue
      .add(async () => {
        const rec = await screen(address);
        await store(rec);
        return rec;
      })
      .finally(() => inflight.delete(key)) as Promise<TokenRecord>;
    inflight.set(key, job);
    job.catch(() => {});
    return job;
  }

  async function cached(address: Address): Promise<TokenRecord | null> {
    const hit = records.get(address.toLowerCase());
    if (hit) return hit;
    let rows: { record: string }[];
    try {
      rows = await d.db.query<{ record: string }>("SELECT record FROM app.tokens WHERE address = $1", [address.toLowerCase()]);
    } catch {
      throw new ApiError(503, "REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, 5);
    }
    if (!rows[0]) return null;
    const rec = JSON.parse(rows[0].record) as TokenRecord;
    records.set(address.toLowerCase(), rec);
    return rec;
  }

  /** TOKEN_CHANGED when a proxy's implementation moved since the screen (checked at most every 5 s). */
  async function assertUnchanged(rec: TokenRecord) {
    const key = rec.address.toLowerCase();
    const recorded = ((rec.flags as { implementation: Address | null }).implementation ?? "none").toString().toLowerCase();
    let current = implChecked.get(key);
    if (current === undefined) {
      const { impl } = await implementationOf(rec.address);
      current = impl ?? "none";
      implChecked.set(key, current);
    }
    if (current.toLowerCase() !== recorded) {
      startScreen(rec.address);
      throw new ApiError(409, "TOKEN_CHANGED", `the proxy's implementation changed (${recorded} -> ${current.toLowerCase()}); it is being re-screened`);
    }
  }

  function decorate(rec: TokenRecord, shield: boolean, report: ShieldReport | null) {
    const core = coreByAddress.get(rec.address.toLowerCase());
    const major = (core !== undefined && majors.has(core.symbol)) || rec.stock_beacon;
    const base = major ? MAJOR_TIERS[0]!.bps : OTHER_BPS;
    return { ...rec, fee_bps: base + (shield ? SHIELD_ADD_BPS : 0), fee_class: major ? "major" : "other", shield, ...(shield ? { report } : { shield_available: true }) };
  }

  async function shieldReport(address: Address): Promise<ShieldReport> {
    if (!d.shield) throw new ApiError(503, "REPORT_UNAVAILABLE", "no Shield provider is configured; trade without Shield", {}, 15);
    try {
      return await d.shield.verdict(config.chainId, address);
    } catch (err) {
      if (err instanceof ShieldUnavailable) throw new ApiError(503, "REPORT_UNAVAILABLE", `${err.message}; retry after 15 s or trade without Shield`, {}, 15);
      throw err;
    }
  }

  return {
    resolve,
    queue,
    /** Shield's verdict on a token; 503 REPORT_UNAVAILABLE without a provider or when unreadable. */
    report: shieldReport,
    async get(param: string, opts: { shield: boolean; keyId: number; clientAddr: string }) {
      const address = resolve(param);
      let rec = await cached(address);
      if (rec) {
        await assertUnchanged(rec);
      } else {
        // Core assets come from config: they never spend a caller's budget.
        const wait = coreByAddress.has(address.toLowerCase()) ? 0 : budget.take(`screenNew:key:${opts.keyId}`, { burst: SCREEN.newPerCallerBurst, perSecond: SCREEN.newPerCallerPerSecond });
        if (wait > 0) throw new ApiError(429, "RATE_LIMITED", "your budget of new-token screens is spent; retry after the pause", { retry_after_s: 60 }, 60);
        const job = startScreen(address);
        const timeout = new Promise<null>((r) => setTimeout(() => r(null), SCREEN.answerWithinMs).unref());
        rec = await Promise.race([job, timeout]);
        if (!rec) return { address, screen_status: "UNSCREENED", tier: null, tradable: false, risks: [], warnings: ["Screening is still running: ask again in a few seconds."], shield: opts.shield, ...(opts.shield ? { report: null } : { shield_available: true }) };
      }
      const report = opts.shield ? await shieldReport(address) : null;
      return decorate(rec, opts.shield, report);
    },

    async search(p: { q?: string; tier?: string; kind?: string; limit: number; shield: boolean }) {
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
          throw new ApiError(503, "REGISTRY_UNAVAILABLE", "the token registry did not answer", {}, 5);
        });
      const tokens = rows.map((r) => decorate(JSON.parse(r.record) as TokenRecord, false, null));
      return { query, tokens, count: tokens.length, warnings, shield: p.shield };
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
