import { randomBytes } from "node:crypto";
import { bytesToHex, getAddress, type Address, type Hex } from "viem";
import { Refusal } from "../api/errors/index.js";
import type { CosignAnswer, CosignerPort, CosignerRoot, CosignRequest } from "../api/ports/cosigner.js";
import type { Db } from "../api/ports/store/db.js";
import {
  delegationFromJson,
  delegationHash,
  delegationToJson,
  delegationTypedData,
  leafCaveats,
  LEAF_TTL_S,
  walletBatch,
  type Delegation,
  type DelegationJson,
} from "../lib/delegation.js";
import { MIN_MARK_DEPTH_USD } from "../lib/markSource.js";
import { readRouterCall, type RouterReading } from "../lib/router/read.js";
import type { SessionBinding } from "../lib/sessionBinding.js";
import { checkExecution, type Check } from "./checks.js";
import {
  assertNoneSanctioned,
  cachedMarks,
  classOf,
  cosignerNonce,
  cosignerState,
  nowOf,
  oraclePriced,
  ownPrice,
  readCurve,
  usdgOf,
  withSignedMarks,
  type CosignerDeps,
  type CosignerState,
  type PricedMarks,
} from "./reads.js";
import {
  asCurveRootProblems,
  curveRootCountProblems,
  feedlessLifeProblems,
  feedlessTokens,
  markProblems,
  reusedRootRefusal,
  rootRefusal,
  signedRootProblems,
  unmarkedProblems,
  usableMark,
} from "./rootRules.js";
import {
  boundRefusal,
  curveRefusal,
  executionRefusal,
  heldRefusal,
  leafExpiry,
  revokedRefusal,
  roundUsd,
  spendAfter,
} from "./tradeRules.js";
import type { FeeClass } from "../lib/fees.js";
import { lc } from "../lib/address.js";
import { cosignerDecisions, ruleLabel } from "../lib/metrics.js";

export type { CosignerPins } from "./pins.js";
export { feeClassOf } from "./reads.js";

const DAY_S = 86_400;
/** Co-signings one co-signer takes at once (a store pool holds about ten connections). */
const MAX_IN_FLIGHT = 32;
export { MIN_MARK_DEPTH_USD };

/**
 * The co-signer: holds switched-on roots, and for each trade re-reads the execution and signs a
 * leaf to the executor that allows exactly it, once, for LEAF_TTL_S. Its counters (trades per
 * root, USD per wallet over 24 h) live in the store and move under a row lock on the wallet, so
 * any number of API instances cannot co-sign past a limit together. Its rules are pure functions
 * (rootRules.ts, checks.ts, tradeRules.ts); this module holds the state and does the I/O.
 */
export function createCosigner(d: CosignerDeps): CosignerPort {
  // Past this many co-signings at once the next is BUSY at once (each holds a store connection and a wallet's lock).
  const s = cosignerState(d, d.maxInFlight ?? MAX_IN_FLIGHT);
  return {
    address: d.account.address,
    register: (r) => register(s, r),
    revoke: (hash) => revoke(s, hash),
    cosign: (req) => cosign(s, req),
    usage: (hash, wallet) => usage(s, hash, wallet),
  };
}

async function register(s: CosignerState, r: CosignerRoot) {
  const problems = await rootProblems(s, r);
  for (const c of r.curveRoots ?? [])
    problems.push(...asCurveRootProblems(await signedRootProblems(rootPins(s), c, r.binding, "curve")));
  problems.push(...curveRootCountProblems(r));
  const refused = rootRefusal(problems);
  if (refused) throw refused;
  const hash = delegationHash(r.root);
  const rows = await s.d.db.query(
    `INSERT INTO app.cosigner_roots
       (delegation_hash, session_id, wallet, executor, binding, root, registered_at, curve_roots)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (delegation_hash) DO NOTHING RETURNING delegation_hash`,
    [
      hash,
      r.sessionId,
      lc(r.binding.wallet),
      lc(r.binding.executor),
      JSON.stringify(r.binding),
      JSON.stringify(delegationToJson(r.root)),
      nowOf(s),
      r.curveRoots?.length ? JSON.stringify(r.curveRoots.map(delegationToJson)) : null,
    ],
  );
  if (!rows.length) throw reusedRootRefusal();
}

const rootPins = (s: CosignerState) => ({ cosigner: s.d.account.address, pins: s.d.pins });

/** The root as the co-signer accepts it (rootRules.ts), and its feedless tokens' marks against its own reads. */
async function rootProblems(s: CosignerState, r: CosignerRoot): Promise<Check[]> {
  return [
    ...(await signedRootProblems(rootPins(s), r.root, r.binding, "session")),
    ...(await feedlessProblems(s, r.binding)),
  ];
}

/**
 * Every binding token the co-signer cannot price by an oracle needs an owner-signed mark close
 * to its own read of the mark's source, and such a session lasts at most 24 hours.
 */
