import { describe, expect, it } from "vitest";
import { linksOf, prizeStandings, sharesOf, type BookNumbers, type PrizeEntry } from "./rules.js";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const HUB = addr(0xeeee);
function entry(i: number, o: Partial<PrizeEntry> = {}): PrizeEntry {
  return {
    entry_id: `le_${String(i).padStart(2, "0")}`,
    agent_id: i,
    wallet: addr(100 + i),
    owner: addr(200 + i),
    agent_wallet: addr(300 + i),
    token: addr(1),
    symbol: `A${i}`,
    name: `Agent ${i}`,
    confirmed: true,
    confirmed_at: 10,
    entered_at: i,
    left_at: null,
    house: false,
    sanctioned: false,
    vault_wallet: addr(300 + i),
    ...o,
  };
}
const book = (profit: number, trades = 5, days = 3): BookNumbers => ({
  profit_usd: profit,
  score: profit,
  return_pct: null,
  max_dd_pct: null,
  capital_usd: 0,
  trades,
  active_days: days,
  unvalued: 0,
  open_unpriced: 0,
  price_outliers: 0,
  uncredited_usd: 0,
  unmarked_realised_usd: 0,
});
const tx = (from: string, to: string, block: number) => ({
  from,
  to,
  token: addr(1),
  tx_hash: `0x${block}`,
  block,
  log_index: 0,
});
const ENDS = 1_000;

function standings(entries: PrizeEntry[], profits: number[], transfers: ReturnType<typeof tx>[] = [], decided = true) {
  const books = new Map(entries.map((e, i) => [e.entry_id, book(profits[i]!)]));
  const links = linksOf(entries, transfers, new Set([HUB]));
  return prizeStandings({ entries, books, links, decided, ends: ENDS, checked_at: ENDS, shares: sharesOf(1_000_000n) });
}

describe("the prize board's rules", () => {
  const twelve = Array.from({ length: 12 }, (_, i) => entry(i + 1));
  const profits = twelve.map((_, i) => 100 - i * 5);

  it("pays the top three eligible entries 50/30/20 once ten clusters traded", () => {
    const st = standings(twelve, profits);
    expect(st.outcome).toMatchObject({ pays: true, active_clusters: 12, eligible_agents: 12 });
    expect(st.rows.slice(0, 4).map((r) => [r.rank, r.place, r.prize_atoms])).toEqual([
      [1, 1, "500000"],
      [2, 2, "300000"],
      [3, 3, "200000"],
      [4, null, null],
    ]);
  });

  it(
    "links owners by a transfer between them and by a common funder, never through a hub, and gives a cluster one " +
      "place",
    () => {
      const t = [
        tx(twelve[0]!.owner, twelve[1]!.wallet, 5),
        tx(HUB, twelve[2]!.wallet, 1),
        tx(HUB, twelve[3]!.wallet, 2),
        tx(addr(9999), twelve[4]!.owner, 3),
        tx(addr(9999), twelve[5]!.owner, 4),
      ];
      const st = standings(twelve, profits, t);
      const row = (i: number) => st.rows.find((r) => r.entry_id === twelve[i]!.entry_id)!;
      expect(row(0).cluster).toBe(row(1).cluster);
      expect(row(1).cluster_links).toEqual([
        expect.objectContaining({ kind: "transfer", evidence: expect.objectContaining({ tx_hash: "0x5" }) }),
      ]);
      // Both funded by the hub: no link.
      expect(row(2).cluster).not.toBe(row(3).cluster);
      expect(row(4).cluster).toBe(row(5).cluster);
      expect(row(5).cluster_links[0]).toMatchObject({ kind: "funder", evidence: { from: addr(9999) } });
      // Entry 2 is in entry 1's cluster: the third place goes down the board.
      expect(st.rows.filter((r) => r.place).map((r) => r.entry_id)).toEqual([
        twelve[0]!.entry_id,
        twelve[2]!.entry_id,
        twelve[3]!.entry_id,
      ]);
    },
  );

  it("keeps unconfirmed, sanctioned, house and left entries ranked but unpaid, and flags an unreadable list", () => {
    const odd = [
      entry(1, { confirmed: false, confirmed_at: null }),
      entry(2, { sanctioned: true }),
      entry(3, { house: true }),
      entry(4, { left_at: 500 }),
      entry(5, { sanctioned: null }),
      ...twelve.slice(5),
    ];
    const st = standings(odd, profits);
    const status = (i: number, rule: string) =>
      st.rows.find((r) => r.entry_id === odd[i]!.entry_id)!.eligibility.rules.find((r) => r.rule === rule)!.status;
    expect([
      status(0, "CONFIRMED"),
      status(1, "SANCTIONS"),
      status(2, "HOUSE"),
      status(3, "ENTERED"),
      status(4, "SANCTIONS"),
    ]).toEqual(["fail", "fail", "fail", "fail", "flag"]);
    expect(st.rows.slice(0, 5).every((r) => r.place === null)).toBe(true);
    expect(st.rows.find((r) => r.place === 1)!.entry_id).toBe(odd[5]!.entry_id);
    // While the season plays, a missing confirmation is pending, not a failure.
    expect(
      standings(odd, profits, [], false).rows.find((r) => r.entry_id === odd[0]!.entry_id)!.eligibility.rules[0]!
        .status,
    ).toBe("pending");
  });

  it("pays nothing with fewer than ten clusters that traded the minimum", () => {
    const entries = twelve.slice(0, 9);
    const st = standings(entries, profits.slice(0, 9));
    expect(st.outcome.pays).toBe(false);
    expect(st.outcome.why).toMatch(/only 9 owner clusters/);
    expect(st.rows.every((r) => r.place === null && r.prize_atoms === null)).toBe(true);
  });
});
