import { createHash } from "node:crypto";
import { asciiCanonicalJson } from "../../lib/canonicalJson.js";

/** prev_hash of the first row. */
export const GENESIS_HASH = "0".repeat(64);

/** SHA-256 (hex) of the row's JSON with keys sorted, no spaces, ASCII only, without `hash`. */
export function rowHash(row: Record<string, unknown>): string {
  const { hash: _omit, ...rest } = row;
  return createHash("sha256").update(asciiCanonicalJson(rest)).digest("hex");
}

export type Integrity = { ok: boolean; rows: number; head: string; broken_at: number | null; why: string | null };
export type StoredRow = { seq: number; body: string };

/**
 * Replays the chain from the first row: each row's hash recomputed from its own body, its
 * prev_hash the row before's hash (GENESIS_HASH first), its seq the next number. Answers the
 * rows up to the first that fails and why; rows from a broken one on are not served.
 */
export function checkChain(stored: StoredRow[]): { integrity: Integrity; rows: Record<string, unknown>[] } {
  const rows: Record<string, unknown>[] = [];
  let head = GENESIS_HASH;
  const broken = (seq: number, why: string) => ({
    integrity: { ok: false, rows: rows.length, head, broken_at: seq, why },
    rows,
  });
  for (const s of stored) {
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(s.body) as Record<string, unknown>;
    } catch {
      return broken(s.seq, "the row is not JSON");
    }
    if (row === null || typeof row !== "object" || Array.isArray(row))
      return broken(s.seq, "the row is not a JSON object");
    if (row.seq !== s.seq || s.seq !== rows.length + 1)
      return broken(s.seq, `seq ${String(row.seq)} where ${rows.length + 1} was due`);
    if (row.prev_hash !== head)
      return broken(s.seq, `prev_hash ${String(row.prev_hash)} does not link to the row before (${head})`);
    const hash = rowHash(row);
    if (row.hash !== hash) return broken(s.seq, `hash ${String(row.hash)} is not the SHA-256 of the row (${hash})`);
    rows.push(row);
    head = hash;
  }
  return { integrity: { ok: true, rows: rows.length, head, broken_at: null, why: null }, rows };
}
