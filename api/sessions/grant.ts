import { concat, getAddress, hashTypedData, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { recoverAuthorizationAddress, recoverTypedDataAddress } from "../../lib/secp.js";
import { z } from "zod";
import {
  curveGroupOf,
  curveRootCaveats,
  delegationHash,
  delegationTypedData,
  LEAF_TTL_S,
  nonceEnforcerAbi,
  rootCaveats,
  ROOT_AUTHORITY,
  type Delegation,
  type RootBounds,
} from "../../lib/delegation.js";
import {
  BINDING_VERSION,
  bindingHash,
  bindingSalt,
  feeTermsOfSchedule2,
  type MarkSource,
  type SessionBinding,
  type SignedMark,
} from "../../lib/sessionBinding.js";
import { deepestPool } from "../market/index.js";
import { markBandBps, markUnsettled, MARK_WINDOW_S, MIN_MARK_DEPTH_USD, readSpot } from "../../lib/markSource.js";
import type { PoolState } from "../ports/indexed.js";
import { launchpadAbi, sanctionsListAbi } from "../../abis/fixtures.js";
import { Refusal, rpc } from "../errors/index.js";
import { callerOf } from "../http/caller.js";
import { buildApprove, buildPermit2Approve, SHIELD_POLICIES, type TokenInfo, type Who } from "../trading/index.js";
import type { SessionDeps } from "./deps.js";
import type { StoredAuthorization, StoredSession, WalletCode } from "./store.js";
import type { CosignerPort } from "../ports/cosigner.js";
import { sessionView } from "./view.js";
import { lc } from "../../lib/address.js";

const DAY_S = 86_400;
/** SPEC "Limits" (session grant). */
export const GRANT_LIMITS = {
  maxTradeUsd: 1_000,
  dayFactor: 100,
  maxTrades: 10_000,
  minExpiresS: 60,
  maxExpiresS: 30 * DAY_S,
  feedlessMaxExpiresS: DAY_S,
  maxSetupBudgetUsd: 10_000,
} as const;
/** ETH bounds on chain carry this headroom over the USD caps at the grant's mark (ETH may move during the session). */
const ETH_HEADROOM = 1.5;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x address");
const usd = z.number().finite();
export const startRequest = z
  .object({
    wallet: address,
    executor: address,
    tokens: z.array(z.string().min(1).max(64)).max(16).default(["ETH", "USDG"]),
    max_trade_usd: usd.default(25),
    max_day_usd: usd.optional(),
    max_trades: z.number().finite().default(50),
    expires_in_s: z.number().finite().default(DAY_S),
    setup_budget_usd: usd.optional(),
    accept_risks: z.array(z.string().max(64)).max(32).default([]),
    shield: z.boolean().default(false),
    policies: z.array(z.string().max(64)).max(8).default([]),
  })
  .strict();
/** A grant's first call, as the grant route parses it. */
export type StartGrantParameters = z.infer<typeof startRequest>;

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, "must be 0x hex");
export const switchOnRequest = z
  .object({
    session_id: z.string().min(1).max(64),
    delegation_signature: hex.max(4_000),
    authorization_signature: hex.max(200).optional(),
    curve_root_signatures: z.record(hex.max(4_000)).optional(),
  })
  .strict();
/** A grant's second call (the wallet's signatures), as the grant route parses it. */
export type SwitchOnParameters = z.infer<typeof switchOnRequest>;

/**
 * live/session/grant's body: a switch-on when it names session_id, else a grant's first call.
 * Refused as that call's own schema refuses it (its first problem, in parseBody's words), never as
 * a union that matched neither; the document shows both.
 */
export const grantBody = z.preprocess(
  (body, ctx) => {
    const own = typeof body === "object" && body !== null && "session_id" in body ? switchOnRequest : startRequest;
    const parsed = own.safeParse(body);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, fatal: true });
    return body;
  },
  z.union([startRequest, switchOnRequest]),
);

const limit = (msg: string): never => {
  throw new Refusal("SESSION_LIMIT", msg);
};

/** The wallet's current code: none (an EOA that will upgrade), the pinned delegator, or anything else (WALLET_CODE). */
export function walletCodeOf(code: Hex | undefined, pinned: Address): WalletCode {
  if (!code || code === "0x") return { state: "eoa", implementation: null, version: null };
  if (lc(code) === lc(concat(["0xef0100", pinned])))
    return { state: "pinned", implementation: getAddress(pinned), version: "1.3.0" };
  throw new Refusal(
    "WALLET_CODE",
    `the wallet runs code other than the pinned EIP7702StatelessDeleGator 1.3.0 (${pinned}); ` +
      "reset it or use another wallet",
    { wallet_code: code.slice(0, 48) },
  );
}

/** The caller's wallet, the executor and the cosigner a grant names, with its day cap and setup budget in USD. */
type GrantParties = { wallet: Address; executor: Address; cosigner: CosignerPort; maxDay: number; budgetUsd: number };
/**
 * The session's tokens through the registry, the pools they trade on, and which of them are on a live
 * launchpad curve.
 */
