import type { Address, Hex } from "viem";
import { recoverMessageAddress } from "../../lib/secp.js";
import { STOCK_ATTESTATION_LIMITS, stockAttestationText } from "../../lib/stockAttestation.js";
import { Refusal } from "../errors/index.js";
import type { HostedSession } from "./deps.js";
import type { HostedStore, StoredAgent } from "./store.js";
import type { ExecutorPort } from "../ports/executors.js";

type Row = {
  id: string;
  session_id: string;
  issued: string;
  expires: string;
  signature: string;
  signed_at: string;
  revoked_at: string | null;
};

export type StockAttestationView = {
  session_id: string;
  issued: number;
  expires: number;
  signed_at: number;
  valid: boolean;
  why_not: string | null;
};

const last = async (store: HostedStore, agentId: string) =>
  (
    await store.db.query<Row>("SELECT * FROM app.hosted_attestations WHERE agent_id = $1 ORDER BY id DESC LIMIT 1", [
      agentId,
    ])
  )[0] ?? null;

/** Attestations must be issued after this (the last one's issue time, or its revocation). */
export async function notBefore(store: HostedStore, agentId: string): Promise<number | null> {
  const [r] = await store.db.query<{ issued: string | null; revoked: string | null }>(
    `SELECT max(issued)::text AS issued, max(revoked_at)::text AS revoked FROM app.hosted_attestations
     WHERE agent_id = $1`,
    [agentId],
  );
  const v = Math.max(Number(r?.issued ?? 0), Number(r?.revoked ?? 0));
  return v > 0 ? v : null;
}

/** The agent's latest attestation and whether it lets the agent trade stock tokens now. */
export async function attestationView(
  store: HostedStore,
  a: StoredAgent,
  nowS: number,
): Promise<StockAttestationView | null> {
  const r = await last(store, a.id);
  if (!r) return null;
  const whyNot =
    r.revoked_at !== null
      ? "REVOKED"
      : Number(r.expires) <= nowS
        ? "EXPIRED"
        : r.session_id !== a.sessionId
          ? "SESSION_MISMATCH"
          : null;
  return {
    session_id: r.session_id,
    issued: Number(r.issued),
    expires: Number(r.expires),
    signed_at: Number(r.signed_at),
    valid: whyNot === null,
    why_not: whyNot,
  };
}

/** Whether `signature` is `wallet`'s EIP-191 signature over `text` (false for one that does not recover). */
async function signedBy(wallet: Address, text: string, signature: Hex): Promise<boolean> {
  const signer = await recoverMessageAddress({ message: text, signature }).catch(() => null);
  return !!signer && signer.toLowerCase() === wallet.toLowerCase();
}

/**
 * POST stock-attestation: the owner's EIP-191 signature over stockAttestationText for exactly
 * this agent, its executor, the attached session and its root hash, issued and expires. Checked
 * in SPEC's order: the attached session (NO_SESSION, SESSION_MISMATCH, SESSION_NOT_ACTIVE), the
 * expiry (BAD_EXPIRY), the issue time (STOCK_ATTESTATION within the hour, STOCK_ATTESTATION_OLD
 * after the last attestation and revocation), then the signature (STOCK_ATTESTATION).
 */
export async function recordAttestation(
  d: { store: HostedStore; nowS: () => number; executors: Pick<ExecutorPort, "holdStockAttestation"> },
  a: StoredAgent,
  executor: Address,
  session: HostedSession | null,
  q: { session_id: string; issued: number; expires: number; signature: Hex },
) {
  if (!session)
    throw new Refusal("NO_SESSION", "no session is attached to this agent", {}, { context: "hosted_agent" });
  if (q.session_id !== session.id)
    throw new Refusal(
      "SESSION_MISMATCH",
      `the attestation names ${q.session_id}; the attached session is ${session.id}`,
    );
  const now = d.nowS();
  if (session.status !== "active" || session.expires <= now)
    throw new Refusal("SESSION_NOT_ACTIVE", "the attached session is not active");
  const L = STOCK_ATTESTATION_LIMITS;
  if (q.expires < now + L.minAheadS || q.expires > now + L.maxAheadS || q.expires > session.expires) {
    throw new Refusal(
      "BAD_EXPIRY",
      `expires must be from ${now + L.minAheadS} to ${Math.min(now + L.maxAheadS, session.expires)} ` +
        "(5 minutes ahead at least, 30 days at most, not after the session)",
    );
  }
  if (q.issued < now - L.issuedWithinS || q.issued > now + 60)
    throw new Refusal("STOCK_ATTESTATION", "issued must be within the last hour");
  const text = stockAttestationText({
    agent: a.id,
    executor,
    session_id: session.id,
    root_hash: session.root_hash,
    issued: q.issued,
    expires: q.expires,
  });
  if (!(await signedBy(a.wallet, text, q.signature)))
    throw new Refusal(
      "STOCK_ATTESTATION",
      "the signature is not the owner wallet's over exactly this agent, executor, session, issue time and expiry",
      { text },
    );
  const old = async (nb: number | null) => {
    if (nb !== null && q.issued <= nb)
      throw new Refusal("STOCK_ATTESTATION_OLD", `issued must be after ${nb} (the last attestation or revocation)`, {
        not_before: nb,
      });
  };
  await old(await notBefore(d.store, a.id));
  // The signing service checks the signature itself and gates its own signing on it; when it
  // refuses, nothing is recorded here. (Not inside the transaction below: the in-process signing
  // service shares the store, and PGlite has one connection.)
  await d.executors.holdStockAttestation(executor, {
    session_id: session.id,
    root_hash: session.root_hash as Hex,
    issued: q.issued,
    expires: q.expires,
    signature: q.signature,
  });
  // Checked again and written under the agent's lock: a revoke between the two cannot be jumped.
  await d.store.db.tx(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(4663003, hashtext($1))", [a.id]);
    const [r] = await tx.query<{ issued: string | null; revoked: string | null }>(
      `SELECT max(issued)::text AS issued, max(revoked_at)::text AS revoked FROM app.hosted_attestations
       WHERE agent_id = $1`,
      [a.id],
    );
    const nb = Math.max(Number(r?.issued ?? 0), Number(r?.revoked ?? 0));
    await old(nb > 0 ? nb : null);
    await tx.query(
      `INSERT INTO app.hosted_attestations (agent_id, session_id, issued, expires, signature, signed_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [a.id, session.id, q.issued, q.expires, q.signature, now],
    );
  });
}

/** Revokes the agent's attestations (orders with stock tokens hold at once). */
export async function revokeAttestation(store: HostedStore, agentId: string, nowS: number): Promise<boolean> {
  return store.db.tx(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(4663003, hashtext($1))", [agentId]);
    return (
      (
        await tx.query(
          "UPDATE app.hosted_attestations SET revoked_at = $2 WHERE agent_id = $1 AND revoked_at IS NULL RETURNING id",
          [agentId, nowS],
        )
      ).length > 0
    );
  });
}
