import {
  createAllowedCalldataTerms,
  createAllowedMethodsTerms,
  createAllowedTargetsTerms,
  createExactExecutionTerms,
  createLimitedCallsTerms,
  createLogicalOrWrapperArgs,
  createLogicalOrWrapperTerms,
  createNativeBalanceChangeTerms,
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
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  hexToBigInt,
  hexToBytes,
  slice,
  getAddress,
  pad,
  parseAbi,
  toFunctionSelector,
  toHex,
  type Address,
  type Hex,
} from "viem";
import { delegationManagerAbi, delegationTypes } from "../abis/delegation.js";

/**
 * Session delegations (MetaMask Delegation Framework 1.3.0) as pure encoding: the root a wallet
 * signs to the co-signer, the leaf the co-signer signs to the executor, their hashes, typed data
 * and the executor's redeem call. Terms come from @metamask/delegation-core, the encoder layer
 * under @metamask/smart-accounts-kit (same encoders, no analytics, and the LogicalOrWrapper terms
 * the kit's builder lacks). Shared by the API, the co-signer and the SDK.
 */
export type Caveat = { enforcer: Address; terms: Hex; args: Hex };
export type Delegation = {
  delegate: Address;
  delegator: Address;
  authority: Hex;
  caveats: Caveat[];
  salt: bigint;
  signature: Hex;
};
export type Execution = { target: Address; value: bigint; callData: Hex };

export { ROOT_AUTHORITY };
/** ERC-7579 single call, default (reverting) execution: the only mode sessions redeem in. */
export const SINGLE_DEFAULT_MODE = `0x${"00".repeat(32)}` as Hex;
/** ERC-7579 batch call, default execution: only inside the wallet's own `execute` (walletBatch). */
export const BATCH_DEFAULT_MODE = `0x01${"00".repeat(31)}` as Hex;
/** The 7702 delegator's ERC-7579 `execute(bytes32 mode, bytes executionCalldata)` (onlyEntryPointOrSelf). */
export const walletExecuteAbi = parseAbi(["function execute(bytes32 mode, bytes executionCalldata)"]);
const EXECUTIONS_ABI = [
  {
    type: "tuple[]",
    components: [
      { name: "target", type: "address" },
      { name: "value", type: "uint256" },
      { name: "callData", type: "bytes" },
    ],
  },
] as const;
/** Universal Router `execute(bytes,bytes[],uint256)` and Permit2 `approve(address,address,uint160,uint48)`. */
export const ROUTER_EXECUTE_SELECTOR = "0x3593564c" as const;
export const PERMIT2_APPROVE_SELECTOR = "0x87517c45" as const;
/** The co-signed leaf lives this long (SPEC "Limits": co-signed leaf ttl 120 s). */
export const LEAF_TTL_S = 120;

export const nonceEnforcerAbi = parseAbi([
  "function currentNonce(address delegationManager, address delegator) view returns (uint256)",
  "function incrementNonce(address delegationManager)",
]);

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
  const targets = (a: Address) =>
    caveat(need(enforcers, "AllowedTargetsEnforcer"), createAllowedTargetsTerms({ targets: [a] }));
  const methods = (s: Hex) =>
    caveat(need(enforcers, "AllowedMethodsEnforcer"), createAllowedMethodsTerms({ selectors: [s] }));
  const spenderIsRouter = caveat(
    need(enforcers, "AllowedCalldataEnforcer"),
    createAllowedCalldataTerms({ startIndex: 36, value: encodeAbiParameters([{ type: "address" }], [b.router]) }),
  );
  const groups = [
    [targets(b.router), methods(ROUTER_EXECUTE_SELECTOR)],
    [targets(b.permit2), methods(PERMIT2_APPROVE_SELECTOR), spenderIsRouter],
  ];
  return [logicalOr(groups, enforcers), ...boundCaveats(b, enforcers)];
}

/**
 * What every session root bounds after its LogicalOrWrapper: value, expiry, calls, nonce, redeemer, the ETH day cap.
 */
