import { zeroAddress, type Address, type ContractFunctionParameters, type PublicClient } from "viem";
import { getDelegation } from "viem/actions";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi, sanctionsListAbi, stockRegistryAbi, stockTokenAbi } from "../../abis/fixtures.js";
import { multicall3Abi } from "../../abis/multicall3.js";
import { permit2Abi } from "../../abis/permit2.js";
import type { Config } from "../../lib/config.js";
import { QUOTE_GAS } from "../../lib/quoter.js";
import { cappedMulticall, UNTRUSTED_GAS, type BudgetedCall } from "../../lib/chain.js";
import { Refusal, rpc } from "../errors/index.js";
import { lc } from "../../lib/address.js";

/** One call's outcome inside the batch: its result, or why it failed (a revert, a bad answer). */
export type CallOutcome<T = unknown> = { ok: true; result: T } | { ok: false; error: string };

/** The launchpad curve of one token: `curves(token)` and `feeBps(token)`, plus the graduation level. */
export type CurveSnapshot = {
  state: {
    creator: Address;
    feeMode: number;
    graduated: boolean;
    launchedAt: bigint;
    virtualEth: bigint;
    virtualToken: bigint;
    realEth: bigint;
  } | null;
  /** Protocol, creator and snipe-tax fees in bps. */
  fees: { protocol: bigint; creator: bigint; snipe: bigint } | null;
  graduationWei: bigint | null;
};

/** The wallet's side of a trade: what it holds and what it has allowed. */
export type WalletSnapshot = {
  address: Address;
  sanctioned: boolean | null;
  eth: bigint | null;
  /** balanceOf per ERC-20 asked (lower-case address). */
  balances: Record<string, bigint | null>;
  /** ERC-20 allowance of the input token to Permit2 and to the launchpad (null: not asked or unreadable). */
  allowanceToPermit2: bigint | null;
  allowanceToCurve: bigint | null;
  /** Permit2's allowance of the router for the input token: amount, expiration, nonce. */
  routerPermit: readonly [bigint, number, number] | null;
  /** The stock registry's block of this wallet, when a stock token is involved. */
  stockBlocked: boolean | null;
  /** The EIP-7702 delegate the wallet's code designates (null: none), when asked; undefined when not. */
  delegation: Address | null | undefined;
};

export type ChainSnapshot = {
  block: bigint;
  /** The block's timestamp (unix s). */
  time: number;
  baseFee: bigint;
  /** Extra calls in the order given (route quotes). */
  calls: CallOutcome[];
  curve: CurveSnapshot | null;
  /** Per stock token asked (lower-case address): its own pause; plus the registry's global pause. */
  stock: { paused: Record<string, boolean | null>; registryPaused: boolean | null } | null;
  wallet: WalletSnapshot | null;
};

export type SnapshotRequest = {
  /** Calls the caller decodes itself (route quotes, SNAPSHOT_GAS.quote each), answered in order in `calls`. */
  calls: ContractFunctionParameters[];
  curveToken: Address | null;
  stockTokens: Address[];
  wallet: { address: Address; tokens: Address[]; inputToken: Address | null; withDelegation: boolean } | null;
};

/**
 * Gas each call of the snapshot may burn, by kind (lib/chain cappedMulticall gives each call its
 * own budget; the eth_call's cap is their sum plus the aggregator's own).
 * - head: Multicall3's basefee, timestamp and block number (a few hundred gas).
 * - pinned: views of contracts the service deployed or pinned (launchpad, sanctions list, stock
 *   registry, Permit2, Multicall3's ETH balance): each under 20k.
 * - quote: one route's quote, V4Quoter on hookless pools or the launchpad: lib/quoter QUOTE_GAS
 *   (measured on the devnet: an honest 2-hop quote crossing about 55 initialized ticks fits).
 * Untrusted token views (balanceOf, allowance, a stock token's pause) get UNTRUSTED_GAS each.
 */
export const SNAPSHOT_GAS = { head: 50_000n, pinned: 100_000n, quote: QUOTE_GAS } as const;

type Contracts = Config["contracts"];
type SnapshotWallet = NonNullable<SnapshotRequest["wallet"]>;

