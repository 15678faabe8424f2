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
export { BOOK_MAX_LAG_BLOCKS, BOOK_TTL_MS, type BookHead, type FreshBook } from "./book.js";