function boundCaveats(b: Omit<RootBounds, "router" | "permit2">, enforcers: Enforcers): Caveat[] {
  const caveats = [
    caveat(need(enforcers, "ValueLteEnforcer"), createValueLteTerms({ maxValue: b.maxValueWei })),
    caveat(
      need(enforcers, "TimestampEnforcer"),
      createTimestampTerms({ afterThreshold: 0, beforeThreshold: b.expires }),
    ),
    caveat(need(enforcers, "LimitedCallsEnforcer"), createLimitedCallsTerms({ limit: b.maxCalls })),
    caveat(need(enforcers, "NonceEnforcer"), createNonceTerms({ nonce: u256(b.walletNonce) })),
    caveat(need(enforcers, "RedeemerEnforcer"), createRedeemerTerms({ redeemers: [b.executor] })),
  ];
  if (b.dayValueWei !== null && b.dayValueWei > 0n) {
    caveats.push(
      caveat(
        need(enforcers, "NativeTokenPeriodTransferEnforcer"),
        createNativeTokenPeriodTransferTerms({
          periodAmount: b.dayValueWei,
          periodDuration: 86_400,
          startDate: b.dayStart,
        }),
      ),
    );
  }
  return caveats;
}

/** Caveats per LogicalOrWrapper group of the root (router execute; Permit2 approve to the router). */
export const ROOT_GROUP_SIZES = [2, 3] as const;

/** The root's group args for a redemption: which LogicalOrWrapper group the execution uses. */
export function withRootGroup(root: Delegation, group: 0 | 1): Delegation {
  return withGroup(root, group, ROOT_GROUP_SIZES);
}

/**
 * A delegation whose first caveat is a LogicalOrWrapper, with the args that pick `group` (of `sizes[group]` caveats).
 */
export function withGroup(d: Delegation, group: number, sizes: readonly number[]): Delegation {
  const size = sizes[group];
  if (size === undefined) throw new Error(`no LogicalOrWrapper group ${group}`);
  const args = createLogicalOrWrapperArgs({
    groupIndex: BigInt(group),
    caveatArgs: Array.from({ length: size }, () => new Uint8Array(0)),
  });
  return { ...d, caveats: d.caveats.map((c, i) => (i === 0 ? { ...c, args } : c)) };
}

/** The launchpad's `buy(token, minTokensOut, to)` and `sell(token, tokensIn, minEthOut, to)`. */
export const CURVE_BUY_SELECTOR = toFunctionSelector("buy(address,uint256,address)");
export const CURVE_SELL_SELECTOR = toFunctionSelector("sell(address,uint256,uint256,address)");

/** `abi.encode(Execution[])`, the ERC-7579 batch encoding (ExecutionLib.decodeBatch's input). */
export const encodeBatch = (executions: Execution[]): Hex =>
  encodeAbiParameters(EXECUTIONS_ABI, [
    executions.map((e) => ({ target: e.target, value: e.value, callData: e.callData })),
  ]);

/**
 * One single-call execution that runs `executions` in order, all or none: the wallet calling its
 * own ERC-7579 `execute(BATCH_DEFAULT_MODE, abi.encode(executions))` (the 7702 delegator allows
 * calls from itself). The delegation manager sees one single call, so a root can keep its
 * single-mode pins (AllowedTargets, AllowedCalldata, ...), which revert in batch mode.
 */
export function walletBatch(wallet: Address, executions: Execution[]): Execution {
  return {
    target: getAddress(wallet),
    value: 0n,
    callData: encodeFunctionData({
      abi: walletExecuteAbi,
      functionName: "execute",
      args: [BATCH_DEFAULT_MODE, encodeBatch(executions)],
    }),
  };
}

/**
 * The calls of a walletBatch execution: null unless it is the wallet (`wallet`, when given)
 * calling its own `execute` in batch-default mode, with no ETH, canonically encoded. decodeBatch
 * trusts offsets and lengths (DF documents/Security.md): a batch that does not re-encode to the
 * same bytes may decode otherwise on chain, so it is not read at all.
 */
export function readWalletBatch(e: Execution, wallet?: Address): Execution[] | null {
  try {
    if ((wallet && getAddress(e.target) !== getAddress(wallet)) || e.value !== 0n) return null;
    const { args } = decodeFunctionData({ abi: walletExecuteAbi, data: e.callData });
    if (args[0].toLowerCase() !== BATCH_DEFAULT_MODE) return null;
    const [items] = decodeAbiParameters(EXECUTIONS_ABI, args[1]);
    const calls = items.map((i) => ({ target: getAddress(i.target), value: i.value, callData: i.callData }));
    return walletBatch(e.target, calls).callData.toLowerCase() === e.callData.toLowerCase() ? calls : null;
  } catch {
    return null;
  }
}

