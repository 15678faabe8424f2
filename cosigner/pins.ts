import type { Address } from "viem";

/** What the co-signer pins of the chain: its own copy, not the API's answers. */
export type CosignerPins = {
  chainId: number;
  delegationManager: Address;
  multicall3: Address;
  enforcers: Record<string, Address>;
  router: Address;
  weth: Address;
  feeRecipient: Address;
  permit2: Address;
  /**
   * Where it reads feedless tokens' prices itself (CAP_PRICE): v4 pools' state and Swap logs, the
   * launchpad's curves and Trade logs.
   */
  stateView: Address;
  poolManager: Address;
  launchpad: Address;
  /** The stock issuer's beacon: a bound token behind it is major, as the API bills it (its `stock_beacon` reading). */
  stockBeacon: Address;
  /** The sanctions list it reads at every co-signing (a Chainalysis-style isSanctioned oracle). */
  sanctionsList: Address;
  /**
   * Tokens it can price and class: address, decimals, oracle feed (or a fixed USD price: USDG), and
   * whether the fee class is major.
   */
  tokens: {
    address: Address;
    decimals: number;
    feed: Address | null;
    fixedUsd?: number;
    stock: boolean;
    major: boolean;
  }[];
};