async function feedlessProblems(s: CosignerState, b: SessionBinding): Promise<Check[]> {
  const feedless = feedlessTokens(b, (t) => oraclePriced(s, t));
  if (!feedless.length) return [];
  const out = feedlessLifeProblems(b, nowOf(s));
  for (const t of feedless) {
    const m = usableMark(b, t);
    if (!m) {
      out.push(...unmarkedProblems(t));
      continue;
    }
    out.push(...markProblems(t, m, await ownPrice(s, t as Address, m).catch(() => null), usdgOf(s)));
  }
  return out;
}

/** Under the wallet's row lock: a co-signing in progress finishes first, none starts after this returns. */
async function revoke(s: CosignerState, hash: Hex) {
  await s.d.db.tx(async (db) => {
    const [root] = await db.query<{ wallet: string }>(
      "SELECT wallet FROM app.cosigner_roots WHERE delegation_hash = $1",
      [lc(hash)],
    );
    if (!root) return;
    await lockWallet(db, root.wallet);
    await db.query("UPDATE app.cosigner_roots SET revoked_at = $2 WHERE delegation_hash = $1 AND revoked_at IS NULL", [
      lc(hash),
      nowOf(s),
    ]);
  });
}

/** The upsert takes the wallet's row lock until commit. */
const lockWallet = (db: Db, wallet: string) =>
  db.query(
    "INSERT INTO app.cosigner_wallets (wallet) VALUES ($1) ON CONFLICT (wallet) DO UPDATE SET wallet = EXCLUDED.wallet",
    [wallet],
  );

/**
 * One co-signing, counted in pit_cosigner_decisions_total: signed (rule `all`), or refused by the rule that
 * decided (the first failed check a REFUSED names, else the refusal's code); a failure that is no refusal
 * is `error`.
 */
async function cosign(s: CosignerState, req: CosignRequest): Promise<CosignAnswer> {
  try {
    const answer = await decide(s, req);
    cosignerDecisions.inc({ decision: "signed", rule: "all" });
    return answer;
  } catch (err) {
    cosignerDecisions.inc(
      err instanceof Refusal ? { decision: "refused", rule: decidingRule(err) } : { decision: "error", rule: "none" },
    );
    throw err;
  }
}

function decidingRule(r: Refusal): string {
  const checks = (r.extra as { signer_checks?: { rule?: unknown; ok?: unknown }[] }).signer_checks;
  const failed = Array.isArray(checks) ? checks.find((c) => c?.ok === false) : undefined;
  return ruleLabel(failed?.rule ?? r.code);
}

async function decide(s: CosignerState, req: CosignRequest): Promise<CosignAnswer> {
  if (s.d.frozen)
    throw new Refusal(
      "SIGNER_FROZEN",
      "the co-signer is frozen by its operator; nothing is co-signed",
      {},
      { retryAfterS: 60 },
    );
  if (s.inFlight >= s.maxInFlight)
    throw new Refusal("BUSY", "the co-signer has too many trades in hand; retry", {}, { retryAfterS: 1 });
  s.inFlight++;
  try {
    return await cosignOne(s, req);
  } finally {
    s.inFlight--;
  }
}

type HeldRoot = {
  wallet: string;
  executor: string;
  binding: string;
  root: string;
  curve_roots: string | null;
  revoked_at: string | null;
};
/**
 * What a co-signing read before taking the wallet's lock: the trade as the co-signer reads it, priced
 * and classed, and its nonce.
 */
type TradeRead = {
  hash: string;
  held: HeldRoot;
  binding: SessionBinding;
  reading: RouterReading;
  authority: Hex;
  priced: PricedMarks;
  classes: Map<string, FeeClass | null>;
  leafNonce: bigint;
};

async function cosignOne(s: CosignerState, req: CosignRequest): Promise<CosignAnswer> {
  const read = await readTrade(s, req);
  return s.d.db.tx((db) => signUnderLock(s, db, req, read));
}

/**
 * The held root's gates (tradeRules.ts), then the co-signer's own reads of the trade; the sanctions
 * list read beside them.
 */
