import {
  createAllowedCalldataTerms,
  createAllowedMethodsTerms,
  createAllowedTargetsTerms,
  createExactCalldataTerms,
  createExactExecutionTerms,
  createLimitedCallsTerms,
  createLogicalOrWrapperArgs,
  createLogicalOrWrapperTerms,
  createNativeTokenPeriodTransferTerms,
  createNonceTerms,
  createRedeemerTerms,
  createTimestampTerms,
  createValueLteTerms,
  decodeTimestampTerms,
  encodeDelegations,
  hashDelegation,
  ROOT_AUTHORITY,
} from "@metamask/delegation-core";
import { decodeAbiParameters, decodeFunctionData, encodeAbiParameters, encodeFunctionData, encodePacked, hexToBigInt, slice, getAddress, pad, parseAbi, toFunctionSelector, toHex, type Address, type Hex } from "viem";
import { delegationManagerAbi, delegationTypes } from "../abis/delegation.js";

/**
 * Session delegations (MetaMask Delegation Framework 1.3.0) as pure encoding: the root a wallet
 * signs to the co-signer, the leaf the co-signer signs to the executor, their hashes, typed data
 * and the executor's redeem call. Terms come from @metamask/delegation-core, the encoder layer
 * under @metamask/smart-accounts-kit (same encoders, no analytics, and the LogicalOrWrapper terms
 * the kit's builder lacks). Shared by the API, the co-signer and the SDK.
 */
export type Caveat = { enforcer: Address; terms: Hex; args: Hex };
export type Delegation = { delegate: Address; delegator: Address; authority: Hex; caveats: Caveat[]; salt: bigint; signature: Hex };
export type Execution = { target: Address; value: bigint; callData: Hex };

export { ROOT_AUTHORITY };
/** ERC-7579 single call, default (reverting) execution: the only mode sessions use. */
export const SINGLE_DEFAULT_MODE = `0x${"00".repeat(32)}` as Hex;
/** Universal Router `execute(bytes,bytes[],uint256)` and Permit2 `approve(address,address,uint160,uint48)`. */
export const ROUTER_EXECUTE_SELECTOR = "0x3593564c" as const;
export const PERMIT2_APPROVE_SELECTOR = "0x87517c45" as const;
/** The co-signed leaf lives this long (SPEC "Limits": co-signed leaf ttl 120 s). */
export const LEAF_TTL_S = 120;

export const nonceEnforcerAbi = parseAbi(["function currentNonce(address delegationManager, address delegator) view returns (uint256)", "function incrementNonce(address delegationManager)"]);

type Enforcers = Record<string, Address>;
const need = (e: Enforcers, name: string): Address => {
  const a = e[name];
  if (!a) throw new Error(`the pinned environment has no ${name}`);
  return getAddress(a);
};
const caveat = (enforcer: Address, terms: Hex, args: Hex = "0x"): Caveat => ({ enforcer, terms, args });
const u256 = (n: bigint): Hex => pad(toHex(n), { size: 32 });

/** What the chain enforces of a session (SPEC "on_chain_bounds"), in the root's caveats. */
export type RootBounds = {
  router: Address;
  permit2: Address;
  executor: Address;
  /** Timestamp: redeemable only before this second. */
  expires: number;
  /** ValueLte: ETH per call. */
  maxValueWei: bigint;
  /** NativeTokenPeriodTransfer: ETH per fixed 24 h window from `dayStart`; null when ETH is not a session token. */
  dayValueWei: bigint | null;
  dayStart: number;
  /** LimitedCalls: redemptions over the session's life. */
  maxCalls: number;
  /** NonceEnforcer: the wallet's nonce at the delegation manager (a bump revokes every root at once). */
  walletNonce: bigint;
};

/**
 * The root's caveats, in this order:
 * 0. LogicalOrWrapper: group 0 = the router's `execute` only; group 1 = Permit2 `approve` with the
 *    spender (bytes 36..68 of the calldata, a static argument) fixed to the router. Whichever
 *    group the redeemer picks, no other target, method or spender passes.
 * 1. ValueLte, 2. Timestamp, 3. LimitedCalls, 4. Nonce, 5. Redeemer [executor] (neither the
 *    co-signer, the root's delegate, nor anyone else may redeem), 6. NativeTokenPeriodTransfer.
 */
