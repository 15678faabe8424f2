import type { Db } from "../ports/store/db.js";
import { createWeekCloser, type CloserDeps } from "./closer.js";
import { createTreasuryReader } from "./read.js";
import { createTreasuryStore } from "./store.js";

export type { WeekCloser } from "./closer.js";
export { treasuryPage } from "./page.js";
export { rowHash, checkChain, GENESIS_HASH, type Integrity } from "./record.js";
export { SPLIT_BPS, DUST_USD } from "./split.js";
export { weekOf, WEEK_S } from "./week.js";
export type { WeekRow, TokenRow, TransferRow } from "./close.js";
export type { TreasuryAnswer } from "./read.js";

/**
 * The treasury: the week closer (a worker) and the public record's reader, over one store.
 * `closerChain`: the closer's own client (head, nonces, balances, its guards, the split's sends),
 * which no other read of the process can silence; `chain` serves the reader's preview.
 */
export function createTreasury(
  d: Omit<CloserDeps, "store" | "moving" | "onClosed"> & {
    db: Db;
    closerChain?: CloserDeps["chain"];
    cacheMs?: number;
    prizePayouts?: () => Promise<unknown[]>;
  },
) {
  const store = createTreasuryStore(d.db);
  // A bucket's share moves only with a wallet to send it to and a signer to send it.
  const moving = {
    operations: !!d.config.treasuryBuckets.operations && !!d.signer,
    buybacks: !!d.config.treasuryBuckets.buybacks && !!d.signer,
    treasury: !!d.config.treasuryBuckets.treasury && !!d.signer,
  };
  const reader = createTreasuryReader({ ...d, moving, store });
  const closer = createWeekCloser({
    ...d,
    chain: d.closerChain ?? d.chain,
    moving,
    store,
    onClosed: () => reader.invalidate(),
  });
  return { reader, closer, store };
}

export type Treasury = ReturnType<typeof createTreasury>;