export type CurveRootBounds = Omit<RootBounds, "router" | "permit2"> & {
  launchpad: Address;
  feeRecipient: Address;
  wallet: Address;
  tokens: Address[];
};

/**
 * A session's curve root (wallet -> co-signer). A curve trade is one walletBatch of two calls,
 * [plain ETH to the fee recipient, the launchpad's buy or sell]: the fee and the trade are one
 * execution, redeemed together or not at all. LogicalOrWrapper groups, per curve token
 * 2i = buy, 2i + 1 = sell: the wallet as target, and its calldata pinned byte for byte except the
 * two ETH values and the trade's amounts (curveBatchPins): mode, every offset and length of the
 * batch (so decodeBatch reads what the pins saw), the fee recipient with empty calldata first, then
 * the launchpad, the method, the token and the wallet as recipient. Then the root's bounds: no ETH
 * on the outer call, the wallet's ETH decrease per trade (NativeBalanceChange: fee and buy
 * together), expiry, calls, nonce, the executor as the only redeemer. The ETH day cap
 * (NativeTokenPeriodTransfer) counts the outer call's value, always 0 here: it is the co-signer's.
 */
export function curveRootCaveats(b: CurveRootBounds, enforcers: Enforcers): Caveat[] {
  const targets = caveat(
    need(enforcers, "AllowedTargetsEnforcer"),
    createAllowedTargetsTerms({ targets: [getAddress(b.wallet)] }),
  );
  const pin = (p: { start: number; value: Hex }) =>
    caveat(
      need(enforcers, "AllowedCalldataEnforcer"),
      createAllowedCalldataTerms({ startIndex: p.start, value: p.value }),
    );
  const groups = b.tokens.flatMap((t) => [true, false].map((buy) => [targets, ...curveBatchPins(b, t, buy).map(pin)]));
  return [
    logicalOr(groups, enforcers),
    caveat(need(enforcers, "ValueLteEnforcer"), createValueLteTerms({ maxValue: 0n })),
    caveat(
      need(enforcers, "NativeBalanceChangeEnforcer"),
      createNativeBalanceChangeTerms({ recipient: b.wallet, balance: b.maxValueWei, changeType: 1 }),
    ),
    ...boundCaveats({ ...b, dayValueWei: null }, enforcers).slice(1),
  ];
}

/**
 * The fixed byte ranges of a curve trade's walletBatch calldata: the encoding of [fee, trade]
 * with every free word (the two values, the trade's amounts) at 0 and again at all ones; the
 * ranges where both agree are what the root pins.
 */
