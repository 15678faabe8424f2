import { bpsOf } from "../fees.js";
import { decodeAbiParameters, decodeFunctionData, zeroAddress, type Address, type Hex } from "viem";
import { exactInputSingleParams, V4Action } from "../../abis/uniswapV4.js";
import { permitSingleParams } from "../../abis/permit2.js";
import {
  Command,
  COMMAND_TYPE_MASK,
  CONTRACT_BALANCE,
  FLAG_ALLOW_REVERT,
  ROUTER_ADDRESS_THIS,
  ROUTER_MSG_SENDER,
  universalRouterAbi,
} from "../../abis/universalRouter.js";
import { sameAddress as same } from "../address.js";

/**
 * A strict reading of one Universal Router call made from a session wallet: what the co-signer
 * (and the SDK) re-derive before signing, never trusting a description handed to them. Every
 * command is decoded, sub-plans too; anything outside the swap shapes this service builds is a
 * failure, and every recipient must be the wallet, the router itself or the fee recipient.
 *
 * Rules (SPEC "Errors: Sessions"): SESSION_TARGET (not the router's execute with a deadline),
 * SESSION_EXECUTION (a command, V4 action, hook, revert flag or leftover ETH outside the allowed
 * shapes), SESSION_RECIPIENTS (anything paid to someone else).
 */
export type RouterRule = "SESSION_TARGET" | "SESSION_EXECUTION" | "SESSION_RECIPIENTS" | "SESSION_ROOT_ALLOWS";
export type RouterFailure = { rule: RouterRule; message: string };
export type FeePayment = {
  token: Address;
  amount: bigint | null;
  bps: bigint | null;
  command: "TRANSFER" | "PAY_PORTION" | "PERMIT2_TRANSFER_FROM" | "FEE_TRANSFER";
};

export type RouterReading = {
  failures: RouterFailure[];
  /** ETH sent with the call, or the ERC-20 the router pulls from the wallet through Permit2. */
  tokenIn: Address | null;
  amountIn: bigint;
  /** What the router sweeps to the wallet, and the minimum it checks. */
  tokenOut: Address | null;
  minOut: bigint;
  fees: FeePayment[];
  deadline: bigint | null;
  /** PERMIT2_PERMITs the call carries (only read with `permit`). */
  permits?: { token: Address; amount: bigint; spender: Address; expiration: number }[];
};

/**
 * `permit`: the wallet's own signing path (the SDK) accepts one PERMIT2_PERMIT whose spender is the
 * router; a session's co-signer never sets it (a session trade carries no permit).
 */
export type ReadContext = { router: Address; wallet: Address; feeRecipient: Address; weth: Address; permit?: boolean };

const MAX_DEPTH = 2;
const addr3 = [{ type: "address" }, { type: "address" }, { type: "uint256" }] as const;
const addrAmount = [{ type: "address" }, { type: "uint256" }] as const;

/**
 * `spent`: what the program hands on of each token (transfers, settles, wraps), to find input left
 * in the router.
 */
type Acc = RouterReading & {
  spent: Map<string, bigint>;
  pulls: { token: Address; amount: bigint }[];
  sweeps: { token: Address; min: bigint }[];
  permits: { token: Address; amount: bigint; spender: Address; expiration: number }[];
  /** The V4 program: what the router settles from its own balance, the hops in order, what it takes. */
  settles: { currency: Address; amount: bigint }[];
  hops: { currencyIn: Address; currencyOut: Address; amountIn: bigint }[];
  takes: Address[];
};

/** Reads `execute(commands, inputs, deadline)` sent to `target` with `value`. */
export function readRouterCall(target: Address, value: bigint, data: Hex, ctx: ReadContext): RouterReading {
  const acc: Acc = {
    failures: [],
    tokenIn: null,
    amountIn: 0n,
    tokenOut: null,
    minOut: 0n,
    fees: [],
    deadline: null,
    spent: new Map(),
    pulls: [],
    sweeps: [],
    permits: [],
    settles: [],
    hops: [],
    takes: [],
  };
  const fail = (rule: RouterRule, message: string) => acc.failures.push({ rule, message });
  if (!same(target, ctx.router)) {
    fail("SESSION_TARGET", `the call goes to ${target}, not the router`);
    return acc;
  }
  let commands: Hex;
  let inputs: readonly Hex[];
  try {
    const d = decodeFunctionData({ abi: universalRouterAbi, data });
    if (d.functionName !== "execute" || d.args.length !== 3) throw new Error("not execute with a deadline");
    [commands, inputs] = d.args;
    acc.deadline = (d.args as readonly unknown[])[2] as bigint;
  } catch (err) {
    fail(
      "SESSION_TARGET",
      `not the router's execute(commands, inputs, deadline): ${(err as Error).message.split("\n")[0]}`,
    );
    return acc;
  }
  readProgram(commands, inputs, ctx, acc, 0);
  settleTotals(acc, value, fail);
  return {
    failures: acc.failures,
    tokenIn: acc.tokenIn,
    amountIn: acc.amountIn,
    tokenOut: acc.tokenOut,
    minOut: acc.minOut,
    fees: acc.fees,
    deadline: acc.deadline,
    permits: acc.permits,
  };
}

