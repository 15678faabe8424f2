import type { Address } from "viem";
import { fastRouteTable, fastRoutesSha256 } from "../../lib/fastRoutes.js";
import type { KeyRecord } from "../auth/index.js";
import { LRUCache } from "lru-cache";
import { onClock } from "../../lib/cacheClock.js";
import { assertFastEnabled, fastTrade, type ChainHead, type FastDeps } from "./fast.js";
import type { FastParameters } from "./request.js";
import { fastTerms } from "./terms.js";

export { FAST_RULES, FAST_LIMITS } from "./checks.js";
/** The request schema, for the OpenAPI document (api/openapi). */
export { fastRequest } from "./request.js";

/** The chain's head (base fee, time) is read at most this often per instance. */
const HEAD_TTL_MS = 1_000;

/** Fast mode: the pinned route table (built once from the universe), its terms, and live/fast. */
export function createFast(d: Omit<FastDeps, "table" | "sha256" | "head">) {
  const c = d.config;
  const table = fastRouteTable({
    chainId: c.chainId,
    router: c.contracts.universalRouter,
    tokens: c.tokens,
    pools: c.pools,
  });
  const heads = new LRUCache<"head", ChainHead>({
    max: 1,
    ttl: HEAD_TTL_MS,
    ...onClock(d.clock),
    // The block the transaction would join (as the SDK dates its deadline): on a quiet chain the
    // latest block can be many seconds old, and a deadline 30 s past the pending block would then
    // read as more than 60 s away. A node without pending blocks answers with the latest.
    fetchMethod: async () => {
      const b = await d.chain.getBlock({ blockTag: "pending" }).catch(() => d.chain.getBlock({ blockTag: "latest" }));
      return { baseFee: b.baseFeePerGas ?? 0n, time: Number(b.timestamp) };
    },
  });
  const deps: FastDeps = {
    ...d,
    table,
    sha256: fastRoutesSha256(table),
    head: async () => (await heads.fetch("head"))!,
  };
  return {
    table,
    sha256: deps.sha256,
    terms: (wallet: Address, shield: boolean) => fastTerms(deps, wallet, shield),
    /** FAST_DISABLED unless this server opted in to fast mode (and relays). */
    assertEnabled: () => assertFastEnabled(deps),
    trade: (q: FastParameters, key: KeyRecord) => fastTrade(deps, q, key),
  };
}

export type Fast = ReturnType<typeof createFast>;
