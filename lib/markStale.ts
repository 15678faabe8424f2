import { stockMarketSecondsBetween } from "./marketHours.js";

/** Oracle feeds post a round at least every 24 h, moved or not (their heartbeat). */
export const FEED_HEARTBEAT_S = 86_400;
/** The heartbeat round lands a few blocks after the 24 h: a mark this much later is not yet stale. */
export const FEED_GRACE_S = 600;
/** A week holds five session days, more than a heartbeat of session time whatever the calendar. */
const WEEK_S = 7 * 86_400;

/** What the rule needs to know of a feed's latest answer. */
export type FeedAge = { updatedAt: number; now: number; stock: boolean };

/**
 * The one stale-mark rule (stats, trading, portfolio, fast mode): a feed is stale once it missed
 * its heartbeat. Stock feeds are quiet while the stock-token session is closed, so their
 * heartbeat counts session time only: Friday's closing mark is still fresh on Sunday.
 */
export function markStale(f: FeedAge): boolean {
  const age = f.now - f.updatedAt;
  const limit = FEED_HEARTBEAT_S + FEED_GRACE_S;
  if (age <= limit) return false;
  if (!f.stock || age > WEEK_S) return true;
  return stockMarketSecondsBetween(f.updatedAt, f.now) > limit;
}
