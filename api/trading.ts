import { getAddress, maxUint160, parseUnits, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { erc20Abi } from "../abis/erc20.js";
import { launchpadAbi, sanctionsListAbi, stockRegistryAbi, stockTokenAbi } from "../abis/fixtures.js";
import { multicall3Abi } from "../abis/multicall3.js";
import { permit2Abi } from "../abis/permit2.js";
import type { Config } from "../lib/config.js";
import { feeFor, majorSymbols, type FeeClass } from "../lib/fees.js";
import { ApiError, parseBody, rpc } from "./errors.js";
import { createRevoke } from "./revoke.js";
import { approvalPlan } from "./approvals.js";
import type { PoolState, SqlIndexedReads } from "./indexed.js";
import { createMarket, type Mark } from "./market.js";
import {
  buildApprove,
  buildBatch,
  buildCurveSwap,
  buildFeeTransfer,
  buildRouterSwap,
  describeCurveCall,
  describeRouterCall,
  type FeeSpec,
  type PermitSingle,
  type PlanTx,
  type Step,
} from "./plans.js";
import { evaluatePolicy, LIMITS, risk, SHIELD_POLICIES, type PolicyResult, type Risk } from "./policy.js";
import { BUILDABLE_VENUES, candidateRoutes, CURVE_VENUE, GAS, quoteCall, readQuote, routeFeeBps, routeMidAtoms, type Route, type RouteQuote } from "./routing.js";
import type { ShieldReport } from "./shield.js";
import { balanceOverride, findBalanceSlot, simulatePlan, type Override, type PlanSimulation } from "./simulateTrade.js";
import type { Tokens, TokenRecord } from "./tokens.js";
import { createLedger, type TokenRef } from "./trades.js";
import type { Db } from "./store/db.js";
import type { KeyRecord } from "./signin.js";

/** Aggregators quoted for comparison only (never built: QUOTE_ONLY). */
export const AGGREGATOR_VENUES = ["zeroex", "oneinch", "odos"] as const;
const EIP7702_PREFIX = "0xef0100";
/** A pair's winning route is tried alone by `fast` quotes for this long. */
const WINNER_TTL_MS = 60_000;

const atoms = z.string().regex(/^\d{1,78}$/, "must be a decimal string of atoms");
const bps = z.number().int().min(0).max(10_000);
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const tradeFields = {
  wallet: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x address").optional(),
  token_in: z.string().min(1).max(64),
  token_out: z.string().min(1).max(64),
  notional_usd: z.number().positive().finite().optional(),
  amount_in: atoms.optional(),
  slippage_bps: bps.optional(),
  min_amount_out: atoms.optional(),
  accept_risks: z.array(z.string().max(64)).max(32).default([]),
  shield: z.boolean().default(false),
  policies: z.array(z.string().max(64)).max(8).default([]),
  approval_mode: z.string().max(32).default("budget"),
  approval_budget_usd: z.number().finite().default(LIMITS.defaultApprovalBudgetUsd),
  allow_unlimited_approval: z.boolean().default(false),
  permit_mode: z.enum(["signature", "transaction"]).default("signature"),
  permit_scope: z.enum(["trade", "30d"]).default("trade"),
  permit_signature: hex.optional(),
  permit_now: z.number().int().positive().optional(),
  route_id: z.string().max(400).optional(),
  venues: z.array(z.string().max(32)).max(8).optional(),
  fund: z.union([z.literal("auto"), z.boolean()]).default("auto"),
  curve_fee_mode: z.enum(["auto", "batch", "two_step"]).default("auto"),
  owner_attests_non_us: z.boolean().default(false),
  action: z.enum(["trade", "revoke"]).default("trade"),
  max_fee_bps: bps.optional(),
  mode: z.enum(["later", "first"]).default("later"),
  fast: z.boolean().default(false),
};
export const tradeRequest = z.object(tradeFields).strict();
export type TradeRequest = z.infer<typeof tradeRequest>;

/** Parses a trading body: FEE_FIXED before anything else, then every field's rule. */
export function parseTradeRequest(body: Record<string, unknown>): TradeRequest {
  if ("fee_bps" in body) throw new ApiError(422, "FEE_FIXED", "the server sets the fee; send max_fee_bps to cap it");
  const r = parseBody(tradeRequest, body);
  if ((r.notional_usd === undefined) === (r.amount_in === undefined)) throw new ApiError(400, "BAD_REQUEST", "send exactly one of notional_usd or amount_in");
  if (r.amount_in !== undefined && BigInt(r.amount_in) === 0n) throw new ApiError(400, "BAD_REQUEST", "amount_in must be above 0");
  for (const pol of r.policies) if (!(SHIELD_POLICIES as readonly string[]).includes(pol)) throw new ApiError(400, "BAD_REQUEST", `unknown policy ${pol}; known: ${SHIELD_POLICIES.join(", ")}`);
  if (r.policies.length && !r.shield) throw new ApiError(400, "BAD_REQUEST", "policies apply with shield true");
  if ((r.permit_signature === undefined) !== (r.permit_now === undefined)) throw new ApiError(400, "BAD_REQUEST", "permit_signature and permit_now come together (the second call of the permit round trip)");
  const known = [...BUILDABLE_VENUES, ...AGGREGATOR_VENUES] as readonly string[];
  for (const v of r.venues ?? []) if (!known.includes(v)) throw new ApiError(400, "BAD_REQUEST", `unknown venue ${v}; known: ${known.join(", ")}`);
  return r;
}

/** A side of the trade as the service sees it. */
export type TokenInfo = {
  param: string;
  /** As named (ETH = 0x0, WETH its contract). */
  address: Address;
  /** As pools hold it (WETH trades as native ETH). */
  currency: Address;
  symbol: string;
  name: string;
  decimals: number;
  core: boolean;
  major: boolean;
  stock: boolean;
  feed: boolean;
  record: TokenRecord | null;
  tierLimitUsd: number;
};

type Deps = {
  config: Config;
  chain: PublicClient;
  indexed: SqlIndexedReads;
  db: Db;
  tokens: Tokens;
  clock: () => number;
  aggregators?: Partial<Record<(typeof AGGREGATOR_VENUES)[number], string>>;
};

type Who = { key: KeyRecord; clientAddr: string };
type Kind = "quote" | "build" | "prepare" | "simulate";

const lc = (a: string) => a.toLowerCase();
const bpsOf = (a: bigint, b: bps) => (a * BigInt(b)) / 10_000n;
type bps = number;

/**
 * Quote, build, prepare and simulate: one pipeline with clear stages (tokens, fee, routes and
 * quotes, policy, plan, simulation) whose reads of the chain go out as one multicall.
 */
export function createTrading(d: Deps) {
  const { config, chain } = d;
  const market = createMarket({ config, indexed: d.indexed, clock: d.clock });
  const ledger = createLedger({ db: d.db, indexed: d.indexed, clock: d.clock });
  const majors = new Set(majorSymbols(config.tokens));
  const now = () => Math.floor(d.clock() / 1000);
  const c = config.contracts;
  const weth = config.tokens.WETH!.address;
  /** 30-day volume per wallet, reused for a minute. */
  const volumes = new LRUCache<string, number>({ max: 50_000, ttl: 60_000, perf: { now: d.clock } });
  /** The last winning route per pair (quote `fast`). */
  const winners = new LRUCache<string, string>({ max: 10_000, ttl: WINNER_TTL_MS, perf: { now: d.clock } });

  /** A core symbol or an address; a trade naming another symbol is TOKEN_NOT_ALLOWED. */
  function resolveTradeToken(param: string): Address {
    try {
      return d.tokens.resolve(param);
    } catch (err) {
      if (err instanceof ApiError && err.code === "ADDRESS_REQUIRED") throw new ApiError(422, "TOKEN_NOT_ALLOWED", `${param} is not a core symbol: name the token by its 0x address`);
      throw err;
    }
  }

  async function tokenInfo(param: string, who: Who | null): Promise<TokenInfo> {
    const address = resolveTradeToken(param);
    const core = market.core(address);
    let record: TokenRecord | null = null;
    if (!core?.native) {
      try {
        record = (await d.tokens.get(address, { shield: false, keyId: who?.key.keyId ?? 0, clientAddr: who?.clientAddr ?? "quote" })) as TokenRecord;
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) throw new ApiError(422, "TOKEN_UNKNOWN", `${param}: ${err.message}`);
        if (err instanceof ApiError) throw err;
        throw new ApiError(502, "RPC_UNAVAILABLE", `the chain RPC did not answer while screening ${param}`, {}, 2);
      }
      if (record.screen_status === "UNSCREENED") throw new ApiError(503, "SCREEN_UNAVAILABLE", `${address} is still being screened; retry in a few seconds`, {}, 5);
    }
    const limit = (record?.limits as { max_trade_usd?: number } | undefined)?.max_trade_usd;
    return {
      param,
      address: core ? core.address : address,
      currency: core && (core.native || core.kind === "wrapped") ? zeroAddress : address,
      symbol: core?.symbol ?? record?.symbol ?? "",
      name: core?.name ?? record?.name ?? "",
      decimals: core?.decimals ?? (record?.decimals as number),
      core: !!core,
      major: (core !== undefined && majors.has(core.symbol)) || record?.stock_beacon === true,
      stock: core?.kind === "stock" || record?.stock_beacon === true,
      feed: !!core?.feed,
      record,
      // A blocked tier has no size limit of its own: its severe risks or NO_ROUTE refuse it.
      tierLimitUsd: limit && limit > 0 ? limit : LIMITS.maxNotionalUsd,
    };
  }

  const ref = (t: TokenInfo): TokenRef => ({ token: t.core ? t.symbol : lc(t.address), address: t.address, symbol: t.symbol, name: t.name, decimals: t.decimals });

  /** A refused call's side as the request named it: complete for core assets, the address otherwise. */
  function refOfParam(param: unknown): TokenRef | null {
    if (typeof param !== "string") return null;
    const core = config.tokens[param.toUpperCase()] ?? market.core(param as Address);
    if (core && (!/^0x/i.test(param) || /^0x[0-9a-fA-F]{40}$/.test(param))) return { token: core.symbol, address: core.address, symbol: core.symbol, name: core.name, decimals: core.decimals };
    return /^0x[0-9a-fA-F]{40}$/.test(param) ? { token: lc(param), address: getAddress(param), symbol: null, name: null, decimals: null } : { token: param, address: null, symbol: null, name: null, decimals: null };
  }

  /** 30-day volume through the service, major side of each mined trade, at today's marks. */
  async function volume30d(wallet: Address): Promise<number> {
    const hit = volumes.get(lc(wallet));
    if (hit !== undefined) return hit;
    const since = now() - 30 * 86_400;
    const ours = await d.db.query<{ tx_hash: string }>("SELECT tx_hash FROM app.trades WHERE wallet = $1 AND status = 'pending' AND created_at >= $2 AND tx_hash IS NOT NULL", [lc(wallet), since]);
    let usd = 0;
    if (ours.length) {
      const rows = await d.indexed.tradesByHashes(ours.map((r) => r.tx_hash as Hex));
      for (const t of rows) {
        if (t.status !== "success") continue;
        for (const [token, amount] of [[t.tokenIn, t.amountIn], [t.tokenOut, t.amountOut]] as const) {
          const core = token ? market.core(token) : undefined;
          if (!core || !majors.has(core.symbol) || amount === null) continue;
          const m = await market.mark(core.address);
          if (m) {
            usd += (Number(amount) / 10 ** core.decimals) * m.usd;
            break;
          }
        }
      }
    }
    volumes.set(lc(wallet), usd);
    return usd;
  }

  /** The fee side: the more liquid, marked token of the pair (ETH/WETH/USDG, then oracle-marked majors, then other core, then the rest); input on a tie. */
  const rank = (t: TokenInfo) => (t.currency === zeroAddress || t.symbol === "USDG" && t.core ? 3 : t.core && t.feed ? 2 : t.core ? 1 : 0);

  /** Shield's verdicts on the address-named sides (core assets get none). */
  async function shieldReports(tokens: TokenInfo[]): Promise<Record<string, ShieldReport>> {
    const out: Record<string, ShieldReport> = {};
    for (const t of tokens.filter((x) => !x.core)) out[lc(t.address)] = await d.tokens.report(t.address);
    return out;
  }

  async function aggregatorRow(venue: (typeof AGGREGATOR_VENUES)[number], tin: TokenInfo, tout: TokenInfo, amountIn: bigint) {
    const base = { id: venue, venue, label: `${venue} (comparison only)`, quote_only: true };
    const url = d.aggregators?.[venue];
    if (!url) return { ...base, ok: false, amount_out: null, error: "not configured on this server" };
    try {
      const res = await fetch(`${url.replace(/\/$/, "")}/quote?chainId=${config.chainId}&sellToken=${tin.address}&buyToken=${tout.address}&sellAmount=${amountIn}`, { signal: AbortSignal.timeout(1_500) });
      const body = (await res.json()) as { buyAmount?: string; gas?: string };
      if (res.status !== 200 || !body.buyAmount || !/^\d+$/.test(body.buyAmount)) throw new Error(`answered ${res.status}`);
      return { ...base, ok: true, amount_out: body.buyAmount, gas: body.gas ? Number(body.gas) : null, error: null };
    } catch (err) {
      return { ...base, ok: false, amount_out: null, error: `unavailable: ${(err as Error).message.slice(0, 120)}` };
    }
  }

  /** Stages shared by every kind: tokens, size, fee, candidate routes, one multicall, ranking, policy. */
  async function evaluate(r: TradeRequest, kind: Kind, who: Who | null, wallet: Address | null, synthetic = false) {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    const mark = (name: string, from: number) => (timings[name] = Math.round((performance.now() - from) * 100) / 100);
    const [tin, tout] = await Promise.all([tokenInfo(r.token_in, who), tokenInfo(r.token_out, who)]);
    if (lc(tin.address) === lc(tout.address)) throw new ApiError(422, "SAME_TOKEN", "token_in and token_out are the same token");
    if (tin.currency === zeroAddress && tout.currency === zeroAddress) throw new ApiError(422, "NO_ROUTE", "ETH and WETH are the same asset: wrap or unwrap with WETH9 directly");
    mark("tokens_ms", t0);

    const t1 = performance.now();
    const venues = (r.venues ?? [...BUILDABLE_VENUES]).filter((v) => (BUILDABLE_VENUES as readonly string[]).includes(v));
    const aggregators = (r.venues ?? []).filter((v): v is (typeof AGGREGATOR_VENUES)[number] => (AGGREGATOR_VENUES as readonly string[]).includes(v));
    const indexedPools = await rpc(market.pools());
    // Pools the universe names but the indexer has not seen yet: quotable, mid unknown.
    const pools: PoolState[] = [...indexedPools];
    for (const p of config.pools) {
      if (!pools.some((x) => lc(x.id) === lc(p.id))) pools.push({ id: p.id, currency0: p.currency0, currency1: p.currency1, fee: p.fee, tickSpacing: p.tickSpacing, hooks: p.hooks, sqrtPriceX96: 0n, priceX96: 0n, tick: 0, liquidity: 1n, swaps: 0, block: 0, timestamp: 0 });
    }
    const curveSide = [tin, tout].find((t) => !t.core && (t.record?.flags as { on_curve?: boolean } | undefined)?.on_curve);
    const curveRow = curveSide ? await d.indexed.curveToken(curveSide.address).catch(() => null) : null;
    let routes = candidateRoutes({
      pools,
      currencyIn: tin.currency,
      currencyOut: tout.currency,
      connectors: [config.tokens.USDG!.address, zeroAddress],
      venues,
      // The indexer may not have seen a brand-new curve yet: the chain's own reading (in the
      // multicall) decides graduation and the snipe window.
      curveToken: curveSide && !curveRow?.graduated ? curveSide.address : null,
    });
    if (curveSide && routes.length === 0) {
      if (curveRow?.graduated) throw new ApiError(422, "CURVE_GRADUATED", `${curveSide.symbol} has graduated from the launchpad curve and has no pool yet`);
      if (tin.currency !== zeroAddress && tout.currency !== zeroAddress) throw new ApiError(422, "CURVE_PAIR", `${curveSide.symbol} trades on its launchpad curve only against ETH`);
    }
    if (r.route_id !== undefined) {
      if ((AGGREGATOR_VENUES as readonly string[]).includes(r.route_id) && kind !== "quote") throw new ApiError(422, "QUOTE_ONLY", `${r.route_id} is quoted for comparison only; it is never built`);
      routes = routes.filter((x) => x.id === r.route_id);
      if (!routes.length) throw new ApiError(422, "NO_ROUTE", `route ${r.route_id} is not among the current routes for this pair`);
    }
    // fast: quote the pair's recent winner alone when it is still a candidate (one quote, not all).
    const pair = `${lc(tin.address)}>${lc(tout.address)}`;
    const recent = winners.get(pair);
    const fastHit = r.fast && r.route_id === undefined && recent !== undefined && routes.some((x) => x.id === recent);
    if (fastHit) routes = routes.filter((x) => x.id === recent);
    if (!routes.length) throw new ApiError(422, "NO_ROUTE", `no venue trades ${tin.symbol || tin.address} for ${tout.symbol || tout.address}`);

    // Marks, size, fee.
    const [markIn, markOut, markEth] = await rpc(Promise.all([market.mark(tin.address, tin.decimals), market.mark(tout.address, tout.decimals), market.mark(zeroAddress)]));
    let amountIn: bigint;
    if (r.amount_in !== undefined) amountIn = BigInt(r.amount_in);
    else {
      if (!markIn) throw new ApiError(503, "NO_MARK", `no price for ${tin.symbol || tin.address}: send amount_in instead of notional_usd`, {}, 5);
      amountIn = parseUnits((r.notional_usd! / markIn.usd).toFixed(tin.decimals), tin.decimals);
      if (amountIn === 0n) throw new ApiError(422, "MIN_NOTIONAL", "the trade rounds to zero atoms");
    }
    const feeClass: FeeClass = tin.major && tout.major ? "major" : "other";
    // The tier is the key's wallet's, for quotes too (a quote's fee is the fee its prepare gets).
    const tierWallet = (synthetic ? null : wallet) ?? who?.key.wallet ?? null;
    const volume = tierWallet && feeClass === "major" ? await volume30d(tierWallet) : 0;
    const fee = feeFor({ feeClass, volume30dUsd: volume, shield: r.shield });
    const isCurve = (x: Route) => x.venue === CURVE_VENUE;
    const feeSide: "input" | "output" = routes.every(isCurve) ? (tin.currency === zeroAddress ? "input" : "output") : rank(tin) >= rank(tout) ? "input" : "output";
    const feeToken = feeSide === "input" ? tin : tout;
    const inputFee = feeSide === "input" ? bpsOf(amountIn, fee.bps) : 0n;
    const swapIn = amountIn - inputFee;
    mark("routes_ms", t1);

    // One multicall: every route's quote, the base fee, and the wallet's state.
    const t2 = performance.now();
    const calls: { key: string; call: any }[] = routes.map((x) => ({ key: `q:${x.id}`, call: quoteCall(x, swapIn, { v4Quoter: c.v4Quoter, launchpad: c.launchpad }) }));
    calls.push({ key: "basefee", call: { address: c.multicall3, abi: multicall3Abi, functionName: "getBasefee" } });
    calls.push({ key: "time", call: { address: c.multicall3, abi: multicall3Abi, functionName: "getCurrentBlockTimestamp" } });
    calls.push({ key: "block", call: { address: c.multicall3, abi: multicall3Abi, functionName: "getBlockNumber" } });
    if (curveSide) {
      calls.push({ key: "curve", call: { address: c.launchpad, abi: launchpadAbi, functionName: "curves", args: [curveSide.address] } });
      calls.push({ key: "curveFees", call: { address: c.launchpad, abi: launchpadAbi, functionName: "feeBps", args: [curveSide.address] } });
      calls.push({ key: "graduation", call: { address: c.launchpad, abi: launchpadAbi, functionName: "graduationWei" } });
    }
    const stocks = [tin, tout].filter((t) => t.stock);
    for (const s of stocks) calls.push({ key: `paused:${lc(s.address)}`, call: { address: s.address, abi: stockTokenAbi, functionName: "paused" } });
    if (stocks.length) calls.push({ key: "registryPaused", call: { address: c.stockRegistry, abi: stockRegistryAbi, functionName: "paused" } });
    if (wallet) {
      calls.push({ key: "sanctioned", call: { address: c.sanctionsList, abi: sanctionsListAbi, functionName: "isSanctioned", args: [wallet] } });
      calls.push({ key: "eth", call: { address: c.multicall3, abi: multicall3Abi, functionName: "getEthBalance", args: [wallet] } });
      for (const t of [tin, tout]) if (t.address !== zeroAddress) calls.push({ key: `bal:${lc(t.address)}`, call: { address: t.address, abi: erc20Abi, functionName: "balanceOf", args: [wallet] } });
      if (tin.address !== zeroAddress) {
        calls.push({ key: "allowPermit2", call: { address: tin.address, abi: erc20Abi, functionName: "allowance", args: [wallet, c.permit2] } });
        calls.push({ key: "allowCurve", call: { address: tin.address, abi: erc20Abi, functionName: "allowance", args: [wallet, c.launchpad] } });
        calls.push({ key: "permit2", call: { address: c.permit2, abi: permit2Abi, functionName: "allowance", args: [wallet, tin.address, c.universalRouter] } });
      }
      if (stocks.length) calls.push({ key: "walletBlocked", call: { address: c.stockRegistry, abi: stockRegistryAbi, functionName: "isBlocked", args: [wallet] } });
    }
    const [results, walletCode, aggRows] = await Promise.all([
      rpc(chain.multicall({ contracts: calls.map((x) => x.call), allowFailure: true })),
      wallet && curveSide ? rpc(chain.getCode({ address: wallet })) : Promise.resolve(undefined),
      Promise.all(aggregators.map((v) => aggregatorRow(v, tin, tout, amountIn))),
    ]);
    const got = new Map(calls.map((x, i) => [x.key, results[i]!] as const));
    const val = <T>(k: string): T | undefined => {
      const res = got.get(k);
      return res && res.status === "success" ? (res.result as T) : undefined;
    };
    mark("chain_ms", t2);
    // viem folds a failed multicall into per-call failures: the block time never fails on its own.
    if (val<bigint>("time") === undefined) throw new ApiError(502, "RPC_UNAVAILABLE", "the chain RPC did not answer the batched reads", {}, 2);
    if (wallet && val<boolean>("sanctioned")) throw new ApiError(451, "SANCTIONED", `wallet ${wallet} is on the sanctions list`, { address: wallet, field: "wallet" });
    if (wallet && val<boolean>("sanctioned") === undefined) throw new ApiError(502, "RPC_UNAVAILABLE", "the sanctions list could not be read", {}, 2);

    const baseFee = val<bigint>("basefee") ?? 0n;
    const gasPrice = baseFee > 0n ? baseFee : 1n;
    const ethUsd = markEth?.usd ?? null;
    const blockTime = Number(val<bigint>("time")!);
    const curveState = val<readonly [Address, number, boolean, bigint, bigint, bigint, bigint]>("curve");
    const curveFees = val<readonly [bigint, bigint, bigint]>("curveFees");

    const rows = routes.map((route) => {
      const q: RouteQuote = readQuote(route, got.get(`q:${route.id}`)!);
      const gross = q.amountOut;
      let amountOut = feeSide === "output" && route.venue !== CURVE_VENUE ? gross - bpsOf(gross, fee.bps) : gross;
      if (route.venue === CURVE_VENUE && !route.buy) amountOut = gross - bpsOf(gross, fee.bps);
      const midAtoms = routeMidAtoms(route, curveState ? { virtualEth: curveState[4], virtualToken: curveState[5] } : undefined);
      const vsMid = q.ok && midAtoms ? Math.round((Number(gross) / (Number(swapIn) * midAtoms) - 1) * 10_000) : null;
      const venueFeeBps = route.venue === CURVE_VENUE ? (curveFees ? Number(curveFees[0] + curveFees[1] + curveFees[2]) : 0) : routeFeeBps(route);
      const extraGas = GAS.tx + (route.venue === CURVE_VENUE ? 0n : GAS.router + GAS.fee + (tin.address !== zeroAddress ? GAS.pullErc20 : 0n) + (tin.currency !== tin.address || tout.currency !== tout.address ? GAS.wrap : 0n));
      const gas = q.ok ? q.gas + extraGas : 0n;
      const { gasUsd, totalBps } = costVsMid({ amountOut: Number(amountOut), gas: Number(gas), amountIn, midAtoms, gasPrice, ethUsd, markOut, outDecimals: tout.decimals });
      const impact = vsMid !== null ? Math.max(0, -vsMid - Math.round(venueFeeBps)) : null;
      return {
        quote: q,
        midAtoms,
        venueFeeBps,
        row: {
          id: route.id,
          venue: route.venue,
          label: route.label,
          ok: q.ok,
          amount_out: q.ok ? amountOut.toString() : null,
          vs_mid_bps: vsMid,
          gas: Number(gas),
          gas_usd: gasUsd,
          total_bps: q.ok ? totalBps : null,
          ...(!tin.core || !tout.core ? { impact_bps: impact, guard_bps: LIMITS.maxVsMidBps } : {}),
          ...(q.error ? { error: q.error } : {}),
        },
      };
    });
    const ranked = rows.filter((x) => x.quote.ok).sort((a, b) => (a.row.total_bps ?? 1e9) - (b.row.total_bps ?? 1e9) || (BigInt(b.row.amount_out!) > BigInt(a.row.amount_out!) ? 1 : -1));
    const best = ranked[0] ?? null;
    if (!best) {
      if (curveSide && curveState?.[2]) throw new ApiError(422, "CURVE_GRADUATED", `${curveSide.symbol} has graduated from the launchpad curve`);
      throw new ApiError(422, "NO_ROUTE", `no route answers for this size: ${rows.map((x) => x.quote.error).filter(Boolean).join("; ") || "no output"}`);
    }
    const expectedOut = BigInt(best.row.amount_out!);
    winners.set(pair, best.row.id);

    // Notional (fee included): the input at its mark, else the output at its mark.
    let notional: number | null = null;
    if (r.notional_usd !== undefined) notional = r.notional_usd;
    else if (markIn) notional = (Number(amountIn) / 10 ** tin.decimals) * markIn.usd;
    else if (markOut) notional = (Number(expectedOut) / 10 ** tout.decimals) * markOut.usd;
    if (notional === null) throw new ApiError(503, "NO_MARK", "neither token has a price: the trade's dollar size cannot be checked", {}, 5);

    // Curve refusals that are facts of the chain, not policy.
    if (best.quote.route.venue === CURVE_VENUE && kind !== "quote") {
      if (curveState?.[2]) throw new ApiError(422, "CURVE_GRADUATED", `${curveSide!.symbol} has graduated from the launchpad curve`);
      if (curveFees && curveFees[2] > 0n) throw new ApiError(422, "SNIPE_TAX", `the launch snipe tax (${curveFees[2]} bps) is still on; retry in about ${Math.max(1, 60 - (blockTime - Number(curveState?.[3] ?? 0n)))} s`, {}, 60);
      const ourFee = (best.quote.route as { buy: boolean }).buy ? inputFee : bpsOf(best.quote.amountOut, fee.bps);
      if (ourFee === 0n) throw new ApiError(422, "FEE_TOO_SMALL", "the service fee rounds to zero at this size; trade more");
      const graduation = val<bigint>("graduation");
      if (best.quote.route.venue === CURVE_VENUE && (best.quote.route as { buy: boolean }).buy && curveState && graduation !== undefined && curveFees) {
        const curveFee = bpsOf(swapIn, Number(curveFees[0] + curveFees[1] + curveFees[2]));
        if (curveState[6] + swapIn - curveFee >= graduation) throw new ApiError(422, "CURVE_GRADUATED", "this buy would graduate the curve with a partial fill; buy less");
      }
    }

    // Risks: both tokens' screens, the route's impact, stale marks, Shield's verdicts.
    const risks: Risk[] = [];
    for (const t of [tin, tout]) for (const x of ((t.record?.risks as Risk[] | undefined) ?? [])) risks.push({ ...x, token: t.core ? t.symbol : lc(t.address) });
    const impact = best.row.vs_mid_bps !== null ? Math.max(0, -best.row.vs_mid_bps - Math.round(best.venueFeeBps)) : 0;
    if (impact >= LIMITS.highPriceImpactBps) risks.push(risk("HIGH_PRICE_IMPACT", `this size moves the price about ${impact} bps`));
    else if (impact >= LIMITS.priceImpactBps) risks.push(risk("PRICE_IMPACT", `this size moves the price about ${impact} bps`));
    for (const [t, m] of [[tin, markIn], [tout, markOut]] as const) if (m?.stale) risks.push(risk("STALE_MARK", `the oracle mark is ${m.age_s} s old`, t.symbol));
    const reports = r.shield ? await shieldReports([tin, tout]) : {};
    for (const [addr, rep] of Object.entries(reports)) if (rep.verdict !== "verified") risks.push(risk("UNVERIFIED", `Shield verdict: ${rep.verdict}`, addr));
    risks.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "severe" ? -1 : 1));

    // Reference check against oracles when both sides have one (pool fees taken out).
    let vsRef: number | null = null;
    if (tin.feed && tout.feed && markIn && markOut && best.quote.route.venue !== CURVE_VENUE) {
      const refAtoms = (markIn.usd / markOut.usd) * 10 ** (tout.decimals - tin.decimals);
      vsRef = Math.round((Number(best.quote.amountOut) / (Number(swapIn) * refAtoms) - 1) * 10_000 + best.venueFeeBps);
    }

    const permit2Allowance = val<readonly [bigint, number, number]>("permit2");
    const allowPermit2 = val<bigint>("allowPermit2");
    const slippage = r.slippage_bps ?? LIMITS.defaultSlippageBps;
    const policy: PolicyResult = evaluatePolicy({
      notionalUsd: notional,
      tierLimitUsd: Math.min(tin.tierLimitUsd, tout.tierLimitUsd),
      slippageBps: slippage,
      feeBps: fee.bps,
      maxFeeBps: r.max_fee_bps ?? null,
      approval: tin.address !== zeroAddress ? { mode: r.approval_mode, budgetUsd: r.approval_budget_usd, allowUnlimited: r.allow_unlimited_approval, unlimitedInPlace: allowPermit2 !== undefined && allowPermit2 >= maxUint160 } : null,
      stock: stocks.length
        ? {
            attests: r.owner_attests_non_us,
            paused: val<boolean>("registryPaused") === true || stocks.some((s) => val<boolean>(`paused:${lc(s.address)}`) === true),
            walletBlocked: val<boolean>("walletBlocked") === true,
            symbols: stocks.map((s) => s.symbol),
          }
        : null,
      risks,
      acceptRisks: r.accept_risks,
      shield: { on: r.shield, policies: r.policies },
      vsMidBps: best.row.vs_mid_bps,
      midRequired: true,
      vsRefBps: vsRef,
      minAmountOut: r.min_amount_out !== undefined ? BigInt(r.min_amount_out) : null,
      expectedOut,
    });
    timings.total_ms = Math.round((performance.now() - t0) * 100) / 100;

    const fees = {
      fee_bps: fee.bps,
      fee_class: feeClass,
      fee_tier: fee.tier,
      fee_side: feeSide,
      fee_token: feeToken.address,
      shield: r.shield,
      ...(r.shield ? { report: tradeReport(reports, now()) } : { shield_available: true }),
    };
    return {
      tin, tout, amountIn, swapIn, inputFee, fee, feeSide, feeToken, feeClass, notional, slippage, expectedOut, best, rows, aggRows, markIn, markOut, markEth, ethUsd, gasPrice,
      risks, policy, fees, timings, val, fastHit, walletCode, curveState, curveFees, permit2Allowance, allowPermit2, blockTime,
    };
  }

  /** An aggregator's row in the same terms as ours: against the best route's mid (its output carries no fee of ours). */
  function compareRow(e: Evaluation, row: Awaited<ReturnType<typeof aggregatorRow>>) {
    if (!row.ok || !row.amount_out || !e.best.midAtoms) return row;
    const out = Number(row.amount_out);
    const gas = "gas" in row && typeof row.gas === "number" ? row.gas : null;
    const { gasUsd, totalBps } = costVsMid({ amountOut: out, gas, amountIn: e.amountIn, midAtoms: e.best.midAtoms, gasPrice: e.gasPrice, ethUsd: e.ethUsd, markOut: e.markOut, outDecimals: e.tout.decimals });
    return { ...row, vs_mid_bps: Math.round((out / (Number(e.amountIn) * e.best.midAtoms) - 1) * 10_000), gas_usd: gasUsd, total_bps: totalBps };
  }

  const markView = (m: Mark | null) => (m ? { usd: m.usd, source: m.source, age_s: m.age_s, stale: m.stale } : null);

  async function quote(body: Record<string, unknown>, who: Who) {
    const r = parseTradeRequest(body);
    const e = await evaluate(r, "quote", who, null);
    const mid = e.best.midAtoms !== null ? e.best.midAtoms * 10 ** (e.tin.decimals - e.tout.decimals) : null;
    return {
      token_in: ref(e.tin),
      token_out: ref(e.tout),
      amount_in: e.amountIn.toString(),
      notional_usd: round2(e.notional),
      slippage_bps: e.slippage,
      best: e.best.row,
      routes: [...e.rows.map((x) => x.row).sort((a, b) => (a.ok === b.ok ? (a.total_bps ?? 1e9) - (b.total_bps ?? 1e9) : a.ok ? -1 : 1)), ...e.aggRows.map((row) => compareRow(e, row))],
      candidates: e.rows.length + e.aggRows.length,
      fast: r.fast ? { used_recent_winner: e.fastHit } : undefined,
      mid: mid === null ? null : { price: mid, route: e.best.row.id, source: e.best.quote.route.venue === CURVE_VENUE ? "curve" : "pool-mid" },
      marks: { token_in: markView(e.markIn), token_out: markView(e.markOut), ETH: markView(e.markEth) },
      gas_price_wei: e.gasPrice.toString(),
      eth_usd: e.ethUsd,
      policy: { ok: e.policy.ok, code: e.policy.code, message: e.policy.message, checks: e.policy.checks, unaccepted: e.policy.unaccepted },
      policy_ok: e.policy.ok,
      timings: e.timings,
      risks: e.risks,
      ...e.fees,
    };
  }

  /**
   * The transactions of a plan for `wallet`: approvals by mode and permit (or, `fresh`, as if the
   * wallet had none), then the router swap, or the curve trade with its fee (two_step or batch).
   */
  async function buildSteps(e: Evaluation, r: TradeRequest, wallet: Address, fresh: boolean) {
    const deadline = Math.max(e.blockTime, now()) + LIMITS.deadlineS;
    const minOut = maxBig(bpsOf(e.expectedOut, 10_000 - e.slippage), r.min_amount_out !== undefined ? BigInt(r.min_amount_out) : 0n);
    const steps: Step[] = [];
    const route = e.best.quote.route;
    let execution: "router" | "curve" | "batch" = "router";
    let approval: Record<string, unknown> | null = null;
    let permit: Record<string, unknown> | null = null;
    let permitNow: number | null = null;
    let feeBlock: Record<string, unknown>;
    let swapTx: PlanTx | null = null;

    if (route.venue === CURVE_VENUE) {
      const curveFee = route.buy ? e.inputFee : bpsOf(e.best.quote.amountOut, e.fee.bps);
      const delegated = typeof e.walletCode === "string" && lc(e.walletCode) === lc(`${EIP7702_PREFIX}${c.statelessDelegator.slice(2)}`);
      const mode = r.curve_fee_mode === "auto" ? (delegated ? "batch" : "two_step") : r.curve_fee_mode;
      if (mode === "batch" && !delegated) throw new ApiError(422, "FEE_MODE", "fee mode batch needs a wallet delegated (EIP-7702) to the pinned stateless delegator 1.3.0; use two_step");
      const curveMin = route.buy ? minOut : bpsOf(e.best.quote.amountOut, 10_000 - e.slippage);
      const swap = buildCurveSwap({ chainId: config.chainId, launchpad: c.launchpad, route, wallet, amountIn: route.buy ? e.swapIn : e.amountIn, amountOutMin: curveMin });
      const feeTx = buildFeeTransfer(config.chainId, config.feeRecipient, curveFee);
      if (!route.buy && (fresh || (e.val<bigint>("allowCurve") ?? 0n) < e.amountIn)) {
        steps.push({ kind: "approve", why: `let the launchpad curve take ${e.amountIn} of ${e.tin.symbol}`, tx: buildApprove(config.chainId, e.tin.address, c.launchpad, e.amountIn), decoded: { function: "approve", spender: c.launchpad, amount: e.amountIn.toString() } });
      }
      if (mode === "batch") {
        execution = "batch";
        swapTx = buildBatch(config.chainId, wallet, [feeTx, swap]);
        steps.push({ kind: "swap", why: "fee and curve trade in one transaction from your delegated wallet", tx: swapTx, decoded: { function: "execute", mode: "batch", calls: [{ kind: "fee_transfer", to: config.feeRecipient, value: curveFee.toString() }, { kind: "swap", ...describeCurveCall(swap.data) }] } });
      } else {
        execution = "curve";
        swapTx = swap;
        steps.push({ kind: "fee_transfer", why: "the service fee, sent first (raw_txs in order)", tx: feeTx, decoded: { to: config.feeRecipient, value: curveFee.toString() } });
        steps.push({ kind: "swap", why: "the curve trade", tx: swap, decoded: describeCurveCall(swap.data) });
      }
      feeBlock = { bps: e.fee.bps, side: e.feeSide, recipient: config.feeRecipient, token: zeroAddress, command: mode === "batch" ? "BATCH_TRANSFER" : "FEE_TRANSFER", amount: curveFee.toString() };
    } else {
      // ERC-20 input: approval to the permit contract, then the router's permit allowance.
      let permitArg: { permit: PermitSingle; signature: Hex } | null = null;
      if (e.tin.address !== zeroAddress) {
        const current = e.permit2Allowance ?? [0n, 0, 0];
        const a = await approvalPlan({
          chainId: config.chainId,
          permit2: c.permit2,
          router: c.universalRouter,
          wallet,
          token: e.tin.address,
          symbol: e.tin.symbol,
          amountIn: e.amountIn,
          atomsPerUsd: e.markIn ? 10 ** e.tin.decimals / e.markIn.usd : null,
          deadline,
          chainNow: Math.max(e.blockTime, now()),
          state: fresh ? { toPermit2: 0n, router: [0n, 0, current[2]] } : { toPermit2: e.allowPermit2 ?? 0n, router: current },
          // A fresh wallet's simulation cannot carry a signature it has not made: its permit goes by transaction.
          req: { mode: r.approval_mode, budgetUsd: r.approval_budget_usd, permitMode: fresh && !r.permit_signature ? "transaction" : r.permit_mode, permitScope: r.permit_scope, permitSignature: r.permit_signature, permitNow: r.permit_now },
        });
        steps.push(...a.steps);
        ({ approval, permit, permitNow } = a);
        permitArg = a.signedPermit;
      }
      const feeSpec: FeeSpec = { side: e.feeSide, bps: e.fee.bps, recipient: config.feeRecipient, amount: e.inputFee };
      if (!steps.some((s) => s.kind === "sign_permit")) {
        swapTx = buildRouterSwap({ chainId: config.chainId, router: c.universalRouter, route, tokenIn: e.tin.address, tokenOut: e.tout.address, weth, amountIn: e.amountIn, amountOutMin: minOut, fee: feeSpec, deadline, permit: permitArg });
        steps.push({ kind: "swap", why: "the trade through the Universal Router", tx: swapTx, decoded: describeRouterCall(swapTx.data) });
      }
      // Output side: PAY_PORTION takes bps of the actual output; this is the amount at the quote.
      const feeAmountOut = e.feeSide === "output" ? bpsOf((BigInt(e.best.row.amount_out!) * 10_000n) / BigInt(10_000 - e.fee.bps), e.fee.bps) : 0n;
      feeBlock = { bps: e.fee.bps, side: e.feeSide, recipient: config.feeRecipient, token: e.feeToken.address, command: e.feeSide === "input" ? "TRANSFER" : "PAY_PORTION", amount: e.feeSide === "input" ? e.inputFee.toString() : feeAmountOut.toString() };
    }
    return { steps, execution, swapTx, approval, permit, permitNow, feeBlock, deadline, minOut };
  }

  /** Build (and for prepare, simulate): the plan of SPEC.md "Plan". */
  async function plan(body: Record<string, unknown>, who: Who, kind: "build" | "prepare") {
    const r = parseTradeRequest(body);
    const wallet = walletOf(r, who);
    const e = await evaluate(r, kind, who, wallet);
    if (e.policy.refusal) throw e.policy.refusal;
    const t3 = performance.now();
    const { steps, execution, swapTx, approval, permit, permitNow, feeBlock, deadline, minOut } = await buildSteps(e, r, wallet, false);
    const ready = steps.every((s) => s.tx !== null);
    const timings: Record<string, number> = { ...e.timings, build_ms: Math.round((performance.now() - t3) * 100) / 100 };

    let simulation: (PlanSimulation & { block_time: number }) | null = null;
    if (kind === "prepare" && ready) {
      const t4 = performance.now();
      simulation = { ...(await simulateSteps(e, steps, wallet, r.fund)), block_time: e.blockTime };
      timings.simulate_ms = Math.round((performance.now() - t4) * 100) / 100;
      if (!simulation.ok) throw new ApiError(422, "SIMULATION_FAILED", `the plan does not go through: ${simulation.error}`, { simulation });
      if (simulation.amount_out !== null && BigInt(simulation.amount_out) < e.expectedOut - e.expectedOut / 10_000n) {
        throw new ApiError(422, "QUOTE_SIM_MISMATCH", `the simulation delivers ${simulation.amount_out}, less than the quoted ${e.expectedOut}; ask for a fresh plan`, { simulation, quoted: e.expectedOut.toString() });
      }
    }

    const txs = steps.filter((s) => s.tx).map((s) => ({ kind: s.kind, tx: s.tx! }));
    const answer: Record<string, unknown> = {
      ready,
      tx: swapTx && ready ? swapTx : null,
      steps,
      execution,
      route: e.best.row,
      quote: { amount_out: e.best.row.amount_out, vs_mid_bps: e.best.row.vs_mid_bps, gas: e.best.row.gas, gas_usd: e.best.row.gas_usd },
      amount_in: e.amountIn.toString(),
      notional_usd: round2(e.notional),
      amount_out_min: minOut.toString(),
      amount_out_expected: e.expectedOut.toString(),
      deadline,
      fee: feeBlock,
      ...(kind === "prepare" ? { simulation } : {}),
      checks: e.policy.checks,
      policy_ok: true,
      permit,
      permit_now: permitNow,
      approval,
      wallet_state: {
        wallet,
        eth: (e.val<bigint>("eth") ?? 0n).toString(),
        token_in: e.tin.address === zeroAddress ? (e.val<bigint>("eth") ?? 0n).toString() : (e.val<bigint>(`bal:${lc(e.tin.address)}`) ?? 0n).toString(),
        token_out: e.tout.address === zeroAddress ? (e.val<bigint>("eth") ?? 0n).toString() : (e.val<bigint>(`bal:${lc(e.tout.address)}`) ?? 0n).toString(),
        permit2_allowance: e.allowPermit2?.toString() ?? null,
        router_permit: e.permit2Allowance ? { amount: e.permit2Allowance[0].toString(), expiration: Number(e.permit2Allowance[1]), nonce: Number(e.permit2Allowance[2]) } : null,
        delegated: typeof e.walletCode === "string" && e.walletCode.startsWith(EIP7702_PREFIX),
      },
      tokens: { token_in: ref(e.tin), token_out: ref(e.tout) },
      risks: e.risks,
      accepted_risks: e.policy.accepted,
      ...e.fees,
      timings,
    };
    if (txs.length) {
      answer.plan_id = await ledger.savePlan({
        keyId: who.key.keyId,
        wallet,
        kind,
        execution,
        tokenIn: ref(e.tin),
        tokenOut: ref(e.tout),
        amountIn: e.amountIn.toString(),
        amountOutMin: minOut.toString(),
        feeBps: e.fee.bps,
        deadline,
        txs,
        summary: { route: e.best.row.id, fee: feeBlock },
      });
    } else answer.plan_id = null;
    return answer;
  }

  /** Lends the input when asked (fund true, or auto and the wallet lacks it), then simulates the plan's transactions. */
  async function simulateSteps(e: Evaluation, steps: Step[], wallet: Address, fund: "auto" | boolean) {
    const overrides: Override[] = [];
    const have = e.tin.address === zeroAddress ? (e.val<bigint>("eth") ?? 0n) : (e.val<bigint>(`bal:${lc(e.tin.address)}`) ?? 0n);
    const lend = fund === true || (fund === "auto" && have < e.amountIn);
    const eth = e.val<bigint>("eth") ?? 0n;
    const txValue = steps.reduce((s, x) => s + BigInt(x.tx?.value ?? "0"), 0n);
    if (lend) {
      if (e.tin.address === zeroAddress) overrides.push({ address: wallet, balance: eth + e.amountIn + txValue + 10n ** 17n });
      else {
        const slot = await rpc(findBalanceSlot(chain, e.tin.address));
        if (slot === null) throw new ApiError(422, "DRY_RUN_UNFUNDABLE", `${e.tin.symbol || e.tin.address} keeps balances where overrides cannot fake them; simulate with fund false from a wallet that holds it, or trade small`);
        const lent = balanceOverride(e.tin.address, wallet, slot, have + e.amountIn);
        // Lent WETH must be backed by ETH in WETH9, or the router's unwrap fails.
        overrides.push(lc(e.tin.address) === lc(weth) ? { ...lent, balance: 10n ** 30n } : lent);
        if (eth < txValue + 10n ** 16n) overrides.push({ address: wallet, balance: eth + txValue + 10n ** 17n });
      }
    }
    return rpc(
      simulatePlan({
        chain,
        multicall3: c.multicall3,
        wallet,
        txs: steps.filter((s) => s.tx).map((s) => ({ to: s.tx!.to, data: s.tx!.data, value: BigInt(s.tx!.value) })),
        tokenOut: e.tout.address,
        feeToken: e.best.quote.route.venue === CURVE_VENUE ? zeroAddress : e.feeToken.address,
        feeRecipient: config.feeRecipient,
        overrides,
      }),
    );
  }

  function walletOf(r: TradeRequest, who: Who): Address {
    if (!r.wallet) throw new ApiError(400, "BAD_REQUEST", "wallet is required");
    if (lc(r.wallet) !== lc(who.key.wallet)) throw new ApiError(403, "WALLET_MISMATCH", "this key is bound to another wallet");
    return getAddress(r.wallet);
  }

  /**
   * live/simulate: with a wallet, that wallet's plan (fund false: its real balances); without, a
   * synthetic funded wallet that discloses only. mode `first` adds the approvals a fresh wallet needs.
   */
  async function simulate(body: Record<string, unknown>, who: Who) {
    const r = parseTradeRequest(body);
    const synthetic = !r.wallet;
    if (!synthetic) walletOf(r, who);
    const wallet = synthetic ? ("0x00000000000000000000000000000000005139a7" as Address) : getAddress(r.wallet!);
    const e = await evaluate(r, "simulate", who, wallet, synthetic);
    if (!synthetic && e.policy.refusal) throw e.policy.refusal;
    const { steps, deadline, minOut } = await buildSteps(e, r, wallet, synthetic || r.mode === "first");
    const t = performance.now();
    const sim = await simulateSteps(e, steps, wallet, synthetic ? true : r.fund);
    const gasUsd = e.ethUsd !== null ? (sim.gas_total * Number(e.gasPrice) / 1e18) * e.ethUsd : null;
    return {
      ok: sim.ok,
      error: sim.error,
      block: { number: Number(e.val<bigint>("block") ?? 0n), timestamp: e.blockTime },
      transactions: steps.map((s, i) => ({ kind: s.kind, to: s.tx!.to, value: s.tx!.value, gas: sim.gas[i] ?? null })),
      amount_out: sim.amount_out,
      amount_out_min: minOut.toString(),
      fee_paid: sim.fee_transfer?.amount ?? null,
      fee_transfer: sim.fee_transfer,
      gas_total: sim.gas_total,
      gas_usd: gasUsd === null ? null : Math.round(gasUsd * 1e6) / 1e6,
      funded_by_overrides: sim.funded_by_overrides,
      synthetic,
      mode: r.mode,
      build: { route: e.best.row, amount_in: e.amountIn.toString(), amount_out_expected: e.expectedOut.toString(), deadline, steps: steps.map((s) => ({ kind: s.kind, tx: s.tx })) },
      policy: { ok: e.policy.ok, code: e.policy.code, message: e.policy.message, checks: e.policy.checks },
      risks: e.risks,
      ...e.fees,
      timings: { ...e.timings, simulate_ms: Math.round((performance.now() - t) * 100) / 100 },
    };
  }

  type Evaluation = Awaited<ReturnType<typeof evaluate>>;
  const revoke = createRevoke({ config, chain, resolveToken: resolveTradeToken });
  return { quote, plan, simulate, revoke, ledger, market, evaluate, refOfParam };
}

