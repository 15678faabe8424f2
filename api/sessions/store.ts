import { randomBytes } from "node:crypto";
import type { Address, Hex } from "viem";
import { delegationFromJson, delegationToJson, type Delegation, type DelegationJson } from "../../lib/delegation.js";
import type { SessionBinding } from "../../lib/sessionBinding.js";
import type { Db } from "../ports/store/db.js";
import type { TokenRef } from "../trading/index.js";
import { lc } from "../../lib/address.js";

export type SessionStatus = "pending" | "active" | "revoked";
export type WalletCode = { state: "eoa" | "pinned"; implementation: Address | null; version: string | null };
export type StoredAuthorization = { address: Address; chain_id: number; nonce: number; signature: Hex };

export type StoredSession = {
  id: string;
  wallet: Address;
  executor: Address;
  cosigner: Address;
  keyId: number;
  status: SessionStatus;
  createdAt: number;
  expires: number;
  walletCode: WalletCode;
  tokens: TokenRef[];
  binding: SessionBinding;
  /** The root as granted; its signature once switched on. */
  root: Delegation;
  delegationHash: Hex;
  /** Curve roots (launchpad curve trades), unsigned until switch-on; empty for sessions without curve tokens. */
  curveRoots: Delegation[];
  /** What the start call answered beyond the session row (sign, setup, caveats, ...), kept for switch-on and revoke. */
  start: Record<string, unknown>;
  authorization: StoredAuthorization | null;
  activatedAt: number | null;
  revokedAt: number | null;
};