type GrantTokens = { unique: TokenInfo[]; pools: PoolState[]; withEth: boolean; curveTokens: Address[] };
/** The wallet's state on chain when the grant starts. */
type WalletState = { walletCode: WalletCode; txNonce: number; dmNonce: bigint; ethUsd: number };
/** The roots the wallet signs, their binding and their on-chain bounds. */
type GrantRoots = {
  binding: SessionBinding;
  bounds: RootBounds;
  unsigned: Omit<Delegation, "signature">;
  curveRoot: Omit<Delegation, "signature"> | null;
  expires: number;
  marks: Record<string, SignedMark> | undefined;
};
/** The wallet's setup: the EIP-7702 upgrade (an EOA), the allowances, the per-token budgets in atoms. */
type GrantSetup = {
  steps: Record<string, unknown>[];
  /** A plain wallet's EIP-7702 authorization to the pinned delegator (its signer is the wallet itself). */
  authorization: { contract_address: Address; chain_id: number; nonce: number; executor: "self" } | null;
  budgets: Record<string, string>;
};

/** live/session/grant, first call: validates, builds the root and answers what to sign. */
export async function startGrant(d: SessionDeps, q: StartGrantParameters, who: Who) {
  const { wallet, executor } = callerParties(q, who);
  // Limits (SESSION_LIMIT), then the executor (BAD_EXECUTOR), then the policies.
  const { maxDay, budgetUsd } = grantLimits(q);
  const cosigner = await grantExecutor(d, wallet, executor);
  checkPolicies(q);
  const parties: GrantParties = { wallet, executor, cosigner, maxDay, budgetUsd };
  const tokens = await grantTokens(d, q, who);
  const state = await walletState(d, wallet, executor);
  const roots = await grantRoots(d, q, parties, tokens, state);
  const setup = await grantSetup(d, parties, tokens.unique, roots, state);
  const start = startAnswer(d, q, parties, roots, setup);
  const session = {
    id: d.store.newId(),
    wallet,
    executor,
    cosigner: cosigner.address,
    keyId: who.key.keyId,
    expires: roots.expires,
    walletCode: state.walletCode,
    tokens: tokens.unique.map((t) => d.sides.ref(t)),
    binding: roots.binding,
    root: { ...roots.unsigned, signature: "0x" as Hex },
    curveRoots: curveRootsOf(roots).map((r) => ({ ...r, signature: "0x" as Hex })),
    delegationHash: delegationHash(roots.unsigned),
    start,
  };
  const same = await d.store.insert(session);
  // The same terms asked twice in one second are one root: the grant already pending is the answer.
  if (same && (same.status !== "pending" || same.wallet.toLowerCase() !== wallet.toLowerCase()))
    throw new Refusal(
      "SESSION_LIMIT",
      `a session with exactly this root is already ${same.status}; ask again in a second for a new one`,
    );
  const id = same?.id ?? session.id;
  return {
    session_id: id,
    status: "pending" as const,
    wallet,
    executor,
    cosigner: cosigner.address,
    expires: roots.expires,
    wallet_code: state.walletCode,
    ...start,
    risk_terms: roots.binding.risk_terms,
    limits: roots.binding.limits,
  };
}

/** The wallet granting, the caller's key's own (WALLET_NOT_BOUND, WALLET_MISMATCH), and the executor it names. */
function callerParties(q: StartGrantParameters, who: Who): { wallet: Address; executor: Address } {
  const keyWallet = callerOf(who.key).wallet;
  if (lc(q.wallet) !== lc(keyWallet))
    throw new Refusal("WALLET_MISMATCH", "a session is granted by its own wallet's key");
  return { wallet: getAddress(q.wallet), executor: getAddress(q.executor) };
}

/** The grant's limits within SPEC's (SESSION_LIMIT), with the day cap and setup budget defaulted. */
export function grantLimits(
  q: Pick<
    StartGrantParameters,
    "max_trade_usd" | "max_day_usd" | "max_trades" | "expires_in_s" | "setup_budget_usd" | "tokens"
  >,
) {
  const maxDay = q.max_day_usd ?? Math.min(Math.max(100, q.max_trade_usd), q.max_trade_usd * GRANT_LIMITS.dayFactor);
  if (!(q.max_trade_usd > 0 && q.max_trade_usd <= GRANT_LIMITS.maxTradeUsd))
    limit(`max_trade_usd must be above 0 and at most ${GRANT_LIMITS.maxTradeUsd}`);
  if (!(maxDay >= q.max_trade_usd && maxDay <= q.max_trade_usd * GRANT_LIMITS.dayFactor))
    limit(`max_day_usd must be from max_trade_usd (${q.max_trade_usd}) to ${GRANT_LIMITS.dayFactor} times it`);
  if (!(Number.isInteger(q.max_trades) && q.max_trades >= 1 && q.max_trades <= GRANT_LIMITS.maxTrades))
    limit(`max_trades must be an integer from 1 to ${GRANT_LIMITS.maxTrades}`);
  if (
    !(
      Number.isInteger(q.expires_in_s) &&
      q.expires_in_s >= GRANT_LIMITS.minExpiresS &&
      q.expires_in_s <= GRANT_LIMITS.maxExpiresS
    )
  )
    limit(`expires_in_s must be an integer from ${GRANT_LIMITS.minExpiresS} to ${GRANT_LIMITS.maxExpiresS}`);
  // Default max_day_usd (SPEC), within the approval budget's ceiling when the day cap is above it.
  const budgetUsd = q.setup_budget_usd ?? Math.min(maxDay, GRANT_LIMITS.maxSetupBudgetUsd);
  if (!(budgetUsd > 0 && budgetUsd <= GRANT_LIMITS.maxSetupBudgetUsd))
    limit(`setup_budget_usd must be above 0 and at most ${GRANT_LIMITS.maxSetupBudgetUsd}`);
  if (new Set(q.tokens.map((t) => t.toLowerCase())).size < 2) limit("a session needs at least two different tokens");
  return { maxDay, budgetUsd };
}

