import type { Address } from "viem";

/** The caveat enforcers a session or curve root names (the MetaMask Delegation Framework's contract names). */
export const ENFORCER_NAMES = [
  "LogicalOrWrapperEnforcer",
  "AllowedTargetsEnforcer",
  "AllowedMethodsEnforcer",
  "AllowedCalldataEnforcer",
  "ValueLteEnforcer",
  "TimestampEnforcer",
  "LimitedCallsEnforcer",
  "NonceEnforcer",
  "RedeemerEnforcer",
  "NativeTokenPeriodTransferEnforcer",
  "ExactExecutionEnforcer",
  "NativeBalanceChangeEnforcer",
] as const;

/**
 * A fake enforcer map for tests without a chain: each name at its own small address (0x...01,
 * 0x...02, in ENFORCER_NAMES' order), so a caveat's enforcer names its rule and no two collide.
 */
export const fakeEnforcers = (): Record<string, Address> =>
  Object.fromEntries(ENFORCER_NAMES.map((n, i) => [n, `0x${(i + 1).toString(16).padStart(40, "0")}` as Address]));
