import type { Db } from "../ports/store/db.js";
import type { StoredRow } from "./record.js";

/** app.treasury_rows (append-only) and app.treasury_drafts: the treasury's own tables. */
export function createTreasuryStore(db: Db) {
  return {
    db,
    async rows(): Promise<StoredRow[]> {
      return (
        await db.query<{ seq: number; body: string }>("SELECT seq, body FROM app.treasury_rows ORDER BY seq")
      ).map((r) => ({ seq: Number(r.seq), body: r.body }));
    },

    /** Appends a closed week; a second closer racing for the same seq or week loses on the keys. */
    async append(
      row: { seq: number; week: { start: number }; hash: string; prev_hash: string; recorded_at: number },
      body: string,
    ): Promise<void> {
      await db.query(
        "INSERT INTO app.treasury_rows (seq, week_start, body, hash, prev_hash, recorded_at) VALUES ($1, $2, " +
          "$3, $4, $5, $6)",
        [row.seq, row.week.start, body, row.hash, row.prev_hash, row.recorded_at],
      );
    },

    async draft<D, S>(weekStart: number): Promise<{ draft: D; sends: S[] } | null> {
      const [r] = await db.query<{ draft: string; sends: string }>(
        "SELECT draft, sends FROM app.treasury_drafts WHERE week_start = $1",
        [weekStart],
      );
      return r ? { draft: JSON.parse(r.draft) as D, sends: JSON.parse(r.sends) as S[] } : null;
    },

    /** Keeps the first draft of a week: whoever stored it first, its signed bytes are the ones sent. */
    async keepDraft<D, S>(weekStart: number, draft: D, sends: S[], now: number): Promise<{ draft: D; sends: S[] }> {
      await db.query(
        "INSERT INTO app.treasury_drafts (week_start, draft, sends, created_at) VALUES ($1, $2, $3, $4) ON " +
          "CONFLICT (week_start) DO NOTHING",
        [weekStart, JSON.stringify(draft), JSON.stringify(sends), now],
      );
      return (await this.draft<D, S>(weekStart))!;
    },
  };
}

export type TreasuryStore = ReturnType<typeof createTreasuryStore>;