/** One program's walk: the call's context, what was read so far, the sub-plan depth and the recipient tests. */
type Walk = {
  ctx: ReadContext;
  acc: Acc;
  depth: number;
  fail: (rule: RouterRule, message: string) => void;
  /** The router itself (ADDRESS_THIS or its own address). */
  internal: (a: Address) => boolean;
  /** The wallet (MSG_SENDER or its own address). */
  toWallet: (a: Address) => boolean;
  isFee: (a: Address) => boolean;
};

function readProgram(commands: Hex, inputs: readonly Hex[], ctx: ReadContext, acc: Acc, depth: number) {
  const fail = (rule: RouterRule, message: string) => acc.failures.push({ rule, message });
  const bytes = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  if (bytes.length !== inputs.length)
    return fail("SESSION_EXECUTION", `${bytes.length} commands but ${inputs.length} inputs`);
  const w: Walk = {
    ctx,
    acc,
    depth,
    fail,
    internal: (a) => same(a, ROUTER_ADDRESS_THIS) || same(a, ctx.router),
    toWallet: (a) => same(a, ROUTER_MSG_SENDER) || same(a, ctx.wallet),
    isFee: (a) => same(a, ctx.feeRecipient),
  };
  // A command that fails is recorded and the walk goes on to the next.
  for (const [i, byte] of bytes.entries()) readCommand(w, byte, inputs[i]!, i);
}

