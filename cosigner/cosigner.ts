import { randomBytes } from "node:crypto";
import { bytesToHex, getAddress, recoverTypedDataAddress, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { LRUCache } from "lru-cache";
import { launchpadAbi, priceFeedAbi, sanctionsListAbi } from "../abis/fixtures.js";
import { markBandBps, markUnsettled, MIN_MARK_DEPTH_USD, offBps, readMarkSource } from "../lib/markSource.js";
import { onClock } from "../lib/cacheClock.js";
import { multicall3Abi } from "../abis/multicall3.js";
import { Refusal } from "../api/errors/index.js";
import type { CosignAnswer, CosignerPort, CosignerRoot, CosignRequest } from "../api/ports/cosigner.js";
import type { Db } from "../api/ports/store/db.js";
import { decodeLimitedCallsTerms, decodeNativeBalanceChangeTerms, decodeRedeemerTerms, decodeTimestampTerms, decodeValueLteTerms } from "@metamask/delegation-core";
import { curveRootCaveats, delegationFromJson, delegationHash, delegationToJson, delegationTypedData, leafCaveats, rootCaveats, LEAF_TTL_S, nonceEnforcerAbi, walletBatch, type Delegation, type DelegationJson, type Execution } from "../lib/delegation.js";
import { readCurveTrade } from "../lib/curveRead.js";
import { beaconOf } from "../lib/eip1967.js";
import type { FeeClass } from "../lib/fees.js";
import { markStale } from "../lib/markStale.js";
import { readRouterCall } from "../lib/routerRead.js";
import { bindingHash, type SessionBinding, type SignedMark } from "../lib/sessionBinding.js";
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
  permit2: Address;
  /** Where it reads feedless tokens' prices itself (CAP_PRICE): v4 pools' state and Swap logs, the launchpad's curves and Trade logs. */
  stateView: Address;
  poolManager: Address;
  launchpad: Address;
  /** The stock issuer's beacon: a bound token behind it is major, as the API bills it (its `stock_beacon` reading). */
  stockBeacon: Address;
  /** The sanctions list it reads at every co-signing (a Chainalysis-style isSanctioned oracle). */
  sanctionsList: Address;
  /** Tokens it can price and class: address, decimals, oracle feed (or a fixed USD price: USDG), and whether the fee class is major. */
  tokens: { address: Address; decimals: number; feed: Address | null; fixedUsd?: number; stock: boolean; major: boolean }[];
};

