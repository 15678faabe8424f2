/**
 * Risk disclosure table published in /config `risks`. Severe codes must be listed in
 * `accept_risks` for a trade to proceed. The screening issue extends this table; codes are stable.
 */
export const RISKS = {
  HONEYPOT: "severe",
  SELL_TAX_HIGH: "severe",
  HIGH_PRICE_IMPACT: "severe",
  STOCK_PAUSED: "severe",
  NO_INDEPENDENT_MARK: "severe",
  UPGRADEABLE: "info",
  TRANSFER_TAX: "info",
  PRICE_IMPACT: "info",
  LOW_LIQUIDITY: "info",
  STALE_MARK: "info",
  CREATOR_TAX: "info",
  CURVE_TOKEN: "info",
  UNVERIFIED: "info",
} as const satisfies Record<string, "severe" | "info">;

export type RiskCode = keyof typeof RISKS;
