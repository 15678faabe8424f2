/**
 * MetaMask's smart-accounts-kit sends usage analytics unless DO_NOT_TRACK is set
 * (notes/sessions-and-agents.md 1.7). Imported first by every entry point that may load the kit.
 */
process.env.DO_NOT_TRACK = "1";
export {};
