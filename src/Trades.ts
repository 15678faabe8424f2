import { ponder } from "ponder:registry";
import { feeTransfer, trade } from "ponder:schema";
import { createPublicClient, getAddress, http, zeroAddress, type Address, type Hex } from "viem";
import { loadConfig } from "../lib/config";
import { ethMovesOf, rootDelegator, tradeOutcome, transfersOf, WITHDRAWAL_TOPIC, type CallFrame, type Leg, type RawLog } from "../lib/tradeOutcome";

const config = loadConfig();
const router = config.contracts.universalRouter.toLowerCase();
const delegationManager = config.contracts.delegationManager.toLowerCase();
const launchpad = config.contracts.launchpad.toLowerCase();
/** keccak256 of the launchpad's Trade event: a curve trade inside any transaction (7702 batches). */
const CURVE_TRADE_TOPIC = "0x2c76e7a47fd53e2854856ac3f0a5f3ee40d15cfaa82266357ea9779c486ab9c3";
const platform = config.feeRecipient;

// Receipts and traces go straight to the node. Traces without retries: a node that cannot trace
// a transaction (pruned history, a devnet loaded from a state file) answers at once and we fall
// back to balances.
const direct = createPublicClient({ transport: http(config.rpcUrl, { retryCount: 2, timeout: 10_000 }) });
const tracer = createPublicClient({ transport: http(config.rpcUrl, { retryCount: 0, timeout: 10_000 }) });

type Receipt = {
  transactionHash: Hex;
  transactionIndex: Hex;
  from: Address;
  to: Address | null;
  status: Hex;
  gasUsed: Hex;
  effectiveGasPrice: Hex;
  logs: RawLog[];
};

async function traceOf(hash: Hex): Promise<CallFrame | null> {
  try {
    return (await tracer.request({ method: "debug_traceTransaction" as never, params: [hash, { tracer: "callTracer" }] as never })) as CallFrame;
  } catch {
    return null;
  }
}

/** The platform's ETH balance change over one block, or null when the node has no state for it. */
async function platformEthDelta(block: bigint): Promise<bigint | null> {
  try {
    const [before, after] = await Promise.all([
      tracer.getBalance({ address: platform, blockNumber: block - 1n }),
      tracer.getBalance({ address: platform, blockNumber: block }),
    ]);
    return after - before;
  } catch {
    return null;
  }
}

ponder.on("Trades:block", async ({ event, context }) => {
  // Straight to the node (Ponder's client queues uncached methods behind its sync); by hash, so a
  // reorged-away block can never lend us another block's receipts.
  const receipts = (await direct.request({
    method: "eth_getBlockReceipts" as never,
    params: [event.block.hash] as never,
  })) as Receipt[] | null;
  const viaOf = (r: Receipt): "router" | "delegation" | "curve" | null => {
    const to = r.to?.toLowerCase();
    if (to === router) return "router";
    if (to === delegationManager) return "delegation";
    if (to === launchpad || r.logs.some((l) => l.address.toLowerCase() === launchpad && l.topics[0] === CURVE_TRADE_TOPIC)) return "curve";
    return null;
  };
  const trades = (receipts ?? []).filter((r) => r.to && viaOf(r) !== null);
  let balanceDeltaUsed = false;
  for (const r of trades) {
    const via = viaOf(r)!;
    const success = BigInt(r.status) === 1n;
    const trace = await traceOf(r.transactionHash);
    let input: Hex | null = trace ? ((trace as CallFrame & { input?: Hex }).input ?? null) : null;
    let txValue = trace?.value ? BigInt(trace.value) : 0n;
    if (!trace) {
      const tx = await context.client.getTransaction({ hash: r.transactionHash });
      input = tx.input;
      txValue = tx.value;
    }
    const sender = getAddress(r.from);
    const wallet = via !== "delegation" ? sender : (input ? rootDelegator(input) : null) ?? sender;

    let moves: Leg[] = success ? transfersOf(r.logs) : [];
    let ethMethod = "none";
    if (success && trace) {
      moves = [...moves, ...ethMovesOf(trace)];
      ethMethod = "trace";
    } else if (success) {
      // Without a trace: ETH the sender attached, ETH the router unwrapped for the wallet, and the
      // platform's ETH balance change over the block for the first trade of the block.
      if (txValue > 0n) moves.push({ token: zeroAddress, from: sender, to: r.to!, amount: txValue.toString() });
      for (const l of r.logs) {
        if (l.topics[0] === WITHDRAWAL_TOPIC && l.address.toLowerCase() === config.contracts.weth9.toLowerCase()) {
          moves.push({ token: zeroAddress, from: getAddress(r.to!), to: wallet, amount: BigInt(l.data).toString() });
        }
      }
      ethMethod = "none";
      if (!balanceDeltaUsed) {
        balanceDeltaUsed = true;
        const delta = await platformEthDelta(event.block.number);
        if (delta !== null) {
          ethMethod = "balance";
          if (delta > 0n) moves.push({ token: zeroAddress, from: getAddress(r.to!), to: platform, amount: delta.toString() });
        }
      }
    }
    const outcome = tradeOutcome(wallet, platform, moves);
    await context.db.insert(trade).values({
      txHash: r.transactionHash,
      wallet,
      sender,
      via,
      status: success ? "success" : "reverted",
      block: event.block.number,
      txIndex: Number(BigInt(r.transactionIndex)),
      timestamp: event.block.timestamp,
      gasUsed: BigInt(r.gasUsed),
      effectiveGasPrice: BigInt(r.effectiveGasPrice),
      tokenIn: outcome.tokenIn,
      amountIn: outcome.amountIn,
      tokenOut: outcome.tokenOut,
      amountOut: outcome.amountOut,
      feeToken: outcome.feeToken,
      feeAmount: outcome.feeAmount,
      ethMethod,
      legs: outcome.legs,
    });
    // ETH fees leave no log: book them here (ERC-20 fees come from PlatformToken:Transfer).
    if (outcome.feeToken === zeroAddress && outcome.feeAmount) {
      await context.db.insert(feeTransfer).values({
        id: `${r.transactionHash}-eth-in`,
        direction: "in",
        token: zeroAddress,
        amount: outcome.feeAmount,
        from: getAddress(r.to!),
        to: platform,
        source: "trade",
        method: ethMethod,
        txHash: r.transactionHash,
        block: event.block.number,
        timestamp: event.block.timestamp,
      }).onConflictDoNothing();
    }
  }
});
