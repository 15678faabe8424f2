import { readFileSync } from "node:fs";
import { z } from "zod";

/** 0x address, checked by shape; kept as written (checksummed or not). */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x address (40 hex digits)") as unknown as z.ZodType<`0x${string}`>;
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/) as unknown as z.ZodType<`0x${string}`>;

export const tokenKind = z.enum(["native", "wrapped", "stable", "crypto", "partner", "stock"]);

export const universeToken = z.object({
  address,
  decimals: z.number().int().min(0).max(36),
  kind: tokenKind,
  native: z.boolean(),
  name: z.string(),
  /** Price feed (8 decimals) giving this token's USD mark, if one exists. */
  feed: address.optional(),
});

export const universePool = z.object({
  id: hex32,
  currency0: address,
  currency1: address,
  fee: z.number().int(),
  tickSpacing: z.number().int(),
  hooks: address,
  symbol0: z.string(),
  symbol1: z.string(),
});

/**
 * Every address of one chain: written by the devnet deploy script to devnet/universe.json, or
 * supplied for the real chain (UNIVERSE_FILE). Config reads both the same way.
 */
export const universeSchema = z.object({
  chainId: z.number().int(),
  /** First block with anything we index. */
  startBlock: z.number().int().min(0),
  contracts: z.object({
    poolManager: address,
    positionManager: address,
    v4Quoter: address,
    stateView: address,
    universalRouter: address,
    permit2: address,
    multicall3: address,
    weth9: address,
    delegationManager: address,
    statelessDelegator: address,
    enforcers: z.record(address),
    stockRegistry: address,
    stockBeacon: address,
    launchpad: address,
    partnerAgentVault: address,
    sanctionsList: address,
  }),
  /** Core assets by symbol (ETH, WETH, USDG, the BTC asset, the partner token, two stocks). */
  tokens: z.record(universeToken),
  pools: z.array(universePool),
  /** Devnet only: fixture tokens and accounts that tests and screening use. */
  devnet: z
    .object({
      accounts: z.record(address),
      fixtures: z.record(address),
      deployedAt: z.number().int(),
      deployMs: z.number(),
      /** The deploy's last block: a node loaded from the snapshot has no state before it. */
      lastBlock: z.number().int().min(0).optional(),
    })
    .optional(),
});

export type Universe = z.infer<typeof universeSchema>;
export type UniversePool = z.infer<typeof universePool>;

export function readUniverse(path: string): Universe {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`cannot read universe file ${path}: ${(err as Error).message}`);
  }
  const parsed = universeSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`universe file ${path}: ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}