export function rootCaveats(b: RootBounds, enforcers: Enforcers): Caveat[] {
  const targets = (a: Address) => caveat(need(enforcers, "AllowedTargetsEnforcer"), createAllowedTargetsTerms({ targets: [a] }));
  const methods = (s: Hex) => caveat(need(enforcers, "AllowedMethodsEnforcer"), createAllowedMethodsTerms({ selectors: [s] }));
  const spenderIsRouter = caveat(need(enforcers, "AllowedCalldataEnforcer"), createAllowedCalldataTerms({ startIndex: 36, value: encodeAbiParameters([{ type: "address" }], [b.router]) }));
  const groups = [
    [targets(b.router), methods(ROUTER_EXECUTE_SELECTOR)],
    [targets(b.permit2), methods(PERMIT2_APPROVE_SELECTOR), spenderIsRouter],
  ];
  return [logicalOr(groups, enforcers), ...boundCaveats(b, enforcers)];
}

/** What every session root bounds after its LogicalOrWrapper: value, expiry, calls, nonce, redeemer, the ETH day cap. */
function boundCaveats(b: Omit<RootBounds, "router" | "permit2">, enforcers: Enforcers): Caveat[] {
  const caveats = [
    caveat(need(enforcers, "ValueLteEnforcer"), createValueLteTerms({ maxValue: b.maxValueWei })),
    caveat(need(enforcers, "TimestampEnforcer"), createTimestampTerms({ afterThreshold: 0, beforeThreshold: b.expires })),
    caveat(need(enforcers, "LimitedCallsEnforcer"), createLimitedCallsTerms({ limit: b.maxCalls })),
    caveat(need(enforcers, "NonceEnforcer"), createNonceTerms({ nonce: u256(b.walletNonce) })),
    caveat(need(enforcers, "RedeemerEnforcer"), createRedeemerTerms({ redeemers: [b.executor] })),
  ];
  if (b.dayValueWei !== null && b.dayValueWei > 0n) {
    caveats.push(caveat(need(enforcers, "NativeTokenPeriodTransferEnforcer"), createNativeTokenPeriodTransferTerms({ periodAmount: b.dayValueWei, periodDuration: 86_400, startDate: b.dayStart })));
  }
  return caveats;
}

/** Caveats per LogicalOrWrapper group of the root (router execute; Permit2 approve to the router). */
export const ROOT_GROUP_SIZES = [2, 3] as const;

/** The root's group args for a redemption: which LogicalOrWrapper group the execution uses. */
export function withRootGroup(root: Delegation, group: 0 | 1): Delegation {
  return withGroup(root, group, ROOT_GROUP_SIZES);
}

/** A delegation whose first caveat is a LogicalOrWrapper, with the args that pick `group` (of `sizes[group]` caveats). */
export function withGroup(d: Delegation, group: number, sizes: readonly number[]): Delegation {
  const size = sizes[group];
  if (size === undefined) throw new Error(`no LogicalOrWrapper group ${group}`);
  const args = createLogicalOrWrapperArgs({ groupIndex: BigInt(group), caveatArgs: Array.from({ length: size }, () => new Uint8Array(0)) });
  return { ...d, caveats: d.caveats.map((c, i) => (i === 0 ? { ...c, args } : c)) };
}

/** The launchpad's `buy(token, minTokensOut, to)` and `sell(token, tokensIn, minEthOut, to)`. */
export const CURVE_BUY_SELECTOR = toFunctionSelector("buy(address,uint256,address)");
export const CURVE_SELL_SELECTOR = toFunctionSelector("sell(address,uint256,uint256,address)");
/** Byte offsets of `to` in buy and sell calldata (selector + static words before it). */
const BUY_TO_AT = 4 + 32 * 2;
const SELL_TO_AT = 4 + 32 * 3;

export type CurveRootBounds = Omit<RootBounds, "router" | "permit2"> & { launchpad: Address; feeRecipient: Address; wallet: Address; tokens: Address[] };

/**
 * A session's curve root (wallet -> co-signer): the launchpad curve is no router call, so it gets
 * a root of its own. LogicalOrWrapper groups: 0 = plain ETH to the fee recipient (empty calldata);
 * then per curve token 1 + 2i = `buy(token, _, wallet)` and 2 + 2i = `sell(token, _, _, wallet)`,
 * token and recipient pinned by AllowedCalldata. Then the root's own bounds (value, expiry, calls,
 * nonce, the executor as the only redeemer, the ETH day cap). A curve trade redeems it twice in
 * one transaction: the fee, then the trade, each under a leaf of its own.
 */
