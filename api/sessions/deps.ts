import type { Address } from "viem";
import type { Market } from "../market/index.js";
import type { CosignerPort } from "../ports/cosigner.js";
import type { Ledger, Sides, Trading } from "../trading/index.js";
import type { SessionStore } from "./store.js";
import type { Common } from "../ports/common.js";

/** What the sessions domain reads and writes; built once in services.ts. */
export type SessionDeps = Pick<Common, "config" | "chain"> & {
  market: Market;
  sides: Sides;
  trading: Trading;
  ledger: Ledger;
  store: SessionStore;
  /** null when no co-signer key is configured: grants and trades answer 503 SIGNER_UNAVAILABLE. */
  cosigner: CosignerPort | null;
  now: () => number;
  /**
   * A hosted executor's owner and state (null for any other address): a session may name it only from
   * that owner's wallet, and never once it is retired or closed.
   */
  hostedExecutor?: (executor: Address) => Promise<{ owner: Address; retired: boolean; closed: boolean } | null>;
  /** me/sessions `hosted_available`: whether hosted agents can trade live now (api/ports/hostedAvailability.ts). */
  hostedAvailable: () => Promise<boolean>;
};