const lc = (a: string) => a.toLowerCase();
const DAY_S = 86_400;
/** Co-signings one co-signer takes at once (a store pool holds about ten connections). */
const MAX_IN_FLIGHT = 32;
/** How long the co-signer reuses its oracle read of a pair (the chain time in it only shortens a leaf). */
const MARKS_TTL_MS = 1_000;
/** A feedless source's time-weighted read is reused this long (a 30-minute median moves little in it; each read costs a block search and logs). */
const WINDOW_TTL_MS = 10_000;
export { MIN_MARK_DEPTH_USD };
/** A session holding a feedless token lasts at most this long: its signed mark ages (NO_FEED_SESSION). */
const FEEDLESS_MAX_S = DAY_S;
/** Rules that are session limits with their own SPEC code; any other failure answers REFUSED. */
const SESSION_CODES = new Set(["SESSION_ROOT_ALLOWS", "SESSION_EXPIRY", "SESSION_TOKENS", "SESSION_MAX_TRADE", "SESSION_MAX_DAY", "SESSION_TRADES_LEFT", "SESSION_TARGET", "SESSION_RECIPIENTS", "SESSION_EXECUTION"]);

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
    for (const c of r.curveRoots ?? []) problems.push(...(await signedRootProblems(c, r.binding, "curve")).map((p) => ({ ...p, message: `curve root: ${p.message}` })));
    if ((r.curveRoots?.length ?? 0) !== (r.binding.curve_tokens?.length ? 1 : 0)) problems.push({ rule: "BINDING_TERMS", ok: false, message: "a session has one curve root exactly when its binding lists curve tokens" });
    if (problems.length) throw new Refusal("REFUSED", `the co-signer will not hold this root: ${problems.map((p) => p.message).join("; ")}`, { signer_checks: problems });
    const hash = delegationHash(r.root);
    const rows = await d.db.query(
      `INSERT INTO app.cosigner_roots (delegation_hash, session_id, wallet, executor, binding, root, registered_at, curve_roots) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (delegation_hash) DO NOTHING RETURNING delegation_hash`,
      [hash, r.sessionId, lc(r.binding.wallet), lc(r.binding.executor), JSON.stringify(r.binding), JSON.stringify(delegationToJson(r.root)), now(), r.curveRoots?.length ? JSON.stringify(r.curveRoots.map(delegationToJson)) : null],
    );
    if (!rows.length) throw new Refusal("REFUSED", "this signed root is registered already", { signer_checks: [{ rule: "ROOT_REUSED", ok: false, message: "same signed root registered twice" }] });
  }

  /** The root as the co-signer accepts it: signed by the wallet, salted with the binding, redeemable by the executor alone, ending by the binding's expiry. */
  async function rootProblems(r: CosignerRoot): Promise<Check[]> {
    return [...(await signedRootProblems(r.root, r.binding, "session")), ...(await feedlessProblems(r.binding))];
  }

  /** One signed root (the session's, or its curve root) against the binding. */
  async function signedRootProblems(root: Delegation, binding: SessionBinding, kind: "session" | "curve"): Promise<Check[]> {
    const out: Check[] = shapeProblems(root, binding, kind);
    const bad = (rule: string, message: string) => out.push({ rule, ok: false, message });
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

  /**
   * The root's caveats as the co-signer would have built them, not as the API says: the
   * LogicalOrWrapper groups byte for byte (targets, methods, pinned spender, token and recipient,
   * rebuilt from its own pins and the binding), then exactly the bounding enforcers, each once, a
   * call limit no larger than the session needs, and the ETH day cap when ETH is a session token.
   */
  function shapeProblems(root: Delegation, b: SessionBinding, kind: "session" | "curve"): Check[] {
    const out: Check[] = [];
    const bad = (message: string) => out.push({ rule: "BINDING_TERMS", ok: false, message });
    const e = d.pins.enforcers;
    // Only the groups (the first caveat) are compared: the amounts here are placeholders (a balance bound must be above 0).
    const dummy = { executor: getAddress(b.executor), expires: b.expires, maxValueWei: 1n, dayValueWei: null, dayStart: 0, maxCalls: 1, walletNonce: 0n };
    const expected =
      kind === "session"
        ? rootCaveats({ ...dummy, router: d.pins.router, permit2: d.pins.permit2 }, e)[0]!
        : curveRootCaveats({ ...dummy, launchpad: d.pins.launchpad, feeRecipient: d.pins.feeRecipient, wallet: getAddress(b.wallet), tokens: (b.curve_tokens ?? []).map((t) => getAddress(t)) }, e)[0]!;
    const [first, ...rest] = root.caveats;
    if (!first || lc(first.enforcer) !== lc(expected.enforcer) || lc(first.terms) !== lc(expected.terms)) bad(`the ${kind} root's targets and methods are not the ones the co-signer pins`);
    const nameOf = (a: Address) => Object.entries(e).find(([, x]) => lc(x) === lc(a))?.[0] ?? a;
    const names = rest.map((c) => nameOf(c.enforcer));
    const bounds = ["TimestampEnforcer", "LimitedCallsEnforcer", "NonceEnforcer", "RedeemerEnforcer"];
    const required = kind === "session" ? ["ValueLteEnforcer", ...bounds, ...(b.tokens.includes(zeroAddress) ? ["NativeTokenPeriodTransferEnforcer"] : [])] : ["ValueLteEnforcer", "NativeBalanceChangeEnforcer", ...bounds];
    const once = (n: string) => names.filter((x) => x === n).length === 1;
    // SPEC's own names for the two bounds that have one: the wallet's nonce (one bump revokes every root) and the ETH day cap.
    if (!once("NonceEnforcer")) out.push({ rule: "BINDING_NONCE", ok: false, message: `the ${kind} root does not carry the wallet's nonce bound exactly once` });
    if (required.includes("NativeTokenPeriodTransferEnforcer") && !once("NativeTokenPeriodTransferEnforcer")) out.push({ rule: "ROOT_DAY_CAP", ok: false, message: `the ${kind} root spends ETH without exactly one on-chain ETH day cap` });
    const others = required.filter((n) => n !== "NonceEnforcer" && n !== "NativeTokenPeriodTransferEnforcer");
    if (names.some((n) => !required.includes(n)) || !others.every(once)) bad(`the ${kind} root's bounds are not exactly ${required.join(", ")}`);
    if (kind === "curve") out.push(...curveBoundProblems(rest, b));
    const calls = rest.find((c) => nameOf(c.enforcer) === "LimitedCallsEnforcer");
    const cap = kind === "session" ? b.limits.max_trades + b.tokens.length : b.limits.max_trades;
    if (calls && decodeLimitedCallsTerms(calls.terms).limit > cap) bad(`the ${kind} root allows more than ${cap} calls`);
    return out;
  }

  /** A curve root's outer call carries no ETH, and its ETH bound is the wallet's own balance decrease. */
  function curveBoundProblems(rest: Delegation["caveats"], b: SessionBinding): Check[] {
    const e = d.pins.enforcers;
    const of = (n: string) => rest.find((c) => lc(c.enforcer) === lc(e[n] ?? zeroAddress));
    const value = of("ValueLteEnforcer");
    const change = of("NativeBalanceChangeEnforcer");
    const ethBound = change ? decodeNativeBalanceChangeTerms(change.terms) : null;
    const ok = value && decodeValueLteTerms(value.terms).maxValue === 0n && ethBound && ethBound.changeType === 1 && lc(ethBound.recipient as string) === lc(b.wallet);
    return ok ? [] : [{ rule: "BINDING_TERMS", ok: false, message: "the curve root does not bound the wallet's ETH per trade (no ETH on its call, a balance decrease of the wallet)" }];
  }

  /**
   * Every binding token the co-signer cannot price by an oracle needs an owner-signed mark close
   * to its own read of the mark's source, and such a session lasts at most 24 hours.
   */
  async function feedlessProblems(b: SessionBinding): Promise<Check[]> {
    const out: Check[] = [];
    const feedless = b.tokens.filter((t) => !oraclePriced(t));
    if (!feedless.length) return out;
    if (b.expires - now() > FEEDLESS_MAX_S) out.push({ rule: "NO_FEED_SESSION", ok: false, message: `a session with a feedless token lasts at most ${FEEDLESS_MAX_S} s` });
    for (const t of feedless) {
      const m = b.marks?.[t];
      if (!m || !(m.usd > 0) || !Number.isInteger(m.decimals) || m.decimals < 0 || m.decimals > 36) {
        out.push({ rule: "BINDING_TERMS", ok: false, message: `${t} has no oracle feed and no owner-signed mark` });
        continue;
      }
      out.push(...markProblems(t, m, await ownPrice(t as Address, m).catch(() => null)));
    }
    return out;
  }

  const oraclePriced = (t: string) => {
    const p = tokenOf(t as Address);
    return !!p && (p.feed !== null || p.fixedUsd !== undefined);
  };

  /**
   * A signed mark the co-signer holds a root to (CAP_PRICE): its own 30-minute time-weighted median
   * of the mark's source (never one block's price, nor a mean a short spike lifts) within the pair's
   * band of the mark, the price held within the band of that median for 90 % of the window and the
   * spot within it now (lib/markSource markUnsettled), and the source deep enough.
   */
  function markProblems(t: string, m: SignedMark, own: OwnRead | null): Check[] {
    const bad = (message: string): Check[] => [{ rule: "CAP_PRICE", ok: false, message }];
    if (!own) return bad(`the co-signer cannot read ${t}'s 30-minute median at its source`);
    const band = markBandBps(m.source, usdgOf());
    if (!(offBps(m.usd, own.usd) <= band)) return bad(`the signed mark $${m.usd} of ${t} is ${Math.round(offBps(m.usd, own.usd))} bps from the co-signer's 30-minute median $${own.usd.toPrecision(6)} (band ${band} bps)`);
    const unsettled = markUnsettled({ median: own.usd, stableShare: own.stableShare }, own.spotUsd, band);
    if (unsettled) return bad(`no mark for ${t}: ${unsettled}; grant again once it settles`);
    if (own.depthUsd < MIN_MARK_DEPTH_USD) return bad(`the source behind ${t}'s mark holds about $${Math.round(own.depthUsd)} on its priced side, under $${MIN_MARK_DEPTH_USD}: its price is too cheap to move`);
    return [];
  }

  const usdgOf = () => d.pins.tokens.find((t) => t.fixedUsd === 1)?.address ?? zeroAddress;

  /**
   * The co-signer's own USD read of a feedless token at the source its mark names (a hookless pool
   * against an oracle-priced token, or the launchpad curve against ETH), from the chain alone: the
   * 30-minute median and its stability at the pair's band, the spot, and the USD depth on the side
   * it is priced against.
   */
  async function ownPrice(token: Address, m: SignedMark): Promise<OwnRead | null> {
    const read = await readMarkSource(d.chain, m.source, { address: token, decimals: m.decimals }, { poolManager: d.pins.poolManager, launchpad: d.pins.launchpad, againstDecimals: (a) => tokenOf(a)?.decimals ?? null }, markBandBps(m.source, usdgOf()));
    const against = read ? tokenOf(read.against) : null;
    const againstUsd = against ? await oracleUsd(against) : null;
    if (!read || againstUsd === null) return null;
    return { usd: read.median * againstUsd, stableShare: read.stableShare, spotUsd: read.spot * againstUsd, depthUsd: read.depthAgainst * againstUsd };
  }

  async function oracleUsd(t: CosignerPins["tokens"][number]): Promise<number | null> {
    if (t.fixedUsd !== undefined) return t.fixedUsd;
    if (!t.feed) return null;
    const [, answer, , updatedAt] = await d.chain.readContract({ address: t.feed, abi: priceFeedAbi, functionName: "latestRoundData" });
    return answer > 0n && !markStale({ updatedAt: Number(updatedAt), now: now(), stock: t.stock }) ? Number(answer) / 1e8 : null;
  }

  // Oracle answers move a few times a day: one read a second per pair serves an agent trading often.
  const sharedMarks = sharedReads<Marks & { chainTime: number }>(d.clock);
  const cachedMarks = (tokenIn: Address | null, tokenOut: Address | null) => sharedMarks(`${tokenIn}>${tokenOut}`, () => marks(tokenIn, tokenOut));

  /**
   * The list read now, at every co-signing (a grant's screening may be weeks old): the session
   * wallet and the executor. The wallet is also the owner (a hosted executor trades only for its
   * owner's wallet, checked at grant). An unreadable list signs nothing.
   */
  async function assertNoneSanctioned(b: SessionBinding) {
    const who = [["wallet", b.wallet], ["executor", b.executor]] as const;
    const listed = await d.chain
      .multicall({ contracts: who.map(([, a]) => ({ address: d.pins.sanctionsList, abi: sanctionsListAbi, functionName: "isSanctioned" as const, args: [getAddress(a)] as const })), allowFailure: false })
      .catch((err) => {
        throw new Refusal("CHAIN_UNAVAILABLE", "the co-signer could not read the sanctions list; nothing signed", {}, { cause: err, retryAfterS: 5 });
      });
    const hit = who.find((_, i) => listed[i] === true);
    if (hit) throw new Refusal("SANCTIONED", `the session's ${hit[0]} ${getAddress(hit[1])} is on the sanctions list; nothing co-signed`, { address: getAddress(hit[1]), field: hit[0] });
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
      if (t?.fixedUsd !== undefined) return t.fixedUsd;
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
    const [held] = await d.db.query<{ wallet: string; executor: string; binding: string; root: string; curve_roots: string | null; revoked_at: string | null }>("SELECT wallet, executor, binding, root, curve_roots, revoked_at FROM app.cosigner_roots WHERE delegation_hash = $1", [hash]);
    if (!held) throw new Refusal("REFUSED", "the co-signer holds no such root", { signer_checks: [{ rule: "TRADE_REFUSED", ok: false, message: "unknown root" }] });
    if (held.revoked_at !== null) throw new Refusal("SESSION_REVOKED", "the session was revoked; the co-signer signs nothing more for it");
    const binding = JSON.parse(held.binding) as SessionBinding;
    const root = JSON.parse(held.root) as Delegation & { salt: string };
    if (BigInt(bindingHash(binding)) !== BigInt(root.salt)) throw new Refusal("SESSION_BOUND", "the stored binding does not hash to the root's salt; grant again");
    if (now() >= binding.expires) throw new Refusal("SESSION_EXPIRED", `the session ended at ${binding.expires}`);
    // Read beside the trade's own reads (one round trip, not two); nothing is signed before it answers.
    const screened = assertNoneSanctioned(binding).then(() => null, (err: unknown) => err);

    const { execution } = req;
    // A curve trade redeems the session's curve root: one leaf over the wallet's own batch [fee, curve call], so neither is redeemed without the other; anything else the root itself.
    const curveRoot = held.curve_roots ? delegationFromJson((JSON.parse(held.curve_roots) as DelegationJson[])[0]!) : null;
    if (req.fee && !curveRoot) throw new Refusal("SESSION_CURVE", "this session has no curve root: launchpad curve trades are not co-signed for it");
    const reading = req.fee ? await readCurve(execution, req.fee, binding) : readRouterCall(execution.target, execution.value, execution.callData, { router: d.pins.router, wallet: binding.wallet, feeRecipient: d.pins.feeRecipient, weth: d.pins.weth });
    const authority = (req.fee ? delegationHash(curveRoot!) : hash) as Hex;
    const priced = await withSignedMarks(await cachedMarks(reading.tokenIn, reading.tokenOut), binding, reading.tokenIn, reading.tokenOut);
    const classes = new Map<string, FeeClass | null>();
    for (const t of [reading.tokenIn, reading.tokenOut]) if (t) classes.set(lc(t), await classOf(t, binding));
    const leafNonce = await cosignerNonce();
    const refused = await screened;
    if (refused) throw refused;

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
      const { checks, notionalUsd } = checkExecution({ binding, reading, marks: priced, counters: { tradesUsed, last24hUsd: day }, now: now(), chainNow: Math.max(now(), priced.chainTime), feeClassOf: (t) => classes.get(lc(t)) ?? null, declaredFeeBps: req.declared.feeBps, declaredExpectedOut: req.declared.expectedOut });
      const failed = checks.filter((c) => !c.ok);
      if (failed.length || notionalUsd === null) throw refusal(failed);

      const expires = Math.min(Math.max(now(), priced.chainTime) + LEAF_TTL_S, binding.expires);
      const signed = req.fee ? walletBatch(getAddress(binding.wallet), [req.fee, execution]) : execution;
      const unsigned = { delegate: getAddress(binding.executor), delegator: d.account.address, authority, caveats: leafCaveats({ execution: signed, before: expires, cosignerNonce: leafNonce }, d.pins.enforcers), salt: BigInt(bytesToHex(randomBytes(32))) };
      const leaf = { ...unsigned, signature: await d.account.signTypedData(delegationTypedData(d.pins.chainId, d.pins.delegationManager, unsigned)) };
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

  /** A curve trade read by the co-signer itself; a sale's fee against its own quote of the sale. */
  async function readCurve(swap: Execution, fee: Execution, b: SessionBinding) {
    const ctx = { launchpad: d.pins.launchpad, wallet: b.wallet, feeRecipient: d.pins.feeRecipient, curveTokens: b.curve_tokens ?? [] };
    const first = readCurveTrade(swap, fee, ctx);
    if (first.buy !== false || !first.token) return first;
    const [ethOut] = await d.chain.readContract({ address: d.pins.launchpad, abi: launchpadAbi, functionName: "quoteSell", args: [first.token, first.amountIn] }).catch(() => [null] as const);
    return readCurveTrade(swap, fee, { ...ctx, sellQuote: ethOut });
  }

  const sharedBeacon = sharedReads<Address | null>(d.clock);
  const classOf = (token: Address, b: SessionBinding) => feeClassOf(d.pins, (t) => sharedBeacon(lc(t), () => beaconOf(d.chain, t)), token, b);

  /**
   * A side the co-signer cannot price by an oracle is priced from the binding's owner-signed mark
   * and the co-signer's own 30-minute median of its source, whichever protects the wallet: the
   * higher for what goes in (caps count it fully), the lower for what comes out (the minimum must
   * cover it). A pool pushed now moves neither; an unreadable source prices nothing.
   */
  async function withSignedMarks(m: Marks & { chainTime: number }, b: SessionBinding, tokenIn: Address | null, tokenOut: Address | null) {
    const out = { ...m };
    const signed = (t: Address | null) => (t && !oraclePriced(t) ? (b.marks?.[lc(t)] ?? null) : null);
    const live = async (t: Address, mark: SignedMark) => (await cachedLive(t, mark).catch(() => null))?.usd ?? null;
    const sIn = signed(tokenIn);
    const sOut = signed(tokenOut);
    if (sIn) {
      const l = await live(tokenIn!, sIn);
      Object.assign(out, { usdIn: l === null ? null : Math.max(sIn.usd, l), decimalsIn: sIn.decimals, signedIn: true });
    }
    if (sOut) {
      const l = await live(tokenOut!, sOut);
      Object.assign(out, { usdOut: l === null ? null : Math.min(sOut.usd, l), decimalsOut: sOut.decimals, signedOut: true });
    }
    return out;
  }

  const sharedLive = sharedReads<OwnRead | null>(d.clock, WINDOW_TTL_MS);
  const cachedLive = (token: Address, mark: SignedMark) => sharedLive(`${lc(token)}:${JSON.stringify(mark.source)}:${mark.decimals}`, () => ownPrice(token, mark));

  async function usage(hash: Hex, wallet: Address) {
    const [r] = await d.db.query<{ trades_used: number }>("SELECT trades_used FROM app.cosigner_roots WHERE delegation_hash = $1", [lc(hash)]);
    return { trades_used: Number(r?.trades_used ?? 0), last_24h_usd: round2(await daySum(d.db, lc(wallet))) };
  }

  return { address: d.account.address, register, revoke, cosign, usage };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
/** A feedless token's USD read at its mark's source: 30-minute median and its stability, spot, depth on the priced side. */
type OwnRead = { usd: number; stableShare: number; spotUsd: number; depthUsd: number };

/**
 * A token's fee class as the API bills it: a pinned token by its pin; any other token the wallet
 * bound is major when it sits behind the stock issuer's beacon (SPEC's `stock_beacon` reading,
 * lib/fees.ts), else other. null (FEE_CLASS) for a token outside the binding or a beacon that
 * cannot be read.
 */
export async function feeClassOf(pins: Pick<CosignerPins, "tokens" | "stockBeacon">, beacon: (token: Address) => Promise<Address | null>, token: Address, b: SessionBinding): Promise<FeeClass | null> {
  const pinned = pins.tokens.find((t) => lc(t.address) === lc(token));
  if (pinned) return pinned.major ? "major" : "other";
  if (!b.tokens.includes(lc(token))) return null;
  const read = await beacon(token).then((a) => ({ a }), () => null);
  if (!read) return null;
  return read.a !== null && lc(read.a) === lc(pins.stockBeacon) ? "major" : "other";
}

/** One read per key for `ttl` (MARKS_TTL_MS unless given): concurrent and repeated asks share it; a failed read is not kept. */
function sharedReads<T>(clock: () => number, ttl = MARKS_TTL_MS) {
  const cache = new LRUCache<string, Promise<T>>({ max: 1_000, ttl, ...onClock(clock) });
  return (key: string, read: () => Promise<T>): Promise<T> => {
    let p = cache.get(key);
    if (!p) {
      p = read();
      cache.set(key, p);
      p.catch(() => cache.delete(key));
    }
    return p;
  };
}

/** Failed limit rules answer their own SESSION_* code; any other failure answers REFUSED. Both list every failed rule. */
function refusal(failed: Check[]): Refusal {
  const signer_checks = failed.map(({ rule, message }) => ({ rule, message }));
  const first = failed[0];
  if (first && failed.every((c) => SESSION_CODES.has(c.rule))) return new Refusal(first.rule as "SESSION_MAX_DAY", `the co-signer refused: ${first.message}`, { signer_checks });
  return new Refusal("REFUSED", `the co-signer refused: ${failed.map((c) => `${c.rule} (${c.message})`).join("; ") || "no price"}`, { signer_checks });
}
