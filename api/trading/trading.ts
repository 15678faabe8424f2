import { onClock } from "../../lib/cacheClock.js";
import { LRUCache } from "lru-cache";
import type { Market } from "../market/index.js";
import type { AggregatorVenue } from "../ports/aggregators.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Tokens } from "../tokens/index.js";
import { buildCurveCalls, buildPlan } from "./build.js";
import { evaluate, type TradingContext } from "./evaluate.js";
import type { Ledger } from "./ledger.js";
import { planTrade } from "./plan.js";
import type { TradeParameters } from "./request.js";
import { quoteTrade } from "./quote.js";
import { createRevoke } from "./revoke.js";
import { createSides, type Who } from "./sides.js";
import { simulateSteps, simulateTrade } from "./simulate.js";
import type { Volume } from "./volume.js";
import type { Common } from "../ports/common.js";

/** A pair's winning route is tried alone by `fast` quotes for this long. */
const WINNER_TTL_MS = 60_000;

export type TradingDeps = Pick<Common, "config" | "chain" | "clock"> & {
  indexed: SqlIndexedReads;
  tokens: Tokens;
  market: Market;
  ledger: Ledger;
  volume: Volume;
  aggregators?: Partial<Record<AggregatorVenue, string>>;
};

/**
 * Quote, build, prepare, simulate and revoke over one shared context. The stages (sides,
 * evaluate, build, simulate, answer) are plain functions of that context, so sessions, fast mode
 * and hosted agents call the same ones.
 */
export function createTrading(d: TradingDeps) {
  const sides = createSides({ config: d.config, tokens: d.tokens, market: d.market });
  const ctx: TradingContext & { ledger: Ledger } = {
    config: d.config,
    chain: d.chain,
    tokens: d.tokens,
    market: d.market,
    indexed: d.indexed,
    volume: d.volume,
    ledger: d.ledger,
    sides,
    winners: new LRUCache<string, string>({ max: 10_000, ttl: WINNER_TTL_MS, ...onClock(d.clock) }),
    aggregators: d.aggregators ?? {},
    now: () => Math.floor(d.clock() / 1000),
  };
  return {
    context: ctx,
    quote: (r: TradeParameters, who: Who) => quoteTrade(ctx, r, who),
    plan: (r: TradeParameters, who: Who, kind: "build" | "prepare") => planTrade(ctx, r, who, kind),
    simulate: (r: TradeParameters, who: Who) => simulateTrade(ctx, r, who),
    revoke: createRevoke({ config: d.config, chain: d.chain, resolveToken: sides.resolve }),
    refOfParam: sides.refOfParam,
    stages: { evaluate, buildPlan, buildCurveCalls, simulateSteps },
  };
}

export type Trading = ReturnType<typeof createTrading>;