/** One command: its revert flag refused, then read by its type; one that does not decode is a failure. */
function readCommand(w: Walk, byte: number, input: Hex, i: number) {
  const { fail } = w;
  const cmd = byte & COMMAND_TYPE_MASK;
  if (byte & FLAG_ALLOW_REVERT) return fail("SESSION_EXECUTION", `command ${i} may revert without reverting the trade`);
  try {
    switch (cmd) {
      case Command.PERMIT2_TRANSFER_FROM:
        return readPull(w, input, i);
      case Command.TRANSFER:
      case Command.PAY_PORTION:
        return readPayment(w, input, i, cmd === Command.PAY_PORTION);
      case Command.SWEEP: {
        const [token, to, min] = decodeAbiParameters(addr3, input);
        if (!w.toWallet(to)) return fail("SESSION_RECIPIENTS", `command ${i} sweeps ${token} to ${to}, not the wallet`);
        w.acc.sweeps.push({ token, min });
        return;
      }
      case Command.WRAP_ETH:
      case Command.UNWRAP_WETH:
        return readWrap(w, input, i, cmd === Command.WRAP_ETH);
      case Command.PERMIT2_PERMIT:
        return readPermit(w, input, i);
      case Command.V4_SWAP:
        return readV4(input, i, w.acc, fail, w.internal, w.toWallet);
      case Command.EXECUTE_SUB_PLAN: {
        if (w.depth >= MAX_DEPTH) return fail("SESSION_EXECUTION", `sub-plans nested deeper than ${MAX_DEPTH}`);
        const [subCommands, subInputs] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], input);
        return readProgram(subCommands, subInputs, w.ctx, w.acc, w.depth + 1);
      }
      default:
        return fail(
          "SESSION_EXECUTION",
          `command 0x${cmd.toString(16).padStart(2, "0")} is not one a session trade uses`,
        );
    }
  } catch (err) {
    fail("SESSION_EXECUTION", `command ${i} does not decode: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** PERMIT2_TRANSFER_FROM: the wallet's token pulled into the router, or paid straight to the fee recipient. */
function readPull(w: Walk, input: Hex, i: number) {
  const [token, to, amount] = decodeAbiParameters(
    [{ type: "address" }, { type: "address" }, { type: "uint160" }],
    input,
  );
  if (w.isFee(to)) {
    w.acc.fees.push({ token, amount, bps: null, command: "PERMIT2_TRANSFER_FROM" });
    spend(w.acc, token, amount);
  } else if (!w.internal(to)) return w.fail("SESSION_RECIPIENTS", `command ${i} pulls the wallet's ${token} to ${to}`);
  w.acc.pulls.push({ token, amount });
}

/** TRANSFER or PAY_PORTION: to the fee recipient (a fee) or the wallet; never to the router itself or anyone else. */
function readPayment(w: Walk, input: Hex, i: number, portion: boolean) {
  const [token, to, n] = decodeAbiParameters(addr3, input);
  if (w.isFee(to))
    w.acc.fees.push({
      token,
      amount: portion ? null : n,
      bps: portion ? n : null,
      command: portion ? "PAY_PORTION" : "TRANSFER",
    });
  // A transfer to the router itself moves nothing: it would count input as handed on while it stays there.
  else if (w.internal(to)) return w.fail("SESSION_EXECUTION", `command ${i} transfers to the router itself`);
  else if (!w.toWallet(to)) return w.fail("SESSION_RECIPIENTS", `command ${i} pays ${to}`);
  if (!portion) spend(w.acc, token, n);
}

/** WRAP_ETH (the router's whole balance only) or UNWRAP_WETH, to the router or the wallet. */
function readWrap(w: Walk, input: Hex, i: number, wrap: boolean) {
  const [to, amount] = decodeAbiParameters(addrAmount, input);
  if (!w.internal(to) && !w.toWallet(to))
    return w.fail("SESSION_RECIPIENTS", `command ${i} sends wrapped or unwrapped ETH to ${to}`);
  // Wrapping a fixed amount would park the input as WETH in the router; the output is wrapped whole.
  if (wrap && amount !== CONTRACT_BALANCE)
    return w.fail("SESSION_EXECUTION", `command ${i} wraps a fixed amount of ETH`);
  if (amount !== CONTRACT_BALANCE) spend(w.acc, wrap ? zeroAddress : w.ctx.weth, amount);
}

/** PERMIT2_PERMIT: only on the wallet's own path (`permit`), once, at the top level, for the router. */
function readPermit(w: Walk, input: Hex, i: number) {
  if (!w.ctx.permit || w.depth > 0 || w.acc.permits.length)
    return w.fail("SESSION_EXECUTION", `command ${i} carries a Permit2 permit`);
  const [permit] = decodeAbiParameters(permitSingleParams, input) as unknown as [
    { details: { token: Address; amount: bigint; expiration: number }; spender: Address },
  ];
  if (!w.internal(permit.spender))
    return w.fail(
      "SESSION_RECIPIENTS",
      `command ${i} permits ${permit.spender} to spend the wallet's ${permit.details.token}, not the router`,
    );
  w.acc.permits.push({
    token: permit.details.token,
    amount: permit.details.amount,
    spender: permit.spender,
    expiration: Number(permit.details.expiration),
  });
}

function readV4(
  input: Hex,
  i: number,
  acc: Acc,
  fail: (r: RouterRule, m: string) => void,
  internal: (a: Address) => boolean,
  toWallet: (a: Address) => boolean,
) {
  const [actions, params] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], input);
  const codes = (actions.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
  if (codes.length !== params.length)
    return fail("SESSION_EXECUTION", `V4 swap of command ${i}: ${codes.length} actions but ${params.length} params`);
  codes.forEach((code, j) => {
    const p = params[j]!;
    if (code === V4Action.SWAP_EXACT_IN_SINGLE) {
      const [sp] = decodeAbiParameters(exactInputSingleParams, p);
      if (sp.poolKey.hooks !== zeroAddress) fail("SESSION_EXECUTION", `V4 pool with hooks ${sp.poolKey.hooks}`);
      const [c0, c1] = [sp.poolKey.currency0, sp.poolKey.currency1];
      acc.hops.push({
        currencyIn: sp.zeroForOne ? c0 : c1,
        currencyOut: sp.zeroForOne ? c1 : c0,
        amountIn: sp.amountIn,
      });
    } else if (code === V4Action.SETTLE) {
      const [currency, amount, payerIsUser] = decodeAbiParameters(
        [{ type: "address" }, { type: "uint256" }, { type: "bool" }],
        p,
      );
      if (payerIsUser) acc.pulls.push({ token: currency, amount });
      else {
        spend(acc, currency, amount);
        acc.settles.push({ currency, amount });
      }
    } else if (code === V4Action.TAKE) {
      // Output goes to the router and reaches the wallet only through the SWEEP that checks the minimum.
      const [currency, to] = decodeAbiParameters(addr3, p);
      if (!internal(to))
        fail(
          toWallet(to) ? "SESSION_EXECUTION" : "SESSION_RECIPIENTS",
          `V4 take of command ${i} pays ${to}, not the router`,
        );
      acc.takes.push(currency);
    } else {
      fail("SESSION_EXECUTION", `V4 action 0x${code.toString(16)} is not one a session trade uses`);
    }
  });
}