export function curveRootCaveats(b: CurveRootBounds, enforcers: Enforcers): Caveat[] {
  const targets = (a: Address) => caveat(need(enforcers, "AllowedTargetsEnforcer"), createAllowedTargetsTerms({ targets: [a] }));
  const methods = (s: Hex) => caveat(need(enforcers, "AllowedMethodsEnforcer"), createAllowedMethodsTerms({ selectors: [s] }));
  const word = (at: number, a: Address) => caveat(need(enforcers, "AllowedCalldataEnforcer"), createAllowedCalldataTerms({ startIndex: at, value: encodeAbiParameters([{ type: "address" }], [a]) }));
  const groups = [
    [targets(b.feeRecipient), caveat(need(enforcers, "ExactCalldataEnforcer"), createExactCalldataTerms({ calldata: new Uint8Array(0) }))],
    ...b.tokens.flatMap((t) => [
      [targets(b.launchpad), methods(CURVE_BUY_SELECTOR), word(4, t), word(BUY_TO_AT, b.wallet)],
      [targets(b.launchpad), methods(CURVE_SELL_SELECTOR), word(4, t), word(SELL_TO_AT, b.wallet)],
    ]),
  ];
  return [logicalOr(groups, enforcers), ...boundCaveats(b, enforcers)];
}

/** A LogicalOrWrapper over caveat groups. delegation-core takes empty bytes as a Uint8Array ("0x" is not a hex string to it). */
function logicalOr(groups: Caveat[][], enforcers: Enforcers): Caveat {
  const bytes = (h: Hex) => (h === "0x" ? new Uint8Array(0) : h);
  return caveat(need(enforcers, "LogicalOrWrapperEnforcer"), createLogicalOrWrapperTerms({ caveatGroups: groups.map((g) => g.map((c) => ({ enforcer: c.enforcer, terms: bytes(c.terms), args: bytes(c.args) }))) }));
}

/** Group sizes of a curve root over `tokens` curve tokens, and which group a call uses. */
export const curveGroupSizes = (tokens: number): number[] => [2, ...Array.from({ length: tokens * 2 }, () => 4)];
export const curveGroupOf = (tokenIndex: number, buy: boolean | null): number => (buy === null ? 0 : 1 + 2 * tokenIndex + (buy ? 0 : 1));

/**
 * The leaf's caveats: exactly this execution (target, value, calldata), before `before`, once
 * (LimitedCalls 1), and only while the co-signer's nonce is `cosignerNonce` (its kill switch).
 */
export function leafCaveats(p: { execution: Execution; before: number; cosignerNonce: bigint }, enforcers: Enforcers): Caveat[] {
  return [
    caveat(need(enforcers, "ExactExecutionEnforcer"), createExactExecutionTerms({ execution: { target: p.execution.target, value: p.execution.value, callData: p.execution.callData } })),
    caveat(need(enforcers, "TimestampEnforcer"), createTimestampTerms({ afterThreshold: 0, beforeThreshold: p.before })),
    caveat(need(enforcers, "LimitedCallsEnforcer"), createLimitedCallsTerms({ limit: 1 })),
    caveat(need(enforcers, "NonceEnforcer"), createNonceTerms({ nonce: u256(p.cosignerNonce) })),
  ];
}

/** True when the leaf carries an ExactExecution caveat for exactly this execution. */
export function leafAllows(leaf: Delegation, execution: Execution, enforcers: Enforcers): boolean {
  const terms = createExactExecutionTerms({ execution: { target: execution.target, value: execution.value, callData: execution.callData } }).toLowerCase();
  return leaf.caveats.some((c) => c.enforcer.toLowerCase() === need(enforcers, "ExactExecutionEnforcer").toLowerCase() && c.terms.toLowerCase() === terms);
}

/**
 * True when the leaf is exactly what a co-signer signs (leafCaveats): this execution, once, before
 * a moment at most LEAF_TTL_S (plus a minute of clock skew) after `now`, under a nonce caveat.
 */
export function leafIsOnce(leaf: Delegation, execution: Execution, enforcers: Enforcers, now: number): boolean {
  const names = ["ExactExecutionEnforcer", "TimestampEnforcer", "LimitedCallsEnforcer", "NonceEnforcer"];
  if (leaf.caveats.length !== names.length || !leaf.caveats.every((c, i) => c.enforcer.toLowerCase() === need(enforcers, names[i]!).toLowerCase())) return false;
  const [, stamp, calls] = leaf.caveats;
  const before = decodeTimestampTerms(stamp!.terms).beforeThreshold;
  return leafAllows(leaf, execution, enforcers) && calls!.terms.toLowerCase() === createLimitedCallsTerms({ limit: 1 }).toLowerCase() && before <= now + LEAF_TTL_S + 60;
}