/**
 * The co-signer (SIGNER_UNAVAILABLE without one), once the executor is a key of its own and, if
 * hosted, the wallet's.
 */
async function grantExecutor(d: SessionDeps, wallet: Address, executor: Address): Promise<CosignerPort> {
  const cosigner = d.cosigner;
  if (!cosigner)
    throw new Refusal(
      "SIGNER_UNAVAILABLE",
      "no co-signer is configured: sessions cannot be co-signed now",
      {},
      { retryAfterS: 60 },
    );
  if (lc(executor) === lc(wallet) || lc(executor) === lc(cosigner.address) || executor === zeroAddress)
    throw new Refusal("BAD_EXECUTOR", "the executor must be a key of its own: not the wallet, not the co-signer");
  // A hosted agent's executor trades only for the owner it was made for.
  const hosted = await d.hostedExecutor?.(executor);
  if (hosted && lc(hosted.owner) !== lc(wallet))
    throw new Refusal("EXECUTOR_OWNER", "this executor belongs to another owner's hosted agent");
  if (hosted && (hosted.retired || hosted.closed))
    throw new Refusal("EXECUTOR_CLOSED", "this hosted executor was retired or its gas refunded: it trades no more");
  return cosigner;
}

/** Shield policies are known ones and come with shield true (BAD_REQUEST). */
function checkPolicies(q: Pick<StartGrantParameters, "policies" | "shield">) {
  for (const pol of q.policies)
    if (!(SHIELD_POLICIES as readonly string[]).includes(pol))
      throw new Refusal("BAD_REQUEST", `unknown policy ${pol}`);
  if (q.policies.length && !q.shield) throw new Refusal("BAD_REQUEST", "policies apply with shield true");
}

/**
 * The session's tokens through the registry, with the risk terms the session binds: each tradable and
 * its severe risks accepted.
 */
async function grantTokens(d: SessionDeps, q: StartGrantParameters, who: Who): Promise<GrantTokens> {
  const infos = [];
  for (const param of q.tokens) infos.push(await sessionToken(d, param, who));
  const unique = [...new Map(infos.map((t) => [lc(t.address), t])).values()];
  if (unique.length < 2) limit("a session needs at least two different tokens");
  const pools = await rpc(d.market.pools());
  const withEth = unique.some((t) => t.address === zeroAddress);
  const curveTokens = await liveCurveTokens(d, unique);
  for (const t of unique) {
    if (t.record?.tier === "blocked")
      throw new Refusal(
        "RISK_BLOCKED",
        `${t.symbol || t.address} is blocked: ${String(t.record.blocked_reason ?? "see its token record")}`,
      );
    const severe = (t.record?.risks ?? [])
      .filter((r) => r.severity === "severe" && !q.accept_risks.includes(r.code))
      .map((r) => r.code);
    if (severe.length)
      throw new Refusal(
        "RISK_NOT_ACCEPTED",
        `${t.symbol || t.address} carries severe risks not accepted: ${severe.join(", ")}`,
        { unaccepted: severe, token: t.address },
      );
    const onCurve = curveTokens.some((c) => lc(c) === lc(t.address));
    if (onCurve && !withEth)
      throw new Refusal(
        "NO_ROUTE",
        `${t.symbol || t.address} trades on its launchpad curve against ETH: add ETH to the session's tokens`,
      );
    if (!onCurve && !pools.some((p) => lc(p.currency0) === lc(t.currency) || lc(p.currency1) === lc(t.currency)))
      throw new Refusal("NO_ROUTE", `no pool trades ${t.symbol || t.address}`);
  }
  if (unique.some((t) => !t.feed) && q.expires_in_s > GRANT_LIMITS.feedlessMaxExpiresS)
    limit("a session with a token that has no oracle feed lasts at most 24 hours");
  return { unique, pools, withEth, curveTokens };
}

/**
 * The chain: wallet code, the wallet's nonces (transactions, and at the delegation manager's nonce
 * enforcer), the ETH mark; a sanctioned executor refused.
 */
