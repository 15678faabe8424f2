import type { Address } from "viem";
import type { Market } from "../market/index.js";
import type { HostedStore } from "./store.js";
import type { Common } from "../ports/common.js";

/**
 * What the tick, the executors and the attestations all read, declared once here so that none of
 * them imports another for its types (they used to import each other in a circle).
 */
export type HostedContext = Pick<Common, "config" | "chain" | "clock"> & {
  /** `book`: the indexer's pool book, when fresh (paper fills computed from it, issue 31 point 2). */
  market: Pick<Market, "mark"> & Partial<Pick<Market, "book">>;
  store: HostedStore;
};

/** A session as a hosted agent sees it (sessions' forHosted). */
export type HostedSession = {
  id: string;
  wallet: Address;
  executor: Address;
  status: string;
  expires: number;
  tokens: string[];
  limits: { max_trade_usd: number; max_day_usd: number; max_trades: number };
  root_hash: string;
  /** The risk terms the session's binding commits to (policies: Shield's). */
  risk_terms: { accept_risks: string[]; shield: boolean; policies: string[] };
  /** The binding's fee terms (schedule, major range, other rate, Shield's addition). */
  fee: { schedule: number; major_min_bps: number; major_max_bps: number; other_bps: number; shield_add_bps: number };
};