export function curveBatchPins(
  b: { launchpad: Address; feeRecipient: Address; wallet: Address },
  token: Address,
  buy: boolean,
): { start: number; value: Hex }[] {
  const at = (n: bigint) => {
    const call = buy
      ? encodeFunctionData({ abi: curveAbi, functionName: "buy", args: [token, n, b.wallet] })
      : encodeFunctionData({ abi: curveAbi, functionName: "sell", args: [token, n, n, b.wallet] });
    return hexToBytes(
      walletBatch(b.wallet, [
        { target: b.feeRecipient, value: n, callData: "0x" },
        { target: b.launchpad, value: n, callData: call },
      ]).callData,
    );
  };
  const [lo, hi] = [at(0n), at(2n ** 256n - 1n)];
  const out: { start: number; value: Hex }[] = [];
  for (let i = 0; i < lo.length; ) {
    if (lo[i] !== hi[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < lo.length && lo[j] === hi[j]) j++;
    out.push({ start: i, value: toHex(lo.slice(i, j)) });
    i = j;
  }
  return out;
}
const curveAbi = parseAbi([
  "function buy(address token, uint256 minTokensOut, address to)",
  "function sell(address token, uint256 tokensIn, uint256 minEthOut, address to)",
]);

/**
 * A LogicalOrWrapper over caveat groups. delegation-core takes empty bytes as a Uint8Array ("0x" is not a hex string to
 * it).
 */
function logicalOr(groups: Caveat[][], enforcers: Enforcers): Caveat {
  const bytes = (h: Hex) => (h === "0x" ? new Uint8Array(0) : h);
  return caveat(
    need(enforcers, "LogicalOrWrapperEnforcer"),
    createLogicalOrWrapperTerms({
      caveatGroups: groups.map((g) =>
        g.map((c) => ({ enforcer: c.enforcer, terms: bytes(c.terms), args: bytes(c.args) })),
      ),
    }),
  );
}

/** Group sizes of a curve root over `tokens` curve tokens (target + pins), and which group a trade uses. */
export const curveGroupSizes = (tokens: number): number[] => Array.from({ length: tokens * 2 }, () => 5);
export const curveGroupOf = (tokenIndex: number, buy: boolean): number => 2 * tokenIndex + (buy ? 0 : 1);

/**
 * The leaf's caveats: exactly this execution (target, value, calldata), before `before`, once
 * (LimitedCalls 1), and only while the co-signer's nonce is `cosignerNonce` (its kill switch).
 */
export function leafCaveats(
  p: { execution: Execution; before: number; cosignerNonce: bigint },
  enforcers: Enforcers,
): Caveat[] {
  return [
    caveat(
      need(enforcers, "ExactExecutionEnforcer"),
      createExactExecutionTerms({
        execution: { target: p.execution.target, value: p.execution.value, callData: p.execution.callData },
      }),
    ),
    caveat(
      need(enforcers, "TimestampEnforcer"),
      createTimestampTerms({ afterThreshold: 0, beforeThreshold: p.before }),
    ),
    caveat(need(enforcers, "LimitedCallsEnforcer"), createLimitedCallsTerms({ limit: 1 })),
    caveat(need(enforcers, "NonceEnforcer"), createNonceTerms({ nonce: u256(p.cosignerNonce) })),
  ];
}

/** True when the leaf carries an ExactExecution caveat for exactly this execution. */
export function leafAllows(leaf: Delegation, execution: Execution, enforcers: Enforcers): boolean {
  const terms = createExactExecutionTerms({
    execution: { target: execution.target, value: execution.value, callData: execution.callData },
  }).toLowerCase();
  return leaf.caveats.some(
    (c) =>
      c.enforcer.toLowerCase() === need(enforcers, "ExactExecutionEnforcer").toLowerCase() &&
      c.terms.toLowerCase() === terms,
  );
}

/**
 * True when the leaf is exactly what a co-signer signs (leafCaveats): this execution, once, before
 * a moment at most LEAF_TTL_S (plus a minute of clock skew) after `now`, under a nonce caveat.
 */
export function leafIsOnce(leaf: Delegation, execution: Execution, enforcers: Enforcers, now: number): boolean {
  const names = ["ExactExecutionEnforcer", "TimestampEnforcer", "LimitedCallsEnforcer", "NonceEnforcer"];
  if (
    leaf.caveats.length !== names.length ||
    !leaf.caveats.every((c, i) => c.enforcer.toLowerCase() === need(enforcers, names[i]!).toLowerCase())
  )
    return false;
  const [, stamp, calls] = leaf.caveats;
  const before = decodeTimestampTerms(stamp!.terms).beforeThreshold;
  return (
    leafAllows(leaf, execution, enforcers) &&
    calls!.terms.toLowerCase() === createLimitedCallsTerms({ limit: 1 }).toLowerCase() &&
    before <= now + LEAF_TTL_S + 60
  );
}

/** The delegation's struct hash (what `authority` of a child and `disabledDelegations` use). */
export const delegationHash = (d: Omit<Delegation, "signature"> & { signature?: Hex }): Hex =>
  hashDelegation({ ...d, signature: d.signature ?? "0x" }) as Hex;

/** EIP-712 typed data the delegator signs (domain: the pinned DelegationManager on this chain). */
export function delegationTypedData(chainId: number, delegationManager: Address, d: Omit<Delegation, "signature">) {
  return {
    domain: { name: "DelegationManager", version: "1", chainId, verifyingContract: delegationManager },
    types: delegationTypes,
    primaryType: "Delegation" as const,
    message: {
      delegate: d.delegate,
      delegator: d.delegator,
      authority: d.authority,
      caveats: d.caveats.map(({ enforcer, terms }) => ({ enforcer, terms })),
      salt: d.salt,
    },
  };
}

/** `redeemDelegations([leaf, root])` for one single-call execution. */
export function redeemCalldata(chain: Delegation[], execution: Execution): Hex {
  return redeemManyCalldata([{ chain, execution }]);
}

/** `redeemDelegations` of several single-call executions in one transaction, in order (all or none). */
export function redeemManyCalldata(items: { chain: Delegation[]; execution: Execution }[]): Hex {
  const contexts = items.map((i) => encodeDelegations(i.chain) as Hex);
  const singles = items.map(({ execution: e }) =>
    encodePacked(["address", "uint256", "bytes"], [e.target, e.value, e.callData]),
  );
  return encodeFunctionData({
    abi: delegationManagerAbi,
    functionName: "redeemDelegations",
    args: [contexts, items.map(() => SINGLE_DEFAULT_MODE), singles],
  });
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
      {
        name: "caveats",
        type: "tuple[]",
        components: [
          { name: "enforcer", type: "address" },
          { name: "terms", type: "bytes" },
          { name: "args", type: "bytes" },
        ],
      },
      { name: "salt", type: "uint256" },
      { name: "signature", type: "bytes" },
    ],
  },
] as const;