async function walletState(d: SessionDeps, wallet: Address, executor: Address): Promise<WalletState> {
  const c = d.config.contracts;
  const [code, txNonce, dmNonce, ethMark, sanctioned] = await rpc(
    Promise.all([
      d.chain.getCode({ address: wallet }),
      d.chain.getTransactionCount({ address: wallet, blockTag: "pending" }),
      d.chain.readContract({
        address: c.enforcers.NonceEnforcer!,
        abi: nonceEnforcerAbi,
        functionName: "currentNonce",
        args: [c.delegationManager, wallet],
      }),
      d.market.mark(zeroAddress),
      d.chain.readContract({
        address: c.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "isSanctioned",
        args: [executor],
      }),
    ]),
  );
  if (sanctioned)
    throw new Refusal("SANCTIONED", `the executor ${executor} is on the sanctions list`, {
      address: executor,
      field: "executor",
    });
  const walletCode = walletCodeOf(code, c.statelessDelegator);
  if (!ethMark || ethMark.stale)
    throw new Refusal("NO_MARK", "no fresh ETH mark to set the session's on-chain ETH bounds", {}, { retryAfterS: 5 });
  return { walletCode, txNonce, dmNonce, ethUsd: ethMark.usd };
}

/** The binding (the root's salt), the root's on-chain bounds, the root and, for curve tokens, the curve root. */
async function grantRoots(
  d: SessionDeps,
  q: StartGrantParameters,
  p: GrantParties,
  t: GrantTokens,
  s: WalletState,
): Promise<GrantRoots> {
  const { config } = d;
  const c = config.contracts;
  const now = d.now();
  const expires = now + q.expires_in_s;
  const wei = (usdAmount: number) => parseUnits(((usdAmount * ETH_HEADROOM) / s.ethUsd).toFixed(18), 18);
  const marks = await signedMarks(d, t.unique, t.pools);
  const binding: SessionBinding = {
    version: BINDING_VERSION,
    chain_id: config.chainId,
    wallet: p.wallet,
    executor: p.executor,
    cosigner: p.cosigner.address,
    tokens: t.unique.map((x) => lc(x.address)).sort(),
    limits: { max_trade_usd: q.max_trade_usd, max_day_usd: p.maxDay, max_trades: q.max_trades },
    expires,
    setup_budget_usd: p.budgetUsd,
    fee: feeTermsOfSchedule2(),
    risk_terms: { accept_risks: [...q.accept_risks].sort(), shield: q.shield, policies: [...q.policies].sort() },
    ...(marks ? { marks } : {}),
    ...(t.curveTokens.length ? { curve_tokens: t.curveTokens.map(lc).sort() } : {}),
  };
  const bounds: RootBounds = {
    router: c.universalRouter,
    permit2: c.permit2,
    executor: p.executor,
    expires,
    maxValueWei: t.withEth ? wei(q.max_trade_usd) : 0n,
    // The curve root has no ETH period of its own (its outer call carries no ETH): the day's ETH is this root's.
    dayValueWei: t.withEth ? wei(p.maxDay) : null,
    dayStart: now,
    maxCalls: q.max_trades + t.unique.filter((x) => x.address !== zeroAddress).length,
    walletNonce: s.dmNonce,
  };
  const unsigned: Omit<Delegation, "signature"> = {
    delegate: p.cosigner.address,
    delegator: p.wallet,
    authority: ROOT_AUTHORITY,
    caveats: rootCaveats(bounds, c.enforcers),
    salt: bindingSalt(binding),
  };
  // The launchpad curve is no router call: curve tokens get a root of their own (fee, buy, sell).
  const curveRoot: Omit<Delegation, "signature"> | null = binding.curve_tokens
    ? {
        delegate: p.cosigner.address,
        delegator: p.wallet,
        authority: ROOT_AUTHORITY,
        caveats: curveRootCaveats(
          {
            ...bounds,
            maxCalls: q.max_trades,
            launchpad: c.launchpad,
            feeRecipient: config.feeRecipient,
            wallet: p.wallet,
            tokens: binding.curve_tokens.map((x) => getAddress(x)),
          },
          c.enforcers,
        ),
        salt: bindingSalt(binding),
      }
    : null;
  return { binding, bounds, unsigned, curveRoot, expires, marks };
}

const curveRootsOf = (r: GrantRoots) => (r.curveRoot ? [r.curveRoot] : []);

/**
 * Setup for the main key: the upgrade (an EOA), then for each ERC-20 the Permit2 allowance and the
 * router's allowance at Permit2 (a curve token: the launchpad's allowance).
 */
async function grantSetup(
  d: SessionDeps,
  p: GrantParties,
  unique: TokenInfo[],
  r: GrantRoots,
  s: WalletState,
): Promise<GrantSetup> {
  const { config } = d;
  const c = config.contracts;
  const atomsPerUsd = async (t: TokenInfo) => {
    const m = await rpc(d.market.mark(t.address, t.decimals));
    if (!m)
      throw new Refusal(
        "NO_MARK",
        `no price for ${t.symbol || t.address} to size the setup budget`,
        {},
        { retryAfterS: 5 },
      );
    return parseUnits((p.budgetUsd / m.usd).toFixed(t.decimals), t.decimals);
  };
  const steps: Record<string, unknown>[] = [];
  const authorization =
    s.walletCode.state === "eoa"
      ? {
          contract_address: c.statelessDelegator,
          chain_id: config.chainId,
          nonce: s.txNonce + 1,
          executor: "self" as const,
        }
      : null;
  if (authorization)
    steps.push({
      kind: "upgrade",
      why:
        "EIP-7702: the wallet sends a type-4 transaction to itself carrying the authorization above " +
        "(nonce = its next nonce + 1)",
      tx: { to: p.wallet, data: "0x", value: "0", chain_id: config.chainId },
      authorization,
    });
  const budgets: Record<string, string> = {};
  for (const t of unique.filter((x) => x.address !== zeroAddress)) {
    const atoms = await atomsPerUsd(t);
    budgets[lc(t.address)] = atoms.toString();
    if (r.binding.curve_tokens?.includes(lc(t.address)) ?? false) {
      steps.push({
        kind: "approve",
        token: t.address,
        why:
          `let the launchpad curve take up to the setup budget of ${t.symbol || t.address} ` +
          "when the session sells it",
        tx: buildApprove(config.chainId, t.address, c.launchpad, atoms),
      });
      continue;
    }
    steps.push({
      kind: "approve",
      token: t.address,
      why: `let Permit2 move up to the setup budget of ${t.symbol || t.address}`,
      tx: buildApprove(config.chainId, t.address, c.permit2, atoms),
    });
    steps.push({
      kind: "permit2_approve",
      token: t.address,
      why: "let the router pull it through Permit2 until the session ends",
      tx: buildPermit2Approve(config.chainId, c.permit2, t.address, c.universalRouter, atoms, r.expires),
    });
  }
  return { steps, authorization, budgets };
}

