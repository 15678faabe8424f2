/** Multicall3 lives at the same address on every chain, ours included. */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;