/**
 * A route's gas in USD and its cost against the mid in bps: what the whole input would buy at the
 * mid, against the output net of gas (our fee is already out of `amountOut`). Ranks routes.
 */
function costVsMid(p: { amountOut: number; gas: number | null; amountIn: bigint; midAtoms: number | null; gasPrice: bigint; ethUsd: number | null; markOut: Mark | null; outDecimals: number }) {
  const gasUsd = p.gas !== null && p.ethUsd !== null ? ((p.gas * Number(p.gasPrice)) / 1e18) * p.ethUsd : null;
  const outUnitUsd = p.markOut ? p.markOut.usd / 10 ** p.outDecimals : null;
  const net = p.amountOut - (gasUsd !== null && outUnitUsd ? gasUsd / outUnitUsd : 0);
  const ideal = p.midAtoms ? Number(p.amountIn) * p.midAtoms : null;
  return { gasUsd: gasUsd === null ? null : Math.round(gasUsd * 1e6) / 1e6, totalBps: ideal ? Math.round((1 - net / ideal) * 10_000) : null };
}

const VERDICT_ORDER = { flagged: 0, unverified: 1, verified: 2 } as const;
/**
 * A trade's Shield report: the token record's fields ({verdict, url, source, checked_at}) of its
 * worst verdict, plus every token's own under `tokens`. Core assets get no verdict; a trade of
 * core assets only reports verdict null (never "verified" without a verdict).
 */
function tradeReport(reports: Record<string, ShieldReport>, now: number) {
  const worst = Object.values(reports).sort((a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict])[0];
  return worst ? { ...worst, tokens: reports } : { verdict: null, url: null, source: "core assets only", checked_at: now, tokens: {} };
}
const round2 = (x: number) => Math.round(x * 100) / 100;
const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);
export type Trading = ReturnType<typeof createTrading>;
