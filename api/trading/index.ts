export { createTrading, type Trading } from "./trading.js";
export { createLedger, type Ledger, type TokenRef } from "./ledger.js";
export { createVolume, VOLUME_WINDOW_DAYS, type Volume, type VolumeTier } from "./volume.js";
export { createRelay, type Relay } from "./relay.js";
export { createWatcher, FINALITY_BLOCKS, type Watcher } from "./watcher.js";
export { APPROVAL_MODES, LIMITS, SHIELD_POLICIES } from "./policy.js";