/**
 * What a `redeemDelegations` call redeems: each item's delegation chain (leaf first, root last),
 * its single-call execution, and the calls that execution makes (the root delegator's walletBatch
 * read back, else the execution itself). null for other calldata, another mode than single-default, or
 * bytes that do not decode: a reader that cannot read refuses.
 */
export function readRedeem(data: Hex): { chain: Delegation[]; execution: Execution; calls: Execution[] }[] | null {
  try {
    const { functionName, args } = decodeFunctionData({ abi: delegationManagerAbi, data });
    if (functionName !== "redeemDelegations") return null;
    const [contexts, modes, calls] = args as readonly [readonly Hex[], readonly Hex[], readonly Hex[]];
    if (
      contexts.length > REDEEM_BOUNDS.items ||
      contexts.length !== modes.length ||
      modes.length !== calls.length ||
      modes.some((m) => m !== SINGLE_DEFAULT_MODE)
    )
      return null;
    return contexts.map((ctx, i) => {
      const c = calls[i]!;
      if ((c.length - 2) / 2 < 52) throw new Error("short execution");
      // viem's decoder counts re-reads of one position (offsets aliasing one blob), so a small
      // calldata cannot decode into an enormous structure.
      const [decoded] = decodeAbiParameters(DELEGATIONS_ABI, ctx);
      if (decoded.length > REDEEM_BOUNDS.chain || decoded.some((d) => d.caveats.length > REDEEM_BOUNDS.caveats))
        throw new Error("over the bounds");
      const chain = decoded.map((d) => ({
        delegate: getAddress(d.delegate),
        delegator: getAddress(d.delegator),
        authority: d.authority,
        caveats: d.caveats.map((v) => ({ enforcer: getAddress(v.enforcer), terms: v.terms, args: v.args })),
        salt: d.salt,
        signature: d.signature,
      }));
      const execution = {
        target: getAddress(slice(c, 0, 20)),
        value: hexToBigInt(slice(c, 20, 52)),
        callData: (c.length > 106 ? slice(c, 52) : "0x") as Hex,
      };
      // A curve trade's execution is the root delegator's own batch: its calls are what moves value.
      const root = chain.at(-1);
      return { chain, execution, calls: (root && readWalletBatch(execution, root.delegator)) ?? [execution] };
    });
  } catch {
    return null;
  }
}

/** JSON form of a delegation (atoms as strings). */
export type DelegationJson = {
  delegate: Address;
  delegator: Address;
  authority: Hex;
  caveats: Caveat[];
  salt: string;
  signature: Hex;
};
export const delegationToJson = (d: Delegation): DelegationJson => ({ ...d, salt: d.salt.toString() });
export const delegationFromJson = (d: DelegationJson): Delegation => ({ ...d, salt: BigInt(d.salt) });
