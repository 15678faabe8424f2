/** The stale-mark rule lives in lib/ (the co-signer applies it too). */
export { FEED_GRACE_S, FEED_HEARTBEAT_S, markStale, type FeedAge } from "../../lib/markStale.js";