function sessionFrom(r: Record<string, unknown>): StoredSession {
  const root = delegationFromJson(JSON.parse(r.root as string) as DelegationJson);
  return {
    id: r.id as string,
    wallet: r.wallet as Address,
    executor: r.executor as Address,
    cosigner: r.cosigner as Address,
    keyId: Number(r.key_id),
    status: r.status as SessionStatus,
    createdAt: Number(r.created_at),
    expires: Number(r.expires),
    walletCode: JSON.parse(r.wallet_code as string) as WalletCode,
    tokens: JSON.parse(r.tokens as string) as TokenRef[],
    binding: JSON.parse(r.binding as string) as SessionBinding,
    root: r.delegation_signature ? { ...root, signature: r.delegation_signature as Hex } : root,
    curveRoots: r.curve_roots ? (JSON.parse(r.curve_roots as string) as DelegationJson[]).map(delegationFromJson) : [],
    delegationHash: r.delegation_hash as Hex,
    start: JSON.parse(r.start as string) as Record<string, unknown>,
    authorization: r.authorization_json ? (JSON.parse(r.authorization_json as string) as StoredAuthorization) : null,
    activatedAt: r.activated_at === null ? null : Number(r.activated_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}

type StoreDeps = { db: Db; clock: () => number };
const nowS = (d: StoreDeps) => Math.floor(d.clock() / 1000);
/** A grant as the start call stores it, before it is switched on. */
export type NewSession = Omit<StoredSession, "status" | "createdAt" | "authorization" | "activatedAt" | "revokedAt">;

/**
 * Stores a pending grant; answers the session already holding the same root (the same terms
 * asked twice in one second hash to one delegation) instead, or null when it was stored.
 */
async function insertSession(d: StoreDeps, s: NewSession): Promise<StoredSession | null> {
  const stored = await d.db.query(
    `INSERT INTO app.sessions (id, wallet, executor, cosigner, key_id, status, created_at, expires, wallet_code,
       tokens, binding, root, delegation_hash, start, curve_roots)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (delegation_hash) DO NOTHING RETURNING id`,
    [
      s.id,
      lc(s.wallet),
      lc(s.executor),
      lc(s.cosigner),
      s.keyId,
      nowS(d),
      s.expires,
      JSON.stringify(s.walletCode),
      JSON.stringify(s.tokens),
      JSON.stringify(s.binding),
      JSON.stringify(delegationToJson(s.root)),
      s.delegationHash,
      JSON.stringify(s.start),
      JSON.stringify(s.curveRoots.map(delegationToJson)),
    ],
  );
  if (stored.length) return null;
  const [r] = await d.db.query("SELECT * FROM app.sessions WHERE delegation_hash = $1", [s.delegationHash]);
  return r ? sessionFrom(r) : null;
}

async function sessionById(d: StoreDeps, id: string): Promise<StoredSession | null> {
  const [r] = await d.db.query("SELECT * FROM app.sessions WHERE id = $1", [id]);
  return r ? sessionFrom(r) : null;
}

async function sessionsOfWallet(d: StoreDeps, wallet: Address, limit = 100): Promise<StoredSession[]> {
  const rows = await d.db.query("SELECT * FROM app.sessions WHERE wallet = $1 ORDER BY created_at DESC, id LIMIT $2", [
    lc(wallet),
    limit,
  ]);
  return rows.map(sessionFrom);
}

/** Executors of the wallet's sessions ever switched on (the relay takes their signatures for session plans). */
async function executorsOf(d: StoreDeps, wallet: Address): Promise<Address[]> {
  const rows = await d.db.query<{ executor: Address }>(
    "SELECT DISTINCT executor FROM app.sessions WHERE wallet = $1 AND activated_at IS NOT NULL",
    [lc(wallet)],
  );
  return rows.map((r) => r.executor);
}

/** Sessions granted to `executor` that the co-signer may still co-sign (active, unexpired). */
async function liveForExecutor(d: StoreDeps, executor: Address): Promise<string[]> {
  const rows = await d.db.query<{ id: string }>(
    "SELECT id FROM app.sessions WHERE executor = $1 AND status = 'active' AND expires > $2",
    [lc(executor), nowS(d)],
  );
  return rows.map((r) => r.id);
}

/**
 * pending -> active with the wallet's signatures (the root's, the curve roots' signed); false when
 * it was not pending any more.
 */
async function activateSession(
  d: StoreDeps,
  id: string,
  signature: Hex,
  authorization: StoredAuthorization | null,
  curveRoots: Delegation[],
): Promise<boolean> {
  const rows = await d.db.query(
    `UPDATE app.sessions SET status = 'active', delegation_signature = $2, authorization_json = $3,
       activated_at = $4, curve_roots = $5
     WHERE id = $1 AND status = 'pending' RETURNING id`,
    [
      id,
      signature,
      authorization ? JSON.stringify(authorization) : null,
      nowS(d),
      JSON.stringify(curveRoots.map(delegationToJson)),
    ],
  );
  return rows.length === 1;
}

/** -> revoked (from pending or active); the revocation time, the first one when it was revoked before. */
async function revokeStored(d: StoreDeps, id: string): Promise<number> {
  const [r] = await d.db.query<{ revoked_at: string }>(
    `UPDATE app.sessions SET status = 'revoked', revoked_at = COALESCE(revoked_at, $2)
     WHERE id = $1 RETURNING revoked_at`,
    [id, nowS(d)],
  );
  return Number(r!.revoked_at);
}

/** The service's record of sessions (app.sessions); the co-signer keeps its own (app.cosigner_*). */
export function createSessionStore(d: StoreDeps) {
  return {
    newId: () => `ses_${randomBytes(16).toString("hex")}`,
    insert: (s: NewSession) => insertSession(d, s),
    byId: (id: string) => sessionById(d, id),
    forWallet: (wallet: Address, limit?: number) => sessionsOfWallet(d, wallet, limit),
    executorsOf: (wallet: Address) => executorsOf(d, wallet),
    liveForExecutor: (executor: Address) => liveForExecutor(d, executor),
    activate: (id: string, signature: Hex, authorization: StoredAuthorization | null, curveRoots: Delegation[]) =>
      activateSession(d, id, signature, authorization, curveRoots),
    revoke: (id: string) => revokeStored(d, id),
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