async function readTrade(s: CosignerState, req: CosignRequest): Promise<TradeRead> {
  const hash = lc(req.delegationHash);
  const [held] = await s.d.db.query<HeldRoot>(
    "SELECT wallet, executor, binding, root, curve_roots, revoked_at " +
      "FROM app.cosigner_roots WHERE delegation_hash = $1",
    [hash],
  );
  const unheld = heldRefusal(held);
  if (unheld) throw unheld;
  const binding = JSON.parse(held!.binding) as SessionBinding;
  const root = JSON.parse(held!.root) as Delegation & { salt: string };
  const unbound = boundRefusal(binding, root.salt, nowOf(s));
  if (unbound) throw unbound;
  // Read beside the trade's own reads (one round trip, not two); nothing is signed before it answers.
  const screened = assertNoneSanctioned(s, binding).then(
    () => null,
    (err: unknown) => err,
  );

  const { execution } = req;
  // A curve trade redeems the session's curve root: one leaf over the wallet's own batch [fee,
  // curve call], so neither is redeemed without the other; anything else the root itself.
  const curveRoot = held!.curve_roots
    ? delegationFromJson((JSON.parse(held!.curve_roots) as DelegationJson[])[0]!)
    : null;
  const noCurve = curveRefusal(!!req.fee, !!curveRoot);
  if (noCurve) throw noCurve;
  const reading = req.fee
    ? await readCurve(s, execution, req.fee, binding)
    : readRouterCall(execution.target, execution.value, execution.callData, {
        router: s.d.pins.router,
        wallet: binding.wallet,
        feeRecipient: s.d.pins.feeRecipient,
        weth: s.d.pins.weth,
      });
  const authority = (req.fee ? delegationHash(curveRoot!) : hash) as Hex;
  const priced = await withSignedMarks(
    s,
    await cachedMarks(s, reading.tokenIn, reading.tokenOut),
    binding,
    reading.tokenIn,
    reading.tokenOut,
  );
  const classes = new Map<string, FeeClass | null>();
  for (const t of [reading.tokenIn, reading.tokenOut]) if (t) classes.set(lc(t), await classOf(s, t, binding));
  const leafNonce = await cosignerNonce(s);
  const refused = await screened;
  if (refused) throw refused;
  return { hash, held: held!, binding, reading, authority, priced, classes, leafNonce };
}

/**
 * One wallet at a time: the upsert takes the wallet's row lock until commit, so the 24 h sum and
 * the trade count cannot be read twice before either is written. The checks pass, or nothing is signed.
 */
async function signUnderLock(s: CosignerState, db: Db, req: CosignRequest, t: TradeRead): Promise<CosignAnswer> {
  const { hash, held, binding, priced } = t;
  await lockWallet(db, held.wallet);
  const [state] = await db.query<{ trades_used: number; revoked_at: string | null; day: string | number }>(
    `SELECT trades_used, revoked_at,
       (SELECT COALESCE(SUM(notional_usd), 0) FROM app.cosigner_leaves WHERE wallet = $2 AND created_at > $3) AS day
     FROM app.cosigner_roots WHERE delegation_hash = $1`,
    [hash, held.wallet, nowOf(s) - DAY_S],
  );
  const revoked = revokedRefusal(state!.revoked_at);
  if (revoked) throw revoked;
  const day = Number(state!.day);
  const tradesUsed = Number(state!.trades_used);
  const result = checkExecution({
    binding,
    reading: t.reading,
    marks: priced,
    counters: { tradesUsed, last24hUsd: day },
    now: nowOf(s),
    chainNow: Math.max(nowOf(s), priced.chainTime),
    feeClassOf: (x) => t.classes.get(lc(x)) ?? null,
    declaredFeeBps: req.declared.feeBps,
    declaredExpectedOut: req.declared.expectedOut,
  });
  const refused = executionRefusal(result);
  if (refused) throw refused;
  const notionalUsd = result.notionalUsd!;

  const expires = leafExpiry(nowOf(s), priced.chainTime, LEAF_TTL_S, binding.expires);
  const signed = req.fee ? walletBatch(getAddress(binding.wallet), [req.fee, req.execution]) : req.execution;
  const unsigned = {
    delegate: getAddress(binding.executor),
    delegator: s.d.account.address,
    authority: t.authority,
    caveats: leafCaveats({ execution: signed, before: expires, cosignerNonce: t.leafNonce }, s.d.pins.enforcers),
    salt: BigInt(bytesToHex(randomBytes(32))),
  };
  const leaf = {
    ...unsigned,
    signature: await s.d.account.signTypedData(
      delegationTypedData(s.d.pins.chainId, s.d.pins.delegationManager, unsigned),
    ),
  };
  const leafHash = delegationHash(leaf);
  await db.query(
    `WITH leaf AS (INSERT INTO app.cosigner_leaves (wallet, delegation_hash, leaf_hash, notional_usd, created_at)
       VALUES ($1, $2, $3, $4, $5))
     UPDATE app.cosigner_roots SET trades_used = trades_used + 1 WHERE delegation_hash = $2`,
    [held.wallet, hash, leafHash, notionalUsd, nowOf(s)],
  );
  return { leaf, leafHash, expires, checks: result.checks, spend: spendAfter(binding, tradesUsed, day, notionalUsd) };
}

async function daySum(s: CosignerState, db: Db, wallet: string) {
  const [r] = await db.query<{ s: string | number }>(
    "SELECT COALESCE(SUM(notional_usd), 0) AS s FROM app.cosigner_leaves WHERE wallet = $1 AND created_at > $2",
    [wallet, nowOf(s) - DAY_S],
  );
  return Number(r!.s);
}

async function usage(s: CosignerState, hash: Hex, wallet: Address) {
  const [r] = await s.d.db.query<{ trades_used: number }>(
    "SELECT trades_used FROM app.cosigner_roots WHERE delegation_hash = $1",
    [lc(hash)],
  );
  return { trades_used: Number(r?.trades_used ?? 0), last_24h_usd: roundUsd(await daySum(s, s.d.db, lc(wallet))) };
}