/** The batch being planned: each call with its gas budget; `add` gives the call's index in the answer. */
type Batch = BudgetedCall[];
const add = (batch: Batch, gas: bigint, call: ContractFunctionParameters) => batch.push({ ...call, gas }) - 1;
const pinned = (batch: Batch, call: ContractFunctionParameters) => add(batch, SNAPSHOT_GAS.pinned, call);
const untrusted = (batch: Batch, call: ContractFunctionParameters) => add(batch, UNTRUSTED_GAS, call);

/** The head reads: Multicall3's basefee, timestamp and block number. */
function planHead(batch: Batch, c: Contracts) {
  const head = (functionName: string) =>
    add(batch, SNAPSHOT_GAS.head, { address: c.multicall3, abi: multicall3Abi, functionName });
  return { baseFee: head("getBasefee"), time: head("getCurrentBlockTimestamp"), block: head("getBlockNumber") };
}

/** The launchpad's curve of one token, its fees and the graduation level (pinned reads). */
function planCurve(batch: Batch, c: Contracts, token: Address) {
  return {
    state: pinned(batch, { address: c.launchpad, abi: launchpadAbi, functionName: "curves", args: [token] }),
    fees: pinned(batch, { address: c.launchpad, abi: launchpadAbi, functionName: "feeBps", args: [token] }),
    graduation: pinned(batch, { address: c.launchpad, abi: launchpadAbi, functionName: "graduationWei" }),
  };
}

/** The wallet's pinned reads: sanctions, ETH, the router's Permit2 allowance, the stock registry's block. */
function planWalletPinned(batch: Batch, c: Contracts, w: SnapshotWallet, stock: boolean) {
  const sanctionsList = { address: c.sanctionsList, abi: sanctionsListAbi };
  return {
    sanctioned: pinned(batch, { ...sanctionsList, functionName: "isSanctioned", args: [w.address] }),
    eth: pinned(batch, { address: c.multicall3, abi: multicall3Abi, functionName: "getEthBalance", args: [w.address] }),
    routerPermit: w.inputToken
      ? pinned(batch, {
          address: c.permit2,
          abi: permit2Abi,
          functionName: "allowance",
          args: [w.address, w.inputToken, c.universalRouter],
        })
      : null,
    stockBlocked: stock
      ? pinned(batch, { address: c.stockRegistry, abi: stockRegistryAbi, functionName: "isBlocked", args: [w.address] })
      : null,
  };
}

/** The wallet's untrusted token views: balances, and the input token's allowances to Permit2 and the launchpad. */
function planWalletUntrusted(batch: Batch, c: Contracts, w: SnapshotWallet) {
  const allowance = (spender: Address) =>
    w.inputToken
      ? untrusted(batch, {
          address: w.inputToken,
          abi: erc20Abi,
          functionName: "allowance",
          args: [w.address, spender],
        })
      : null;
  return {
    balances: w.tokens
      .filter((t) => t !== zeroAddress)
      .map(
        (t) =>
          [
            lc(t),
            untrusted(batch, { address: t, abi: erc20Abi, functionName: "balanceOf", args: [w.address] }),
          ] as const,
      ),
    toPermit2: allowance(c.permit2),
    toCurve: allowance(c.launchpad),
  };
}

/** Every call of a snapshot, planned into one batch in budget order (see readChainSnapshot). */
function planSnapshot(c: Contracts, req: SnapshotRequest) {
  const batch: Batch = [];
  const head = planHead(batch, c);
  const curveAt = req.curveToken ? planCurve(batch, c, req.curveToken) : null;
  const registryPausedAt = req.stockTokens.length
    ? pinned(batch, { address: c.stockRegistry, abi: stockRegistryAbi, functionName: "paused" })
    : null;
  const w = req.wallet;
  const walletPinned = w ? planWalletPinned(batch, c, w, req.stockTokens.length > 0) : null;
  const quotesAt = req.calls.map((call) => add(batch, SNAPSHOT_GAS.quote, call));
  const stockPausedAt = req.stockTokens.map(
    (t) => [lc(t), untrusted(batch, { address: t, abi: stockTokenAbi, functionName: "paused" })] as const,
  );
  const walletUntrusted = w ? planWalletUntrusted(batch, c, w) : null;
  return { batch, head, curveAt, registryPausedAt, walletPinned, quotesAt, stockPausedAt, walletUntrusted };
}

type SnapshotPlan = ReturnType<typeof planSnapshot>;
type BatchResults = Awaited<ReturnType<typeof cappedMulticall>>;