/**
 * The first call's answer: what to sign, the setup, the caveats, the exposure, what the chain enforces
 * and what the co-signer does, the next steps.
 */
function startAnswer(d: SessionDeps, q: StartGrantParameters, p: GrantParties, r: GrantRoots, setup: GrantSetup) {
  const c = d.config.contracts;
  const typed = delegationTypedData(d.config.chainId, c.delegationManager, r.unsigned);
  return {
    sign: {
      delegation: {
        typed_data: { ...typed, message: { ...typed.message, salt: typed.message.salt.toString() } },
        digest: hashTypedData(typed),
        delegation_hash: delegationHash(r.unsigned),
        binding: r.binding,
      },
      authorization: setup.authorization,
      curve_roots: curveRootsOf(r).map((x) => curveRootToSign(d, x, r.binding.curve_tokens ?? [])),
    },
    setup: { steps: setup.steps, budget_usd: p.budgetUsd, budgets: setup.budgets },
    caveats: describeCaveats(r.unsigned.caveats, c.enforcers),
    exposure: {
      max_trade_usd: q.max_trade_usd,
      max_day_usd: p.maxDay,
      max_trades: q.max_trades,
      setup_budget_usd: p.budgetUsd,
      worst_case_usd: Math.min(p.maxDay, q.max_trade_usd * q.max_trades),
      erc20_on_chain_bound: setup.budgets,
    },
    on_chain_bounds: onChainBounds(d, q, p, r),
    not_enforced_on_chain: notEnforcedOnChain(r),
    curve: r.curveRoot
      ? {
          allowed: true,
          tokens: r.binding.curve_tokens,
          roots: curveRootsOf(r).map((x) => delegationHash(x)),
          launchpad: c.launchpad,
          fee:
            "plain ETH to the fee recipient, the first call of one batch the wallet runs itself: " +
            "the fee and the trade are redeemed together or not at all",
          max_calls: q.max_trades,
          note:
            "a curve trade needs the wallet to hold at least the curve root's ETH per trade " +
            "(its on-chain ETH bound reads the balance before the trade)",
        }
      : { allowed: false, reason: "no session token trades on a live launchpad curve" },
    then: nextSteps(r, setup),
  };
}

/** What the chain itself enforces for the roots (the start answer's `on_chain_bounds`). */
function onChainBounds(d: SessionDeps, q: StartGrantParameters, p: GrantParties, r: GrantRoots) {
  const c = d.config.contracts;
  const { bounds } = r;
  return {
    targets: [c.universalRouter, c.permit2],
    methods: [
      "UniversalRouter.execute(bytes,bytes[],uint256)",
      "Permit2.approve(token, spender = router, amount, expiration)",
    ],
    permit2_spender: c.universalRouter,
    eth_per_call_wei: bounds.maxValueWei.toString(),
    eth_per_day_wei: bounds.dayValueWei?.toString() ?? "0",
    expires: r.expires,
    max_calls: bounds.maxCalls,
    redeemer: p.executor,
    wallet_nonce: bounds.walletNonce.toString(),
    leaf_ttl_s: LEAF_TTL_S,
    ...(r.curveRoot
      ? {
          curve_root: {
            targets: [p.wallet],
            methods: [
              "the wallet's own execute(batch, [plain ETH to the fee recipient, launchpad buy(token, _, wallet)])",
              "the wallet's own execute(batch, [plain ETH to the fee recipient, launchpad sell(token, _, _, wallet)])",
            ],
            launchpad: c.launchpad,
            fee_recipient: d.config.feeRecipient,
            tokens: r.binding.curve_tokens,
            eth_per_call_wei: bounds.maxValueWei.toString(),
            eth_per_call: "the wallet's ETH decrease per trade, fee and buy together",
            max_calls: q.max_trades,
          },
          max_calls_all_roots: bounds.maxCalls + q.max_trades,
        }
      : {}),
  };
}