const spend = (acc: Acc, token: Address, amount: bigint) =>
  acc.spent.set(token.toLowerCase(), (acc.spent.get(token.toLowerCase()) ?? 0n) + amount);

/**
 * One input (ETH value or one pulled token), all of it handed on (none left in the router), one
 * output swept to the wallet.
 */
function settleTotals(acc: Acc, value: bigint, fail: (r: RouterRule, m: string) => void) {
  const pulled = new Set(acc.pulls.map((p) => p.token.toLowerCase()));
  if (value > 0n) {
    if (pulled.size) fail("SESSION_EXECUTION", "ETH and a pulled token in one trade");
    acc.tokenIn = zeroAddress;
    acc.amountIn = value;
  } else if (pulled.size === 1) {
    acc.tokenIn = acc.pulls[0]!.token;
    acc.amountIn = acc.pulls.reduce((s, p) => s + p.amount, 0n);
  } else
    fail(
      "SESSION_EXECUTION",
      pulled.size ? "more than one token pulled from the wallet" : "no input: neither ETH nor a token pulled",
    );
  if (acc.tokenIn !== null) {
    const handedOn = acc.spent.get(acc.tokenIn.toLowerCase()) ?? 0n;
    if (handedOn !== acc.amountIn)
      fail(
        "SESSION_EXECUTION",
        `the input is ${acc.amountIn} but the program hands on ${handedOn}: the rest would stay in the router`,
      );
  }
  checkSwapShape(acc, fail);
  const swept = new Set(acc.sweeps.map((s) => s.token.toLowerCase()));
  if (swept.size !== 1)
    fail("SESSION_EXECUTION", swept.size ? "more than one token swept to the wallet" : "nothing swept to the wallet");
  else {
    acc.tokenOut = acc.sweeps[0]!.token;
    acc.minOut = acc.sweeps.reduce((m, s) => (s.min > m ? s.min : m), 0n);
  }
}

/**
 * The swap spends exactly the input less the input-side fee: the first hop swaps what the router
 * settles, each later hop takes the one before's output (amount 0: the open delta), and only the
 * last hop's output is taken. Otherwise part of the input could stay in the router for anyone to
 * sweep while the reading still said it was all handed on.
 */
function checkSwapShape(acc: Acc, fail: (r: RouterRule, m: string) => void) {
  if (!acc.hops.length || acc.tokenIn === null) return;
  const first = acc.hops[0]!;
  const settled = acc.settles.filter((s) => same(s.currency, first.currencyIn)).reduce((t, s) => t + s.amount, 0n);
  if (first.amountIn !== settled)
    fail("SESSION_EXECUTION", `the swap's input ${first.amountIn} is not the ${settled} the router settles`);
  const inputFees = acc.fees
    .filter((f) => f.amount !== null && same(f.token, acc.tokenIn!))
    .reduce((t, f) => t + f.amount!, 0n);
  if (settled + inputFees !== acc.amountIn)
    fail(
      "SESSION_EXECUTION",
      `the swap settles ${settled} and the fee takes ${inputFees} of an input of ${acc.amountIn}: ` +
        "the rest would stay in the router",
    );
  acc.hops.forEach((h, k) => {
    if (k === 0) return;
    if (h.amountIn !== 0n)
      fail("SESSION_EXECUTION", `hop ${k} swaps a fixed ${h.amountIn} instead of the hop before's output`);
    if (!same(h.currencyIn, acc.hops[k - 1]!.currencyOut))
      fail("SESSION_EXECUTION", `hop ${k} does not start from the hop before's output`);
  });
  const out = acc.hops.at(-1)!.currencyOut;
  if (acc.takes.some((t) => !same(t, out)))
    fail("SESSION_EXECUTION", "the swap takes a currency other than its output");
}

/**
 * The one fee the call pays to the fee recipient, in bps: PAY_PORTION's bips of the output, or a
 * TRANSFER / Permit2 pull of the input that is exactly bps of the amount in. null: none, several,
 * or a shape that is not bps of the trade.
 */
export function readFeeBps(r: RouterReading): number | null {
  if (r.fees.length !== 1 || r.tokenIn === null || r.tokenOut === null) return null;
  const f = r.fees[0]!;
  if (f.bps !== null) return same(f.token, r.tokenOut) && f.bps <= 10_000n ? Number(f.bps) : null;
  if (!same(f.token, r.tokenIn) || f.amount === null || r.amountIn === 0n) return null;
  for (let bps = 0; bps <= 100; bps++) if (bpsOf(r.amountIn, bps) === f.amount) return bps;
  return null;
}