/** The answered batch decoded into the snapshot's named fields (a failed call is null, or `ok: false`). */
function decodeSnapshot(
  plan: SnapshotPlan,
  w: SnapshotWallet | null,
  results: BatchResults,
  delegation: Address | null | undefined,
): ChainSnapshot {
  const outcome = (i: number): CallOutcome => {
    const r = results[i]!;
    return r.status === "success"
      ? { ok: true, result: r.result }
      : { ok: false, error: (r.error?.message ?? "reverted").split("\n")[0]!.slice(0, 160) };
  };
  const value = <T>(i: number | null): T | null => {
    if (i === null) return null;
    const o = outcome(i);
    return o.ok ? (o.result as T) : null;
  };
  const { head, curveAt, registryPausedAt, stockPausedAt, walletPinned, walletUntrusted } = plan;
  // Multicall3's timestamp cannot fail inside an answered batch: unread, the batch was not answered.
  const time = value<bigint>(head.time);
  if (time === null)
    throw new Refusal("RPC_UNAVAILABLE", "the chain RPC did not answer the batched reads", {}, { retryAfterS: 2 });

  return {
    block: value<bigint>(head.block) ?? 0n,
    time: Number(time),
    baseFee: value<bigint>(head.baseFee) ?? 0n,
    calls: plan.quotesAt.map(outcome),
    curve: curveAt ? decodeCurve(value(curveAt.state), value(curveAt.fees), value<bigint>(curveAt.graduation)) : null,
    stock:
      registryPausedAt !== null
        ? {
            paused: Object.fromEntries(stockPausedAt.map(([t, i]) => [t, value<boolean>(i)])),
            registryPaused: value<boolean>(registryPausedAt),
          }
        : null,
    wallet:
      w && walletPinned && walletUntrusted
        ? {
            address: w.address,
            sanctioned: value<boolean>(walletPinned.sanctioned),
            eth: value<bigint>(walletPinned.eth),
            balances: Object.fromEntries(walletUntrusted.balances.map(([t, i]) => [t, value<bigint>(i)])),
            allowanceToPermit2: value<bigint>(walletUntrusted.toPermit2),
            allowanceToCurve: value<bigint>(walletUntrusted.toCurve),
            routerPermit: value<readonly [bigint, number, number]>(walletPinned.routerPermit),
            stockBlocked: value<boolean>(walletPinned.stockBlocked),
            delegation,
          }
        : null,
  };
}

/**
 * Everything a trade needs from the chain, read in one eth_call at one block and decoded once into
 * named fields. Every call has a gas budget by kind, in order: head reads, pinned reads, the
 * caller's quotes, then untrusted token views (tokens anyone deployed: their balanceOf may burn
 * gas). A call that fails or burns its budget inside the batch is null (or `ok: false` for the
 * caller's own calls) and costs nothing else; a batch the RPC cannot answer at all is 502
 * RPC_UNAVAILABLE.
 */
export async function readChainSnapshot(
  chain: PublicClient,
  config: Pick<Config, "contracts">,
  req: SnapshotRequest,
): Promise<ChainSnapshot> {
  const plan = planSnapshot(config.contracts, req);
  const w = req.wallet;
  const [results, delegation] = await Promise.all([
    rpc(cappedMulticall(chain, { contracts: plan.batch })),
    w?.withDelegation
      ? rpc(getDelegation(chain, { address: w.address })).then((a) => a ?? null)
      : Promise.resolve(undefined),
  ]);
  return decodeSnapshot(plan, w, results, delegation);
}

function decodeCurve(state: unknown, fees: unknown, graduationWei: bigint | null): CurveSnapshot {
  const s = state as readonly [Address, number, boolean, bigint, bigint, bigint, bigint] | null;
  const f = fees as readonly [bigint, bigint, bigint] | null;
  return {
    state: s
      ? {
          creator: s[0],
          feeMode: s[1],
          graduated: s[2],
          launchedAt: s[3],
          virtualEth: s[4],
          virtualToken: s[5],
          realEth: s[6],
        }
      : null,
    fees: f ? { protocol: f[0], creator: f[1], snipe: f[2] } : null,
    graduationWei,
  };
}

/** A wallet's balance of `token` in the snapshot (ETH as 0x0), 0 when unread. */
export function balanceIn(w: WalletSnapshot, token: Address): bigint {
  return (token === zeroAddress ? w.eth : w.balances[lc(token)]) ?? 0n;
}
