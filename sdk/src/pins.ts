import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import type { FastRouteTable } from "../../lib/fastRoutes.js";
import { poolId } from "../../lib/v4.js";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";

/**
 * What the client trusts, fixed when it is set up (SPEC "Versioning": clients pin config and
 * refuse a changed server): the chain, the router and Permit2, the tokens, the canonical pools,
 * the fee recipient and the fee schedule's major symbols, the co-signer, and the sign-in domain.
 */
export type Pins = {
  chainId: number;
  domain: string;
  router: Address;
  permit2: Address;
  poolManager: Address;
  v4Quoter: Address;
  feeRecipient: Address;
  cosigner: Address | null;
  /** The session contracts (the root's DelegationManager, the 7702 delegator, the caveat enforcers). */
  session: { delegationManager: Address; statelessDelegator: Address; enforcers: Record<string, Address> } | null;
  /** A plan's deadline is at most this far ahead. */
  deadlineS: number;
  tokens: Record<string, { address: Address; decimals: number; feed?: Address | null; kind?: string }>;
  /**
   * The canonical pools (config's universe.pools): hookless, between pinned tokens, each id its
   * key's. Plans route only through these (V4_HOOKS) and fast mode's table is built from them.
   */
  pools: PinnedPool[];
  majorSymbols: string[];
  fee: { majorMaxBps: number; majorMinBps: number; otherBps: number; shieldAddBps: number; maxBps: number };
  /**
   * The risk table (code: severity) and the price-impact thresholds a plan's risks are checked against
   * (RISK_CODES).
   */
  risks: Record<string, "severe" | "info">;
  impactBps: { info: number; high: number };
  /** Fast mode's route table, pinned from live/fast/terms when the agent is set up (see pinFastRoutes). */
  fastRoutes?: { sha256: Hex; table: FastRouteTable } | null;
};

export type PinnedPool = {
  id: Hex;
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
};

type ConfigAnswer = {
  chain_id: number;
  auth: { domain: string };
  router: string;
  permit_contract: string;
  pool_manager: string;
  v4_quoter: string;
  tokens: Record<string, { address: string; decimals: number; feed?: string | null; kind?: string }>;
  fee: {
    recipient: string;
    major_symbols: string[];
    major_tiers: { bps: number }[];
    other_bps: number;
    shield_add_bps: number;
    max_bps: number;
  };
  session?: {
    cosigner: string | null;
    delegation_manager?: string;
    stateless_delegator?: string;
    enforcers?: Record<string, string>;
  };
  limits?: { deadline_s?: number };
  risks: Record<string, "severe" | "info">;
  high_price_impact_bps: number;
  price_impact_bps: number;
  universe?: {
    pools?: { id: string; currency0: string; currency1: string; fee: number; tick_spacing: number; hooks: string }[];
  };
};

/** Pins taken from a config answer the developer trusts (read once, then kept with the agent). */
/**
 * A token as the server matches it (api/trading/sides.ts): a core symbol in any case (`eth` is
 * ETH), or a pinned token's address; the pinned symbol then, else the name unchanged. Checks that
 * looked `eth` up as given found no pinned token and refused a trade the server had built.
 */
export function pinnedSymbol(pins: Pick<Pins, "tokens">, token: string): string {
  const upper = token.toUpperCase();
  if (Object.hasOwn(pins.tokens, upper)) return upper;
  if (/^0x[0-9a-fA-F]{40}$/.test(token)) {
    const found = Object.entries(pins.tokens).find(([, t]) => t.address.toLowerCase() === token.toLowerCase());
    if (found) return found[0];
  }
  return token;
}

/** A request's tokenIn and tokenOut as pinned symbols (pinnedSymbol). */
export const withPinnedSymbols = <Q extends { tokenIn: string; tokenOut: string }>(
  pins: Pick<Pins, "tokens">,
  q: Q,
): Q => ({
  ...q,
  tokenIn: pinnedSymbol(pins, q.tokenIn),
  tokenOut: pinnedSymbol(pins, q.tokenOut),
});