/** The delegation's struct hash (what `authority` of a child and `disabledDelegations` use). */
export const delegationHash = (d: Omit<Delegation, "signature"> & { signature?: Hex }): Hex => hashDelegation({ ...d, signature: d.signature ?? "0x" }) as Hex;

/** EIP-712 typed data the delegator signs (domain: the pinned DelegationManager on this chain). */
export function delegationTypedData(chainId: number, delegationManager: Address, d: Omit<Delegation, "signature">) {
  return {
    domain: { name: "DelegationManager", version: "1", chainId, verifyingContract: delegationManager },
    types: delegationTypes,
    primaryType: "Delegation" as const,
    message: { delegate: d.delegate, delegator: d.delegator, authority: d.authority, caveats: d.caveats.map(({ enforcer, terms }) => ({ enforcer, terms })), salt: d.salt },
  };
}

/** `redeemDelegations([leaf, root])` for one single-call execution. */
export function redeemCalldata(chain: Delegation[], execution: Execution): Hex {
  return redeemManyCalldata([{ chain, execution }]);
}

/** `redeemDelegations` of several single-call executions in one transaction, in order (all or none). */
export function redeemManyCalldata(items: { chain: Delegation[]; execution: Execution }[]): Hex {
  const contexts = items.map((i) => encodeDelegations(i.chain) as Hex);
  const singles = items.map(({ execution: e }) => encodePacked(["address", "uint256", "bytes"], [e.target, e.value, e.callData]));
  return encodeFunctionData({ abi: delegationManagerAbi, functionName: "redeemDelegations", args: [contexts, items.map(() => SINGLE_DEFAULT_MODE), singles] });
}

/** What a redeem of ours can hold: a few items, chains of leaf and root, the caveats we write. */
const REDEEM_BOUNDS = { items: 8, chain: 4, caveats: 32 } as const;
const DELEGATIONS_ABI = [
  {
    type: "tuple[]",
    components: [
      { name: "delegate", type: "address" },
      { name: "delegator", type: "address" },
      { name: "authority", type: "bytes32" },
      { name: "caveats", type: "tuple[]", components: [{ name: "enforcer", type: "address" }, { name: "terms", type: "bytes" }, { name: "args", type: "bytes" }] },
      { name: "salt", type: "uint256" },
      { name: "signature", type: "bytes" },
    ],
  },
] as const;

/**
 * What a `redeemDelegations` call redeems: each item's delegation chain (leaf first, root last)
 * and its single-call execution. null for other calldata, another mode than single-default, or
 * bytes that do not decode: a reader that cannot read refuses.
 */
export function readRedeem(data: Hex): { chain: Delegation[]; execution: Execution }[] | null {
  try {
    const { functionName, args } = decodeFunctionData({ abi: delegationManagerAbi, data });
    if (functionName !== "redeemDelegations") return null;
    const [contexts, modes, calls] = args as readonly [readonly Hex[], readonly Hex[], readonly Hex[]];
    if (contexts.length > REDEEM_BOUNDS.items || contexts.length !== modes.length || modes.length !== calls.length || modes.some((m) => m !== SINGLE_DEFAULT_MODE)) return null;
    return contexts.map((ctx, i) => {
      const c = calls[i]!;
      if ((c.length - 2) / 2 < 52) throw new Error("short execution");
      // viem's decoder counts re-reads of one position (offsets aliasing one blob), so a small
      // calldata cannot decode into an enormous structure.
      const [decoded] = decodeAbiParameters(DELEGATIONS_ABI, ctx);
      if (decoded.length > REDEEM_BOUNDS.chain || decoded.some((d) => d.caveats.length > REDEEM_BOUNDS.caveats)) throw new Error("over the bounds");
      const chain = decoded.map((d) => ({ delegate: getAddress(d.delegate), delegator: getAddress(d.delegator), authority: d.authority, caveats: d.caveats.map((v) => ({ enforcer: getAddress(v.enforcer), terms: v.terms, args: v.args })), salt: d.salt, signature: d.signature }));
      return { chain, execution: { target: getAddress(slice(c, 0, 20)), value: hexToBigInt(slice(c, 20, 52)), callData: (c.length > 106 ? slice(c, 52) : "0x") as Hex } };
    });
  } catch {
    return null;
  }
}

/** JSON form of a delegation (atoms as strings). */
export type DelegationJson = { delegate: Address; delegator: Address; authority: Hex; caveats: Caveat[]; salt: string; signature: Hex };
export const delegationToJson = (d: Delegation): DelegationJson => ({ ...d, salt: d.salt.toString() });
export const delegationFromJson = (d: DelegationJson): Delegation => ({ ...d, salt: BigInt(d.salt) });
