// The bare anchor of the indexer benchmark: the very same chain, sources and filters as the
// service (../../ponder.config.ts), with empty handlers.
export { default } from "../../ponder.config";