export function pinsFrom(c: ConfigAnswer): Pins {
  const tiers = c.fee.major_tiers.map((t) => t.bps);
  return {
    chainId: c.chain_id,
    domain: c.auth.domain,
    router: getAddress(c.router),
    permit2: getAddress(c.permit_contract),
    poolManager: getAddress(c.pool_manager),
    v4Quoter: getAddress(c.v4_quoter),
    feeRecipient: getAddress(c.fee.recipient),
    cosigner: c.session?.cosigner ? getAddress(c.session.cosigner) : null,
    session:
      c.session?.delegation_manager && c.session.stateless_delegator && c.session.enforcers
        ? {
            delegationManager: getAddress(c.session.delegation_manager),
            statelessDelegator: getAddress(c.session.stateless_delegator),
            enforcers: Object.fromEntries(Object.entries(c.session.enforcers).map(([k, v]) => [k, getAddress(v)])),
          }
        : null,
    deadlineS: c.limits?.deadline_s ?? 600,
    tokens: Object.fromEntries(
      Object.entries(c.tokens).map(([s, t]) => [
        s,
        {
          address: getAddress(t.address),
          decimals: t.decimals,
          feed: t.feed ? getAddress(t.feed) : null,
          kind: t.kind,
        },
      ]),
    ),
    pools: poolsFrom(c),
    majorSymbols: [...c.fee.major_symbols],
    fee: {
      majorMaxBps: Math.max(...tiers),
      majorMinBps: Math.min(...tiers),
      otherBps: c.fee.other_bps,
      shieldAddBps: c.fee.shield_add_bps,
      maxBps: c.fee.max_bps,
    },
    risks: { ...c.risks },
    impactBps: { info: c.price_impact_bps, high: c.high_price_impact_bps },
  };
}

/**
 * The config's canonical pools, each checked: hookless, between its tokens, its id its key's
 * (CONFIG_MISMATCH otherwise).
 */
function poolsFrom(c: ConfigAnswer): PinnedPool[] {
  const pools = c.universe?.pools;
  if (!Array.isArray(pools) || !pools.length)
    throw new PitError("CONFIG_MISMATCH", "the config publishes no canonical pools (universe.pools)");
  const tokens = new Set(Object.values(c.tokens).map((t) => t.address.toLowerCase()));
  return pools.map((p) => {
    const pool: PinnedPool = {
      id: p.id as Hex,
      currency0: getAddress(p.currency0),
      currency1: getAddress(p.currency1),
      fee: p.fee,
      tickSpacing: p.tick_spacing,
      hooks: getAddress(p.hooks),
    };
    const ok =
      pool.hooks === zeroAddress &&
      tokens.has(pool.currency0.toLowerCase()) &&
      tokens.has(pool.currency1.toLowerCase()) &&
      poolId(pool).toLowerCase() === String(p.id).toLowerCase();
    if (!ok)
      throw new PitError(
        "CONFIG_MISMATCH",
        `the config's pool ${p.id} is not a hookless pool of its tokens under its own id`,
      );
    return pool;
  });
}

/**
 * CONFIG_MISMATCH when the server's config is not the pinned one (another chain, router, recipient,
 * token or fee schedule).
 */
export async function checkConfig(http: Http, pins: Pins): Promise<void> {
  const now = pinsFrom(await http.get<ConfigAnswer>("/config"));
  const diffs: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const k of [
    "chainId",
    "domain",
    "router",
    "permit2",
    "poolManager",
    "v4Quoter",
    "feeRecipient",
    "cosigner",
    "session",
    "deadlineS",
    "majorSymbols",
    "fee",
    "impactBps",
    "pools",
  ] as const)
    if (!same(now[k], pins[k])) diffs.push(k);
  for (const [sym, t] of Object.entries(pins.tokens)) if (!same(now.tokens[sym], t)) diffs.push(`tokens.${sym}`);
  // A code the server added is not one the client knows; a severe code made info hides a risk.
  for (const [code, severity] of Object.entries(pins.risks))
    if (now.risks[code] !== severity) diffs.push(`risks.${code}`);
  if (diffs.length)
    throw new PitError("CONFIG_MISMATCH", `the server's config differs from the pins: ${diffs.join(", ")}`);
}
