import { randomBytes } from "node:crypto";
import { bytesToHex, getAddress, recoverTypedDataAddress, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { LRUCache } from "lru-cache";
import { priceFeedAbi } from "../abis/fixtures.js";
import { onClock } from "../lib/cacheClock.js";
import { multicall3Abi } from "../abis/multicall3.js";
import { Refusal } from "../api/errors/index.js";
import type { CosignAnswer, CosignerPort, CosignerRoot, CosignRequest } from "../api/ports/cosigner.js";
import type { Db } from "../api/ports/store/db.js";
import { decodeRedeemerTerms, decodeTimestampTerms } from "@metamask/delegation-core";
import { delegationHash, delegationTypedData, leafCaveats, LEAF_TTL_S, nonceEnforcerAbi, type Delegation } from "../lib/delegation.js";
import type { FeeClass } from "../lib/fees.js";
import { markStale } from "../lib/markStale.js";
import { readRouterCall } from "../lib/routerRead.js";
import { bindingHash, type SessionBinding } from "../lib/sessionBinding.js";
import { checkExecution, type Check, type Marks } from "./checks.js";

/** What the co-signer pins of the chain: its own copy, not the API's answers. */
export type CosignerPins = {
  chainId: number;
  delegationManager: Address;
  multicall3: Address;
  enforcers: Record<string, Address>;
  router: Address;
  weth: Address;
  feeRecipient: Address;
  /** Tokens it can price and class: address, decimals, oracle feed, and whether the fee class is major. */
  tokens: { address: Address; decimals: number; feed: Address | null; stock: boolean; major: boolean }[];
};

const lc = (a: string) => a.toLowerCase();
const DAY_S = 86_400;
/** Co-signings one co-signer takes at once (a store pool holds about ten connections). */
const MAX_IN_FLIGHT = 32;
/** How long the co-signer reuses its oracle read of a pair (the chain time in it only shortens a leaf). */
const MARKS_TTL_MS = 1_000;
/** Rules that are session limits with their own SPEC code; any other failure answers REFUSED. */
const SESSION_CODES = new Set(["SESSION_EXPIRY", "SESSION_TOKENS", "SESSION_MAX_TRADE", "SESSION_MAX_DAY", "SESSION_TRADES_LEFT", "SESSION_TARGET", "SESSION_RECIPIENTS", "SESSION_EXECUTION"]);

/**
 * The co-signer: holds switched-on roots, and for each trade re-reads the execution and signs a
 * leaf to the executor that allows exactly it, once, for LEAF_TTL_S. Its counters (trades per
 * root, USD per wallet over 24 h) live in the store and move under a row lock on the wallet, so
 * any number of API instances cannot co-sign past a limit together.
 */
export function createCosigner(d: { account: LocalAccount; db: Db; chain: PublicClient; pins: CosignerPins; clock: () => number; frozen?: boolean; maxInFlight?: number }): CosignerPort {
  const now = () => Math.floor(d.clock() / 1000);
  // Past this many co-signings at once the next is BUSY at once (each holds a store connection and a wallet's lock).
  const maxInFlight = d.maxInFlight ?? MAX_IN_FLIGHT;
  let inFlight = 0;
  const tokenOf = (a: Address) => d.pins.tokens.find((t) => lc(t.address) === lc(a)) ?? null;
  let nonce: Promise<bigint> | null = null;
  const cosignerNonce = () =>
    (nonce ??= d.chain
      .readContract({ address: d.pins.enforcers.NonceEnforcer!, abi: nonceEnforcerAbi, functionName: "currentNonce", args: [d.pins.delegationManager, d.account.address] })
      .catch((err) => {
        nonce = null;
        throw new Refusal("CHAIN_UNAVAILABLE", "the co-signer could not read its nonce; nothing signed", {}, { cause: err, retryAfterS: 2 });
      }));

  async function register(r: CosignerRoot) {
    const problems = await rootProblems(r);
    if (problems.length) throw new Refusal("REFUSED", `the co-signer will not hold this root: ${problems.map((p) => p.message).join("; ")}`, { signer_checks: problems });
    const hash = delegationHash(r.root);
    const rows = await d.db.query(
      `INSERT INTO app.cosigner_roots (delegation_hash, session_id, wallet, executor, binding, root, registered_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (delegation_hash) DO NOTHING RETURNING delegation_hash`,
      [hash, r.sessionId, lc(r.binding.wallet), lc(r.binding.executor), JSON.stringify(r.binding), JSON.stringify({ ...r.root, salt: r.root.salt.toString() }), now()],
    );
    if (!rows.length) throw new Refusal("REFUSED", "this signed root is registered already", { signer_checks: [{ rule: "ROOT_REUSED", ok: false, message: "same signed root registered twice" }] });
  }

  /** The root as the co-signer accepts it: signed by the wallet, salted with the binding, redeemable by the executor alone, ending by the binding's expiry. */
  async function rootProblems(r: CosignerRoot): Promise<Check[]> {
    const out: Check[] = [];
    const bad = (rule: string, message: string) => out.push({ rule, ok: false, message });
    const { root, binding } = r;
    if (lc(root.delegate) !== lc(d.account.address) || lc(binding.cosigner) !== lc(d.account.address)) bad("BINDING_TERMS", "the root is not delegated to this co-signer");
    if (lc(root.delegator) !== lc(binding.wallet)) bad("BINDING_TERMS", "the root's delegator is not the binding's wallet");
    if (binding.chain_id !== d.pins.chainId) bad("BINDING_TERMS", "the binding names another chain");
    if (BigInt(bindingHash(binding)) !== root.salt) bad("ROOT_BINDS_LIMITS", "the root's salt is not the hash of the limits binding");
    const redeemer = root.caveats.filter((c) => lc(c.enforcer) === lc(d.pins.enforcers.RedeemerEnforcer!));
    const redeemers = redeemer.length === 1 ? decodeRedeemerTerms(redeemer[0]!.terms).redeemers.map((a) => lc(a as string)) : [];
    if (redeemers.length !== 1 || redeemers[0] !== lc(binding.executor)) bad("BINDING_TERMS", "the root does not restrict redemption to the binding's executor");
    const stamps = root.caveats.filter((c) => lc(c.enforcer) === lc(d.pins.enforcers.TimestampEnforcer!)).map((c) => decodeTimestampTerms(c.terms).beforeThreshold);
    if (!stamps.length || Math.min(...stamps) > binding.expires) bad("BINDING_TERMS", "the root outlives the binding's expiry");
    try {
      const signer = await recoverTypedDataAddress({ ...delegationTypedData(d.pins.chainId, d.pins.delegationManager, root), signature: root.signature });
      if (lc(signer) !== lc(root.delegator)) bad("BINDING_TERMS", "the root's signature is not the wallet's");
    } catch {
      bad("BINDING_TERMS", "the root's signature does not decode");
    }
    return out;
  }

  // Oracle answers move a few times a day: one read a second per pair serves an agent trading often.
  const markCache = new LRUCache<string, Promise<Marks & { chainTime: number }>>({ max: 1_000, ttl: MARKS_TTL_MS, ...onClock(d.clock) });
  function cachedMarks(tokenIn: Address | null, tokenOut: Address | null) {
    const k = `${tokenIn}>${tokenOut}`;
    let p = markCache.get(k);
    if (!p) {
      p = marks(tokenIn, tokenOut);
      markCache.set(k, p);
      p.catch(() => markCache.delete(k));
    }
    return p;
  }

  /** Under the wallet's row lock: a co-signing in progress finishes first, none starts after this returns. */
  async function revoke(hash: Hex) {
    await d.db.tx(async (db) => {
      const [root] = await db.query<{ wallet: string }>("SELECT wallet FROM app.cosigner_roots WHERE delegation_hash = $1", [lc(hash)]);
      if (!root) return;
      await db.query("INSERT INTO app.cosigner_wallets (wallet) VALUES ($1) ON CONFLICT (wallet) DO UPDATE SET wallet = EXCLUDED.wallet", [root.wallet]);
      await db.query("UPDATE app.cosigner_roots SET revoked_at = $2 WHERE delegation_hash = $1 AND revoked_at IS NULL", [lc(hash), now()]);
    });
  }

  /**
   * Oracle marks read by the co-signer itself, null when missing or stale, and the chain's time
   * (leaves expire by the chain's clock, which may run ahead of ours): one multicall.
   */
  async function marks(tokenIn: Address | null, tokenOut: Address | null): Promise<Marks & { chainTime: number }> {
    const tin = tokenIn ? tokenOf(tokenIn) : null;
    const tout = tokenOut ? tokenOf(tokenOut) : null;
    const feeds = [tin, tout].map((t) => t?.feed ?? null);
    const results = await d.chain
      .multicall({
        contracts: [
          ...feeds.map((f) => ({ address: f ?? zeroAddress, abi: priceFeedAbi, functionName: "latestRoundData" as const })),
          { address: d.pins.multicall3, abi: multicall3Abi, functionName: "getCurrentBlockTimestamp" as const },
        ],
        allowFailure: true,
      })
      .catch((err) => {
        throw new Refusal("CHAIN_UNAVAILABLE", "the co-signer could not read its marks; nothing signed", {}, { cause: err, retryAfterS: 2 });
      });
    const usd = (i: number) => {
      const t = [tin, tout][i];
      const r = results[i];
      if (!t || !feeds[i] || !r || r.status !== "success") return null;
      const [, answer, , updatedAt] = r.result as readonly [bigint, bigint, bigint, bigint, bigint];
      if (answer <= 0n || markStale({ updatedAt: Number(updatedAt), now: now(), stock: t.stock })) return null;
      return Number(answer) / 1e8;
    };
    const time = results[2];
    const chainTime = time?.status === "success" ? Number(time.result as bigint) : now();
    return { usdIn: usd(0), usdOut: usd(1), decimalsIn: tin?.decimals ?? 18, decimalsOut: tout?.decimals ?? 18, chainTime };
  }

  async function cosign(req: CosignRequest): Promise<CosignAnswer> {
    if (d.frozen) throw new Refusal("SIGNER_FROZEN", "the co-signer is frozen by its operator; nothing is co-signed", {}, { retryAfterS: 60 });
    if (inFlight >= maxInFlight) throw new Refusal("BUSY", "the co-signer has too many trades in hand; retry", {}, { retryAfterS: 1 });
    inFlight++;
    try {
      return await cosignOne(req);
    } finally {
      inFlight--;
    }
  }

  async function cosignOne(req: CosignRequest): Promise<CosignAnswer> {
    const hash = lc(req.delegationHash);
    const [held] = await d.db.query<{ wallet: string; executor: string; binding: string; root: string; revoked_at: string | null }>("SELECT wallet, executor, binding, root, revoked_at FROM app.cosigner_roots WHERE delegation_hash = $1", [hash]);
    if (!held) throw new Refusal("REFUSED", "the co-signer holds no such root", { signer_checks: [{ rule: "TRADE_REFUSED", ok: false, message: "unknown root" }] });
    if (held.revoked_at !== null) throw new Refusal("SESSION_REVOKED", "the session was revoked; the co-signer signs nothing more for it");
    const binding = JSON.parse(held.binding) as SessionBinding;
    const root = JSON.parse(held.root) as Delegation & { salt: string };
    if (BigInt(bindingHash(binding)) !== BigInt(root.salt)) throw new Refusal("SESSION_BOUND", "the stored binding does not hash to the root's salt; grant again");
    if (now() >= binding.expires) throw new Refusal("SESSION_EXPIRED", `the session ended at ${binding.expires}`);

    const { execution } = req;
    const reading = readRouterCall(execution.target, execution.value, execution.callData, { router: d.pins.router, wallet: binding.wallet, feeRecipient: d.pins.feeRecipient, weth: d.pins.weth });
    const priced = await cachedMarks(reading.tokenIn, reading.tokenOut);
    const leafNonce = await cosignerNonce();

    return d.db.tx(async (db) => {
      // One wallet at a time: the upsert takes the wallet's row lock until commit, so the 24 h sum
      // and the trade count cannot be read twice before either is written.
      await db.query("INSERT INTO app.cosigner_wallets (wallet) VALUES ($1) ON CONFLICT (wallet) DO UPDATE SET wallet = EXCLUDED.wallet", [held.wallet]);
      const [state] = await db.query<{ trades_used: number; revoked_at: string | null; day: string | number }>(
        `SELECT trades_used, revoked_at, (SELECT COALESCE(SUM(notional_usd), 0) FROM app.cosigner_leaves WHERE wallet = $2 AND created_at > $3) AS day
         FROM app.cosigner_roots WHERE delegation_hash = $1`,
        [hash, held.wallet, now() - DAY_S],
      );
      if (state!.revoked_at !== null) throw new Refusal("SESSION_REVOKED", "the session was revoked; the co-signer signs nothing more for it");
      const day = Number(state!.day);
      const tradesUsed = Number(state!.trades_used);
      const { checks, notionalUsd } = checkExecution({ binding, reading, marks: priced, counters: { tradesUsed, last24hUsd: day }, now: now(), chainNow: Math.max(now(), priced.chainTime), feeClassOf: (t) => feeClassOf(t), declaredFeeBps: req.declared.feeBps });
      const failed = checks.filter((c) => !c.ok);
      if (failed.length || notionalUsd === null) throw refusal(failed);

      const expires = Math.min(Math.max(now(), priced.chainTime) + LEAF_TTL_S, binding.expires);
      const unsigned = { delegate: getAddress(binding.executor), delegator: d.account.address, authority: hash as Hex, caveats: leafCaveats({ execution, before: expires, cosignerNonce: leafNonce }, d.pins.enforcers), salt: BigInt(bytesToHex(randomBytes(32))) };
      const signature = await d.account.signTypedData(delegationTypedData(d.pins.chainId, d.pins.delegationManager, unsigned));
      const leaf: Delegation = { ...unsigned, signature };
      const leafHash = delegationHash(leaf);
      await db.query(
        `WITH leaf AS (INSERT INTO app.cosigner_leaves (wallet, delegation_hash, leaf_hash, notional_usd, created_at) VALUES ($1, $2, $3, $4, $5))
         UPDATE app.cosigner_roots SET trades_used = trades_used + 1 WHERE delegation_hash = $2`,
        [held.wallet, hash, leafHash, notionalUsd, now()],
      );
      const used = tradesUsed + 1;
      const last24 = day + notionalUsd;
      return {
        leaf,
        leafHash,
        expires,
        checks,
        spend: { notional_usd: round2(notionalUsd), trades_used: used, trades_left: Math.max(0, binding.limits.max_trades - used), last_24h_usd: round2(last24), remaining_24h_usd: round2(Math.max(0, binding.limits.max_day_usd - last24)) },
      };
    });
  }

  const daySum = async (db: Db, wallet: string) => {
    const [r] = await db.query<{ s: string | number }>("SELECT COALESCE(SUM(notional_usd), 0) AS s FROM app.cosigner_leaves WHERE wallet = $1 AND created_at > $2", [wallet, now() - DAY_S]);
    return Number(r!.s);
  };

  function feeClassOf(token: Address): FeeClass | null {
    const t = tokenOf(token);
    return t ? (t.major ? "major" : "other") : null;
  }

  async function usage(hash: Hex, wallet: Address) {
    const [r] = await d.db.query<{ trades_used: number }>("SELECT trades_used FROM app.cosigner_roots WHERE delegation_hash = $1", [lc(hash)]);
    return { trades_used: Number(r?.trades_used ?? 0), last_24h_usd: round2(await daySum(d.db, lc(wallet))) };
  }

  return { address: d.account.address, register, revoke, cosign, usage };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Failed limit rules answer their own SESSION_* code; any other failure answers REFUSED. Both list every failed rule. */
function refusal(failed: Check[]): Refusal {
  const signer_checks = failed.map(({ rule, message }) => ({ rule, message }));
  const first = failed[0];
  if (first && failed.every((c) => SESSION_CODES.has(c.rule))) return new Refusal(first.rule as "SESSION_MAX_DAY", `the co-signer refused: ${first.message}`, { signer_checks });
  return new Refusal("REFUSED", `the co-signer refused: ${failed.map((c) => `${c.rule} (${c.message})`).join("; ") || "no price"}`, { signer_checks });
}
