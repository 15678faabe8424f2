/**
 * Nothing we run reports home. MetaMask's smart-accounts-kit sends usage analytics unless DO_NOT_TRACK is set
 * (notes/sessions-and-agents.md 1.7). Ponder 0.16 posts to ponder.sh at start and every minute unless
 * PONDER_TELEMETRY_DISABLED is set, and describes the project first: `git config` and `npm --version`, a Node
 * process of its own, at every indexer start (node_modules/ponder/dist/esm/internal/telemetry.js). Imported first by
 * every entry point that may load the kit or start Ponder; a Ponder we spawn inherits both from our environment.
 */
process.env.DO_NOT_TRACK = "1";
process.env.PONDER_TELEMETRY_DISABLED = "true";
export {};