/** What the chain does not enforce, and who does (the start answer's `not_enforced_on_chain`). */
function notEnforcedOnChain(r: GrantRoots): string[] {
  return [
    "USD per-trade cap (max_trade_usd): the co-signer",
    "USD 24-hour cap (max_day_usd), counted per wallet over every session: the co-signer",
    "trade count beyond the call limit, which also counts Permit2 approvals: the co-signer",
    "prices and minimum outputs against oracle marks: the co-signer",
    "fees: the co-signer against this binding",
    "recipients inside the router's commands: the co-signer decodes every command",
    "ERC-20 amounts beyond the wallet's Permit2 allowances (setup)",
    ...(r.curveRoot
      ? ["the curve root's ETH per day (on chain: its ETH per trade times its calls): the co-signer"]
      : []),
    ...(r.marks
      ? [
          `feedless tokens (${Object.keys(r.marks).join(", ")}) priced at the owner-signed marks ` +
            "in sign.delegation.binding.marks: the co-signer",
        ]
      : []),
  ];
}

/** The wallet's next steps, in order (the start answer's `then`). */
function nextSteps(r: GrantRoots, setup: GrantSetup): string[] {
  const curve = r.curveRoot !== null;
  return [
    "sign sign.delegation.typed_data with the wallet's main key (eth_signTypedData_v4)",
    ...(curve ? ["sign each sign.curve_roots[].typed_data with the wallet's main key"] : []),
    ...(setup.authorization ? ["sign the EIP-7702 authorization (sign.authorization) with the wallet's key"] : []),
    "POST live/session/grant with session_id, delegation_signature" +
      (setup.authorization ? ", authorization_signature" : "") +
      (curve ? ", curve_root_signatures {delegation_hash: signature}" : ""),
    ...(setup.steps.length ? ["send the setup steps from the wallet (the upgrade first)"] : []),
    "trade with POST live/session/trade (wallet's or executor's key); the executor signs and submits",
  ];
}

/**
 * Owner-signed marks for the session's feedless tokens (no oracle feed), and where they are read
 * (the deepest hookless pool against USDG or ETH, or the launchpad curve) so the co-signer and the
 * SDK can read the same source themselves. The mark is the source's 30-minute time-weighted
 * median, never one block's price, and is signed only while the price held within the pair's band
 * of it for 90 % of the window, the spot sits within that band (lib/markSource markUnsettled), and
 * the source is deep enough (else 503 NO_MARK: SPEC's grant code for "no price", and it passes:
 * ask again once the price settles). undefined when every token has a feed.
 */
