import { describe, expect, it } from "vitest";
import { season } from "../../lib/league/calendar.js";
import { openMigratedMemory } from "../ports/store/memory.js";
import { NO_SIGNER_WHY, payableInOrder, spendable } from "./pay.js";
import { createSettler } from "./settle.js";

const W = "0x0000000000000000000000000000000000000777";

const T = "0x00000000000000000000000000000000000000aa";
/** Owed places as the settler reads them: oldest season first, then place. */
const owed = (...xs: [number, number, bigint, string][]) =>
  xs.map(([season, place, amount, recipient]) => ({ season, place, amount: amount.toString(), recipient, token: T }));

describe("owed league places are paid in order", () => {
  it("pays the run the balance covers, oldest season first: a later, smaller place never goes first", async () => {
    const rows = owed([4, 1, 50n, "a"], [4, 2, 30n, "b"], [4, 3, 20n, "c"], [5, 1, 5n, "d"]);
    const reads: string[][] = [];
    const listedOf = async (r: string[]) => (reads.push(r), { listed: r.map(() => false), block: 7n });
    const some = await payableInOrder(rows, 79n, listedOf);
    // 79 covers season 4's first place only: its second (30) does not fit, so neither does anything after it.
    expect(some.pay.map((r) => [r.season, r.place])).toEqual([[4, 1]]);
    expect(some.owed.map((r) => [r.season, r.place])).toEqual([
      [4, 2],
      [4, 3],
      [5, 1],
    ]);
    // Only the places about to be signed are read on the list.
    expect(reads).toEqual([["a"]]);
    const all = await payableInOrder(rows, 105n, listedOf);
    expect(all.pay.map((r) => [r.season, r.place])).toEqual([
      [4, 1],
      [4, 2],
      [4, 3],
      [5, 1],
    ]);
    expect(all.owed).toEqual([]);
  });

  it("holds a listed recipient (read right before signing) and gives its room to the next places", async () => {
    const rows = owed([4, 1, 50n, "a"], [4, 2, 30n, "listed"], [4, 3, 20n, "c"], [5, 1, 25n, "d"]);
    const listedOf = async (r: string[]) => ({ listed: r.map((a) => a === "listed"), block: 9n });
    const out = await payableInOrder(rows, 95n, listedOf);
    expect(out.held.map(({ r, block }) => [r.place, block])).toEqual([[2, 9n]]);
    expect(out.pay.map((r) => [r.season, r.place])).toEqual([
      [4, 1],
      [4, 3],
      [5, 1],
    ]);
    expect(out.owed).toEqual([]);
  });

  it("signs nothing when the first place owed does not fit, nor a row of another token", async () => {
    const rows = owed([4, 1, 50n, "a"], [4, 2, 1n, "b"]);
    const none = await payableInOrder(rows, 49n, async () => ({ listed: [], block: 1n }));
    expect(none).toMatchObject({ pay: [], held: [] });
    expect(none.owed).toHaveLength(2);
    const other = [rows[0]!, { ...rows[1]!, token: "0x00000000000000000000000000000000000000bb" }];
    const mixed = await payableInOrder(other, 100n, async (r) => ({ listed: r.map(() => false), block: 1n }));
    expect(mixed.pay).toHaveLength(1);
    expect(mixed.owed).toHaveLength(1);
  });
});

describe("spendable: the reserve wallet's balance for owed places", () => {
  const T = "0x00000000000000000000000000000000000000aa";
  it("sets the held places' shares aside, in the payouts' token only, never below zero", () => {
    const held = [
      { amount: "300", token: T },
      { amount: "200", token: T.toUpperCase().replace("0X", "0x") },
      { amount: "999", token: "0x00000000000000000000000000000000000000bb" },
    ];
    expect(spendable(1_000n, held, T)).toBe(500n);
    expect(spendable(1_000n, [], T)).toBe(1_000n);
    expect(spendable(400n, held, T)).toBe(0n);
  });
});

describe("the settler's pass", () => {
  it("pays the places owed even when deciding a season fails", async () => {
    const db = await openMigratedMemory("settle");
    const s = season(3, 0);
    await db.query(
      "INSERT INTO app.league_entries (entry_id, board, agent_id, kind, wallet, entrant, owner, agent_wallet, token, " +
        "symbol, name, proof, from_season, entered_at) VALUES ('e1', 'prize', 1, 'wallet', $1, $1, $1, $1, $1, " +
        "'A', 'a', 'p', 3, $2)",
      [W, s.starts - 10],
    );
    await db.query(
      "INSERT INTO app.league_payouts (season, place, entry_id, agent_id, recipient, token, amount, status, " +
        "created_at) VALUES (2, 1, 'e0', 1, $1, $2, '5', 'planned', 0)",
      [W, T],
    );
    const chain = {
      multicall: async () => {
        throw new Error("node down");
      },
    };
    const settler = createSettler({
      db,
      chain,
      clock: () => (s.ends + 60) * 1000,
      config: { contracts: {}, league: { houseAgents: [] }, tokens: {} },
      indexed: {
        head: async () => ({ block: 50, timestamp: s.ends + 30 }),
        finalized: async () => ({ block: 20, timestamp: s.ends + 1 }),
      },
      transfers: {
        read: async () => {
          throw new Error("the transfer log could not be read");
        },
        native: async () => ({ transfers: [], unreadable: null }),
      },
      signer: null,
      lease: { hold: async () => true, release: async () => undefined },
    } as unknown as Parameters<typeof createSettler>[0]);
    await expect(settler.runOnce()).rejects.toThrow(/transfer log could not be read/);
    const [row] = await db.query<{ why: string | null }>("SELECT why FROM app.league_payouts");
    expect(row!.why).toBe(NO_SIGNER_WHY);
  });
});
