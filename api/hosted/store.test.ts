import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { freshStore } from "../../test/helpers/api.js";
import type { Db } from "../ports/store/db.js";
import { createHostedStore, type PaperCommit, type StoredAgent } from "./store.js";

const agent = (id: string): StoredAgent => ({
  id,
  wallet: "0x00000000000000000000000000000000000000a1" as Address,
  keyId: 1,
  name: id,
  brain: "rule",
  params: {},
  intervalS: 60,
  pairs: ["ETH/USDG"],
  limits: { max_trade_usd: 100, max_day_usd: 1_000, max_position_usd: 10_000 },
  mode: "paper",
  status: "active",
  pauseReason: null,
  terms: { accept_risks: [], shield: false, policies: { block_risks: [] } },
  webhookSecret: null,
  paperBook: { "0xusdg": "1" },
  brainState: null,
  lastDecision: null,
  lastTrade: null,
  sessionId: null,
  createdAt: 0,
  updatedAt: 0,
  deletedAt: null,
});

// Bodies whose key order and spacing a JSON column would not keep: the log keeps the text as written.
const commit = (n: number): PaperCommit => ({
  book: { "0xusdg": String(n) },
  brainState: { n },
  lastDecision: { tick: n },
  lastTrade: n % 2 ? { z: 1, a: n } : null,
  entries: [
    { kind: "decision", code: null, body: { z: n, a: "first" } },
    { kind: "hold", code: "MAX_DAY", body: { message: 'é\u2028"q"', order: { b: 2, a: 1 } } },
    { kind: "trade", code: null, body: { amount_usd: 12.5, big: "123456789012345678901234567890" } },
  ],
});

describe.each(["pglite", "postgres"] as const)("the paper tick's commit on %s", (kind) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let db: Db;
  let hosted: ReturnType<typeof createHostedStore>;
  beforeAll(async () => {
    store = await freshStore(kind);
    db = store.db;
    hosted = createHostedStore(db);
  });
  afterAll(() => store?.drop());

  const lease = (id: string, seq: number, owner: string | null) =>
    db.query("UPDATE app.hosted_schedule SET tick_seq = $2, lease_owner = $3 WHERE agent_id = $1", [id, seq, owner]);
  const logs = (id: string) =>
    db.query<{ kind: string; code: string | null; body: string; tick_seq: string }>(
      "SELECT kind, code, body, tick_seq::text FROM app.hosted_logs WHERE agent_id = $1 ORDER BY id",
      [id],
    );

  it("writes the book, the state and the logs in order, byte for byte, when this instance holds the slot", async () => {
    await hosted.create(agent("ha_c1"), 0, 20);
    await lease("ha_c1", 1, "i1");
    const c = commit(1);
    expect(await hosted.commitPaper({ agentId: "ha_c1", seq: 1, dueMs: 60_000, instance: "i1" }, c, 61_000)).toBe(true);
    expect(await logs("ha_c1")).toEqual(
      c.entries.map((e) => ({ kind: e.kind, code: e.code, body: JSON.stringify(e.body), tick_seq: "1" })),
    );
    const a = await hosted.get("ha_c1");
    expect(a).toMatchObject({ paperBook: c.book, brainState: c.brainState, lastDecision: c.lastDecision });
    expect(a!.lastTrade).toEqual({ z: 1, a: 1 });
    expect(a!.updatedAt).toBe(61_000);
  });

  it("writes nothing for a slot that already ran, or under a lease another instance holds", async () => {
    await hosted.create(agent("ha_c2"), 0, 20);
    await lease("ha_c2", 1, "i1");
    const slot = { agentId: "ha_c2", seq: 1, dueMs: 60_000, instance: "i1" };
    expect(await hosted.commitPaper(slot, commit(1), 61_000)).toBe(true);
    const before = { agent: await hosted.get("ha_c2"), logs: await logs("ha_c2") };
    // The same slot again (a lease that lapsed and came back), the same due time under the next seq, another
    // instance's lease, and a seq the schedule has moved past: each commits nothing.
    expect(await hosted.commitPaper(slot, commit(2), 62_000)).toBe(false);
    await lease("ha_c2", 2, "i1");
    expect(await hosted.commitPaper({ ...slot, seq: 2 }, commit(3), 63_000)).toBe(false);
    await lease("ha_c2", 3, "i2");
    expect(await hosted.commitPaper({ ...slot, seq: 3, dueMs: 120_000 }, commit(4), 64_000)).toBe(false);
    expect(await hosted.commitPaper({ ...slot, seq: 2, dueMs: 180_000 }, commit(5), 65_000)).toBe(false);
    expect({ agent: await hosted.get("ha_c2"), logs: await logs("ha_c2") }).toEqual(before);
    // The holder of seq 3 commits it.
    expect(await hosted.commitPaper({ ...slot, seq: 3, dueMs: 120_000, instance: "i2" }, commit(6), 66_000)).toBe(true);
    expect((await hosted.get("ha_c2"))!.brainState).toEqual({ n: 6 });
    // An even tick has no trade: the last one stays.
    expect((await hosted.get("ha_c2"))!.lastTrade).toEqual({ z: 1, a: 1 });
  });

  it("takes a live tick's slot once, and only under this instance's lease", async () => {
    await hosted.create(agent("ha_c3"), 0, 20);
    await lease("ha_c3", 4, "i1");
    const slot = { agentId: "ha_c3", seq: 4, dueMs: 60_000, instance: "i1" };
    expect(await hosted.takeSlot({ ...slot, instance: "i2" }, 1)).toBe(false);
    expect(await hosted.takeSlot(slot, 1)).toBe(true);
    expect(await hosted.takeSlot(slot, 2)).toBe(false);
    const ticks = await db.query("SELECT instance, ran_at_ms::text AS at FROM app.hosted_ticks WHERE agent_id = $1", [
      "ha_c3",
    ]);
    expect(ticks).toEqual([{ instance: "i1", at: "1" }]);
  });

  it("commits one of two instances racing for the same slot", async () => {
    await hosted.create(agent("ha_c4"), 0, 20);
    await lease("ha_c4", 1, "i1");
    const slot = { agentId: "ha_c4", seq: 1, dueMs: 60_000, instance: "i1" };
    const won = await Promise.all([1, 2, 3, 4].map((n) => hosted.commitPaper(slot, commit(n), 61_000 + n)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await logs("ha_c4")).toHaveLength(3);
  });
});