async function signedMarks(
  d: SessionDeps,
  tokens: TokenInfo[],
  pools: PoolState[],
): Promise<Record<string, SignedMark> | undefined> {
  const out: Record<string, SignedMark> = {};
  const usdg = d.config.tokens.USDG!.address;
  const hookless = pools.filter((p) => p.hooks === zeroAddress);
  const feedless = tokens.filter((t) => !t.feed);
  if (!feedless.length) return undefined;
  const to = Number((await rpc(d.chain.getBlock())).timestamp);
  for (const t of feedless) {
    const name = t.symbol || t.address;
    const m = await rpc(d.market.mark(t.address, t.decimals));
    if (!m || m.stale || !(m.usd > 0))
      throw new Refusal("NO_MARK", `no fresh price for ${name} to sign its mark`, {}, { retryAfterS: 5 });
    if (m.source === "fixed") continue;
    const pool =
      m.source === "curve"
        ? null
        : (deepestPool(hookless, t.currency, usdg) ?? deepestPool(hookless, t.currency, zeroAddress));
    const source: MarkSource | null =
      m.source === "curve"
        ? { kind: "curve", launchpad: lc(d.config.contracts.launchpad) }
        : pool
          ? {
              kind: "pool",
              currency0: lc(pool.currency0),
              currency1: lc(pool.currency1),
              fee: pool.fee,
              tick_spacing: pool.tickSpacing,
              hooks: lc(pool.hooks),
              against: lc(lc(pool.currency0) === lc(t.currency) ? pool.currency1 : pool.currency0),
            }
          : null;
    if (!source)
      throw new Refusal(
        "NO_MARK",
        `${name} has no oracle feed and no hookless pool against USDG or ETH to sign its mark`,
        {},
        { retryAfterS: 5 },
      );
    const band = markBandBps(source, usdg);
    const w = await rpc(d.market.windowMark(t, pool ?? "curve", to, band));
    if (!w || !(w.usd > 0))
      throw new Refusal(
        "NO_MARK",
        `${name} has no ${MARK_WINDOW_S / 60}-minute price history at its source to sign a mark from`,
        {},
        { retryAfterS: 60 },
      );
    if (w.depthUsd < MIN_MARK_DEPTH_USD)
      throw new Refusal(
        "NO_MARK",
        `the source of ${name}'s price holds about $${Math.round(w.depthUsd)} on its priced side, ` +
          `under $${MIN_MARK_DEPTH_USD}: too shallow to price a session`,
        {},
        { retryAfterS: 300 },
      );
    const unsettled = markUnsettled(
      { median: w.usd, stableShare: w.stableShare },
      await chainSpotUsd(d, source, t),
      band,
    );
    if (unsettled)
      throw new Refusal(
        "NO_MARK",
        `no mark for ${name} to sign: ${unsettled}; ask again once it settles`,
        {},
        { retryAfterS: 60 },
      );
    out[lc(t.address)] = { usd: Number(w.usd.toPrecision(8)), decimals: t.decimals, source };
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The source's spot in USD at the chain's head. Read on the chain: the indexer may trail the block
 * that just pushed the price (and the co-signer, reading the chain, would then refuse what the API
 * signed). Its `against` side is USDG ($1) or ETH (at the ETH mark).
 */
async function chainSpotUsd(d: SessionDeps, source: MarkSource, t: TokenInfo): Promise<number> {
  const c = d.config.contracts;
  const usdg = d.config.tokens.USDG!;
  const decimalsOf = (a: Address) => (a === zeroAddress ? 18 : lc(a) === lc(usdg.address) ? usdg.decimals : null);
  const inUsdg = source.kind === "pool" && lc(source.against) === lc(usdg.address);
  const [spot, eth] = await rpc(
    Promise.all([
      readSpot(d.chain, source, t, { poolManager: c.poolManager, launchpad: c.launchpad, againstDecimals: decimalsOf }),
      inUsdg ? null : d.market.mark(zeroAddress),
    ]),
  );
  const againstUsd = inUsdg ? 1 : eth && !eth.stale ? eth.usd : null;
  if (spot === null || againstUsd === null)
    throw new Refusal("NO_MARK", `no spot price for ${t.symbol || t.address} at its source`, {}, { retryAfterS: 5 });
  return spot * againstUsd;
}

/**
 * A grant's token through the registry; an address that is no known token is SPEC's grant code
 * UNKNOWN_TOKEN (404), not trading's TOKEN_UNKNOWN.
 */
async function sessionToken(d: SessionDeps, param: string, who: Who): Promise<TokenInfo> {
  try {
    return await d.sides.info(param, who);
  } catch (err) {
    if (err instanceof Refusal && err.code === "TOKEN_UNKNOWN")
      throw new Refusal("UNKNOWN_TOKEN", err.message, {}, { cause: err });
    throw err;
  }
}

/** The session's ERC-20 tokens that trade on a live (not graduated) launchpad curve. */
async function liveCurveTokens(d: SessionDeps, tokens: TokenInfo[]): Promise<Address[]> {
  const candidates = tokens.filter((t) => !t.core && t.address !== zeroAddress);
  const launchpad = d.config.contracts.launchpad;
  const curves = await rpc(
    Promise.all(
      candidates.map((t) =>
        d.chain.readContract({ address: launchpad, abi: launchpadAbi, functionName: "curves", args: [t.address] }),
      ),
    ),
  );
  return candidates.filter((_, i) => curves[i]![0] !== zeroAddress && !curves[i]![2]).map((t) => t.address);
}

/** A curve root as the wallet signs it, with which LogicalOrWrapper group serves which call. */
function curveRootToSign(d: SessionDeps, r: Omit<Delegation, "signature">, tokens: string[]) {
  const typed = delegationTypedData(d.config.chainId, d.config.contracts.delegationManager, r);
  return {
    typed_data: { ...typed, message: { ...typed.message, salt: typed.message.salt.toString() } },
    digest: hashTypedData(typed),
    delegation_hash: delegationHash(r),
    groups: tokens.flatMap((token, i) => [
      { group: curveGroupOf(i, true), call: "fee_transfer+buy", token },
      { group: curveGroupOf(i, false), call: "fee_transfer+sell", token },
    ]),
  };
}

/** The enforcers' names and what each caveat binds (the start answer's `caveats`). */
function describeCaveats(caveats: Delegation["caveats"], enforcers: Record<string, Address>) {
  const nameOf = (a: Address) => Object.entries(enforcers).find(([, x]) => lc(x) === lc(a))?.[0] ?? a;
  return caveats.map((c) => ({ enforcer: nameOf(c.enforcer), address: c.enforcer, terms: c.terms }));
}

/** live/session/grant, second call: checks the wallet's signatures, hands the root to the co-signer, switches on. */
export async function switchOn(d: SessionDeps, q: SwitchOnParameters, who: Who) {
  const s = await ownSession(d, q.session_id, who);
  if (s.status === "revoked") throw new Refusal("SESSION_REVOKED", "this session was revoked");
  if (s.expires <= d.now())
    throw new Refusal("SESSION_EXPIRED", "this session ended before it was switched on; grant again");
  if (s.status === "active") {
    if (lc(s.root.signature) === lc(q.delegation_signature)) return switchOnAnswer(d, s);
    throw new Refusal(
      "BAD_SIGNATURE",
      "this session is already switched on with another signature",
      {},
      { context: "typed_data" },
    );
  }

  const c = d.config.contracts;
  const typed = delegationTypedData(d.config.chainId, c.delegationManager, s.root);
  const signer = await recoverTypedDataAddress({ ...typed, signature: q.delegation_signature as Hex }).catch(() => {
    throw new Refusal("BAD_SIGNATURE", "delegation_signature is not a signature", {}, { context: "malformed" });
  });
  if (lc(signer) !== lc(s.wallet))
    throw new Refusal(
      "BAD_SIGNATURE",
      "delegation_signature is not the wallet's signature of sign.delegation.typed_data",
      {},
      { context: "typed_data" },
    );

  const curveRoots = await signedCurveRoots(d, s, q.curve_root_signatures ?? {});
  const authorization = await checkAuthorization(d, s, q.authorization_signature as Hex | undefined);
  const root: Delegation = { ...s.root, signature: q.delegation_signature as Hex };
  if (delegationHash(root) !== s.delegationHash || BigInt(bindingHash(s.binding)) !== root.salt) {
    throw new Refusal("SESSION_BOUND", "the stored binding does not hash to the root's salt; grant again");
  }
  await d.cosigner!.register({ sessionId: s.id, root, binding: s.binding, curveRoots });
  if (!(await d.store.activate(s.id, root.signature, authorization, curveRoots)))
    throw new Refusal("SESSION_REVOKED", "this session changed while switching on; read it again");
  return switchOnAnswer(d, (await d.store.byId(s.id))!);
}

/**
 * Each curve root signed by the wallet, one signature per root hash: none missing, none unknown
 * (SESSION_CURVE_ROOTS).
 */
async function signedCurveRoots(d: SessionDeps, s: StoredSession, sigs: Record<string, string>): Promise<Delegation[]> {
  const expected = s.curveRoots.map((r) => lc(delegationHash(r)));
  const given = Object.keys(sigs).map(lc);
  const missing = expected.filter((h) => !given.includes(h));
  const unknown = given.filter((h) => !expected.includes(h));
  if (missing.length || unknown.length) {
    throw new Refusal(
      "SESSION_CURVE_ROOTS",
      expected.length
        ? "curve_root_signatures must sign exactly the session's curve roots " +
            `(missing ${missing.length}, unknown ${unknown.length})`
        : "this session has no curve roots to sign",
      { curve_roots: expected },
    );
  }
  const c = d.config.contracts;
  const out: Delegation[] = [];
  for (const r of s.curveRoots) {
    const signature = Object.entries(sigs).find(([h]) => lc(h) === lc(delegationHash(r)))![1] as Hex;
    const signer = await recoverTypedDataAddress({
      ...delegationTypedData(d.config.chainId, c.delegationManager, r),
      signature,
    }).catch(() => null);
    if (!signer || lc(signer) !== lc(s.wallet))
      throw new Refusal(
        "BAD_SIGNATURE",
        `the curve root ${delegationHash(r)} is not signed by the wallet`,
        {},
        { context: "typed_data" },
      );
    out.push({ ...r, signature });
  }
  return out;
}

/**
 * The EIP-7702 authorization: required while the wallet is a plain EOA. It must be signed by the
 * wallet, for the pinned delegator, on this chain (never chain 0: valid on every chain), at the
 * nonce the start answer named (the wallet's next nonce + 1, sent by itself) or its next nonce.
 */
async function checkAuthorization(
  d: SessionDeps,
  s: StoredSession,
  signature: Hex | undefined,
): Promise<StoredAuthorization | null> {
  const code = walletCodeOf(await rpc(d.chain.getCode({ address: s.wallet })), d.config.contracts.statelessDelegator);
  if (!signature) {
    if (code.state === "pinned") return null;
    throw new Refusal(
      "BAD_SIGNATURE",
      "the wallet is a plain EOA: send authorization_signature (the EIP-7702 authorization to the pinned delegator)",
      {},
      { context: "typed_data" },
    );
  }
  const next = await rpc(d.chain.getTransactionCount({ address: s.wallet, blockTag: "pending" }));
  const address = d.config.contracts.statelessDelegator;
  for (const nonce of [next + 1, next]) {
    const recovered = await recoverAuthorizationAddress({
      authorization: { address, chainId: d.config.chainId, nonce },
      signature,
    }).catch(() => null);
    if (recovered && lc(recovered) === lc(s.wallet)) return { address, chain_id: d.config.chainId, nonce, signature };
  }
  throw new Refusal(
    "BAD_SIGNATURE",
    `authorization_signature is not the wallet's EIP-7702 authorization to ${address} ` +
      `on chain ${d.config.chainId} at nonce ${next + 1} or ${next}`,
    {},
    { context: "typed_data" },
  );
}

async function switchOnAnswer(d: SessionDeps, s: StoredSession) {
  return {
    session_id: s.id,
    status: s.status,
    delegation_hash: s.delegationHash,
    authorization_stored: s.authorization !== null,
    limits: s.binding.limits,
    curve_roots: s.curveRoots.map((r) => ({
      delegation_hash: delegationHash(r),
      signed: r.signature !== "0x",
      tokens: s.binding.curve_tokens ?? [],
    })),
    expires: s.expires,
    wallet_code: s.walletCode,
    setup: s.start.setup,
    session: await sessionView(d, s),
  };
}

/** The session, for the wallet's own key (an executor's key: WALLET_MISMATCH; anyone else: NO_SESSION). */
export async function ownSession(d: SessionDeps, id: string, who: Who): Promise<StoredSession> {
  const s = await d.store.byId(id);
  const w = who.key.wallet;
  if (!s || !w || (lc(w) !== lc(s.wallet) && lc(w) !== lc(s.executor)))
    throw new Refusal("NO_SESSION", "no such session for this key");
  if (lc(w) !== lc(s.wallet))
    throw new Refusal("WALLET_MISMATCH", "only the wallet's own key grants or revokes its sessions");
  return s;
}
