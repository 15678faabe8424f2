import type { Hex, PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { CosignerPort } from "../api/ports/cosigner.js";
import type { Db } from "../api/ports/store/db.js";
import { ConfigError, type Config } from "../lib/config.js";
import { devnetAccount } from "../lib/devnetAccount.js";
import { createCosigner, type CosignerPins } from "./cosigner.js";
import { createExecutorKeys } from "./executors.js";
import type { ExecutorPort } from "../api/ports/executors.js";

export { createCosigner, type CosignerPins } from "./cosigner.js";
export { checkExecution, MAX_SLIPPAGE_BPS, PRICE_TOLERANCE_BPS } from "./checks.js";

/** Account 2 of the devnet mnemonic is the devnet's co-signer (devnet/deploy.ts ACCOUNT_ROLES). */
const DEVNET_COSIGNER_INDEX = 2;

/** The co-signer's pins from the service's universe: contracts, fee recipient, and the tokens it can price. */
export function pinsOf(config: Config): CosignerPins {
  const c = config.contracts;
  return {
    chainId: config.chainId,
    delegationManager: c.delegationManager,
    multicall3: c.multicall3,
    enforcers: c.enforcers,
    router: c.universalRouter,
    weth: config.tokens.WETH!.address,
    feeRecipient: config.feeRecipient,
    permit2: c.permit2,
    stateView: c.stateView,
    poolManager: c.poolManager,
    launchpad: c.launchpad,
    stockBeacon: c.stockBeacon,
    sanctionsList: c.sanctionsList,
    // USDG without a feed is worth its dollar (SPEC's fixed mark); other feedless tokens need an owner-signed mark.
    tokens: Object.values(config.tokens).map((t) => ({
      address: t.address,
      decimals: t.decimals,
      feed: t.feed,
      ...(!t.feed && t.symbol === "USDG" ? { fixedUsd: 1 } : {}),
      stock: t.kind === "stock",
      major: t.kind !== "partner",
    })),
  };
}

/**
 * The in-process co-signer: its key comes from COSIGNER_KEY (read here, never by the API's code),
 * or on the devnet from anvil's account 2. null when there is no key (sessions then answer 503).
 */
export function cosignerFromEnv(d: {
  config: Config;
  db: Db;
  chain: PublicClient;
  clock: () => number;
  env?: Record<string, string | undefined>;
}): CosignerPort | null {
  const env = d.env ?? process.env;
  const key = env.COSIGNER_KEY;
  if (key !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(key))
    throw new ConfigError("COSIGNER_KEY", "must be 0x followed by 64 hex characters");
  const account = key ? privateKeyToAccount(key as Hex) : d.config.devnet ? devnetAccount(DEVNET_COSIGNER_INDEX) : null;
  if (!account) return null;
  if (d.config.cosigner && d.config.cosigner.toLowerCase() !== account.address.toLowerCase())
    throw new ConfigError(
      "COSIGNER_KEY",
      `signs as ${account.address}, but the service publishes co-signer ${d.config.cosigner} (COSIGNER_ADDRESS)`,
    );
  return createCosigner({
    account,
    db: d.db,
    chain: d.chain,
    pins: pinsOf(d.config),
    clock: d.clock,
    frozen: env.COSIGNER_FROZEN === "1",
  });
}

/**
 * The executor signing service (its own process, never the co-signer's): hosted agents' executor
 * keys sealed under EXECUTOR_KEYS_SECRET (a fixed public secret on the devnet), and its own pins to
 * read what a redeem pays. null without a secret (live hosted agents then answer SIGNER_REQUIRED).
 */
export function executorsFromConfig(d: {
  config: Config;
  db: Db;
  clock: () => number;
  chain?: PublicClient;
}): ExecutorPort | null {
  const c = d.config;
  if (!c.executorKeysSecret) return null;
  const stockTokens = Object.values(c.tokens)
    .filter((t) => t.kind === "stock")
    .map((t) => t.address);
  const payout = {
    router: c.contracts.universalRouter,
    launchpad: c.contracts.launchpad,
    weth: c.tokens.WETH!.address,
    feeRecipient: c.feeRecipient,
  };
  return createExecutorKeys({
    db: d.db,
    secret: c.executorKeysSecret,
    chainId: c.chainId,
    clock: d.clock,
    delegationManager: c.contracts.delegationManager,
    stockTokens,
    chain: d.chain,
    payout,
  });
}
