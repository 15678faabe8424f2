export {
  createMarket,
  deepestPool,
  independentBasis,
  TWAP_WINDOW_S,
  type IndependentBasis,
  type IndependentMark,
  type Market,
  type Mark,
  type MarkSource,
  type Unpriced,
} from "./marks.js";
export { FEED_HEARTBEAT_S, markStale, type FeedAge } from "./stale.js";
