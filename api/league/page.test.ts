import { describe, expect, it } from "vitest";
import { season } from "../../lib/league/calendar.js";
import type { Rule } from "../../lib/league/rules.js";
import {
  dayHours,
  leaguePage,
  leagueSeasonPage,
  units,
  type LeaguePageInput,
  type LeagueSeasonInput,
  type PracticeRowView,
} from "./page.js";
import type { PrizeRowView } from "./prize.js";
import type { PayoutBook } from "./reserve.js";

const SCRIPT = "<script>alert(1)</script>";
const ATTR = `"onmouseover=alert(2) x="`;
const NOW = Date.UTC(2026, 10, 25, 15, 30) / 1000;
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as const;

const pass = (rule: string): Rule => ({
  rule,
  name: rule.toLowerCase(),
  status: "pass",
  reason: "ok",
  reviewed: false,
});
const rules = (over: Rule[] = []): Rule[] =>
  ["CONFIRMED", "SANCTIONS", "HOUSE", "ENTERED", "ACTIVE", "PAYABLE"].map(
    (r) => over.find((o) => o.rule === r) ?? pass(r),
  );

function prizeRow(o: Partial<PrizeRowView> & { rules?: Rule[] }): PrizeRowView {
  const rs = o.rules ?? rules();
  const worst =
    rs.find((r) => r.status === "fail")?.status ??
    rs.find((r) => r.status === "flag")?.status ??
    rs.find((r) => r.status === "pending")?.status ??
    "pass";
  return {
    rank: 1,
    entry_id: "le_0000000000000001",
    agent_id: 7,
    board: "prize",
    kind: "wallet",
    label: "Agent A (AGA)",
    wallet: addr(1),
    symbol: "AGA",
    name: "Agent A",
    token: addr(2),
    owner: addr(3),
    cluster: "le_0000000000000001",
    cluster_size: 1,
    cluster_links: [],
    profit_usd: 12.5,
    score: 12.5,
    return_pct: 2.5,
    max_dd_pct: 1.25,
    capital_usd: 500,
    trades: 4,
    active_days: 3,
    active: true,
    unvalued: 0,
    open_unpriced: 0,
    price_outliers: 0,
    uncredited_usd: 0,
    unmarked_realised_usd: 0,
    valued_at: NOW,
    left: false,
    place: null,
    prize_atoms: null,
    live: true,
    house: false,
    eligibility: { status: worst, eligible: worst === "pass", checked_at: NOW, rules: rs, checked_block: 100 },
    ...o,
  };
}

const practiceRow = (o: Partial<PracticeRowView> = {}): PracticeRowView => ({
  rank: 1,
  entry_id: "le_00000000000000p1",
  agent_id: 9,
  board: "practice",
  kind: "hosted",
  label: SCRIPT,
  symbol: "PRC",
  name: "Practice",
  token: addr(2),
  owner: addr(3),
  equity: 10_100,
  profit_usd: 100,
  score: 100,
  return_pct: 1,
  max_dd_pct: 0.5,
  trades: 6,
  active_days: 2,
  left: false,
  live: true,
  house: false,
  eligibility: null,
  place: null,
  prize_atoms: null,
  ...o,
});

const hostile = prizeRow({ label: `${SCRIPT} (${ATTR})`, symbol: ATTR, name: SCRIPT });
const ineligible = prizeRow({
  rank: 2,
  entry_id: "le_0000000000000002",
  label: "Agent B (AGB)",
  house: true,
  left: true,
  cluster_size: 2,
  cluster_links: [{ kind: "funder", with: "le_0000000000000001", evidence: { from: addr(5) } }],
  rules: rules([
    {
      rule: "HOUSE",
      name: "not the developer's own agent",
      status: "fail",
      reason: "a house agent ranks but never takes a paid place",
      reviewed: false,
    },
    {
      rule: "SANCTIONS",
      name: "no address on the sanctions list",
      status: "flag",
      reason: "the sanctions list could not be read",
      reviewed: false,
    },
    {
      rule: "CONFIRMED",
      name: "owner confirmed eligibility",
      status: "pending",
      reason: "no signed prize statement from the owner",
      reviewed: false,
    },
  ]),
});
const winner = prizeRow({ rank: 1, place: 1, prize_atoms: "1500000000000000000" });

const board = (
  b: "prize" | "practice",
  rows: unknown[],
  o: Partial<LeaguePageInput["prize"]> = {},
): LeaguePageInput["prize"] => ({
  board: b,
  season: 24,
  status: "open",
  rows: rows as Record<string, unknown>[],
  outcome: b === "prize" ? { pays: false, why: "only 1 owner clusters traded the minimum" } : null,
  amounts_basis: b === "prize" ? "estimate" : null,
  decided: false,
  valued_at: NOW,
  entrants_next: 0,
  ...o,
});

const league = (): LeaguePageInput["league"] => ({
  season: season(24, NOW),
  next_season: season(25, NOW),
  entrants: 2,
  practice_entrants: 1,
  now: NOW,
  schedule: [25, 26].map((n) => ({
    number: n,
    name: `Season ${n}`,
    starts_at: season(n, NOW).starts_at,
    ends_at: season(n, NOW).ends_at,
  })),
  past: [],
  reserve: { on: true, reserve_atoms: "2500000000000000000", cap_usd: 1000 },
  rules: {
    score: "season profit in USD",
    valuation: { marks: "independent only" },
    prize_cap_usd: 1000,
    split: { bps: [5000, 3000, 2000], places: 3, one_per_owner_cluster: true, token: "the partner token" },
    minimum_field: { clusters: 10, traded: { trades: 3, active_days: 2 } },
  },
});

const ledger: PayoutBook = {
  reserve_before: "0",
  gain: "4000000000000000000",
  half_gain: "2000000000000000000",
  added: "2000000000000000000",
  kept_staked: "2000000000000000000",
  cap: "10000000000000000000",
  ceiling: "30000000000000000000",
  reserve: "2000000000000000000",
  budget: "2000000000000000000",
  shares: ["1000000000000000000", "600000000000000000", "400000000000000000"],
  paid: ["1000000000000000000"],
  paid_total: "1000000000000000000",
  reserve_after: "1000000000000000000",
  cap_usd: 1000,
  orbio_usd: 0.1,
  mark_ts: NOW,
  mark_source: "marks",
  status: "settled",
  why: null,
};
const detail = (o: Partial<LeagueSeasonInput> = {}): LeagueSeasonInput => ({
  ...board("prize", [winner, hostile, ineligible], {
    season: 23,
    status: "closed",
    decided: true,
    amounts_basis: "decided",
  }),
  ledger,
  withdrawal: {
    tx_hash: null,
    tx_hashes: [],
    amount: ledger.added,
    ts: NOW,
    note: "the reserve wallet receives the stake's gains itself",
  },
  payouts: [
    {
      place: 1,
      entry_id: winner.entry_id,
      agent_id: 7,
      recipient: addr(8),
      amount: "1000000000000000000",
      status: "mined",
      tx_hash: `0x${"ab".repeat(32)}`,
      why: null,
    },
  ],
  winners: [
    {
      place: 1,
      entry_id: winner.entry_id,
      agent_id: 7,
      symbol: ATTR,
      label: `${SCRIPT}`,
      score: 12.5,
      profit_usd: 12.5,
      amount: "1000000000000000000",
      status: "mined",
      tx_hash: `0x${"ab".repeat(32)}`,
    },
  ],
  settled_at: NOW,
  ...o,
});

/** Third-party text reads back as text: no markup of it, no attribute broken out of. */
function expectEscaped(page: string) {
  expect(page).not.toMatch(/<script/i);
  expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  expect(page).not.toContain(ATTR);
  expect(page).toContain("&quot;onmouseover=alert(2) x=&quot;");
}

describe("league page", () => {
  it("formats partner-token atoms and the season clock", () => {
    expect(units("1500000000000000000")).toBe("1.5");
    expect(units("0")).toBe("0");
    expect(dayHours(6 * 86_400 + 3 * 3_600 + 59)).toBe("6 d 3 h");
  });

  it("shows the clock, both boards, the rules and the JSON links, escaping every label", async () => {
    const page = String(
      await leaguePage({
        league: league(),
        prize: board("prize", [hostile, ineligible]),
        practice: board("practice", [practiceRow()]),
      }),
    );
    expectEscaped(page);
    // No self-reload (issue 30 point 5): when it was read and a link to read it again, in landmarks.
    expect(page).not.toContain("http-equiv");
    expect(page).toContain('<a href="/league">Reload</a>');
    expect(page).toContain('Updated at <time datetime="2026-11-25T15:30:00Z">');
    expect(page).toMatch(/<main>\s*<h1>League<\/h1>[\s\S]*<\/main>\s*<footer>/);
    const s = season(24, NOW);
    expect(page).toContain(`day ${s.day} of 14, ${dayHours(s.seconds_left)} left`);
    expect(page).toMatch(/<section id="prize"[\s\S]*<section id="practice"/);
    expect(page).toContain("50% / 30% / 20% to the top 3, one per owner cluster");
    expect(page).toContain("at least 10 owner clusters traded 3 trades on 2 days");
    expect(page).toContain("Prize cap: $1000");
    expect(page).toContain('href="/api/v1/league"');
    expect(page).toContain('href="/league/seasons/25"');
  });

  it("marks ineligible, house and left rows and gives each rule that did not pass with its reason", async () => {
    const page = String(
      await leaguePage({
        league: league(),
        prize: board("prize", [hostile, ineligible]),
        practice: board("practice", []),
      }),
    );
    const row = page.slice(
      page.indexOf(`data-entry="${ineligible.entry_id}"`),
      page.indexOf("</tr>", page.indexOf(`data-entry="${ineligible.entry_id}"`)),
    );
    expect(page).toContain(`<tr class="ineligible house left" data-entry="${ineligible.entry_id}">`);
    expect(row).toContain('<span class="badge house">house</span>');
    expect(row).toContain('<span class="badge left">left</span>');
    expect(row).toContain("<b>HOUSE</b> fail: a house agent ranks but never takes a paid place");
    expect(row).toContain("<b>SANCTIONS</b> flag: the sanctions list could not be read");
    expect(row).toContain("<b>CONFIRMED</b> pending: no signed prize statement from the owner");
    expect(row).not.toContain("<b>ACTIVE</b>");
    expect(row).toContain("×2 <small>(funder)</small>");
    expect(page).toContain(`<tr class="" data-entry="${hostile.entry_id}">`);
  });

  it("says a board with nobody on it has no entrants", async () => {
    const page = String(
      await leaguePage({ league: league(), prize: board("prize", []), practice: board("practice", []) }),
    );
    expect(page.match(/Season 24: no entrants\./g)).toHaveLength(2);
    expect(page).not.toContain('<table class="rows"');
  });

  it("renders one season: standings, winners, payouts and the ledger, escaped", async () => {
    const page = String(await leagueSeasonPage(detail()));
    expectEscaped(page);
    expect(page).not.toContain("http-equiv");
    expect(page).toContain("Season 23 <small>(closed, decided)</small>");
    expect(page).toContain('<table id="winners">');
    expect(page).toContain('<table id="payouts">');
    expect(page).toContain(`<code>${addr(8)}</code>`);
    expect(page).toMatch(/<th class="l">reserve_after<\/th><td><span title="1000000000000000000 atoms">1<\/span>/);
    expect(page).toContain("1 / 0.6 / 0.4");
    expect(page).toContain('title="1500000000000000000 atoms">1.5</span>');
    expect(page).toContain('href="/api/v1/league/seasons/23"');
  });

  it("renders an upcoming season with no rows, ledger or payouts", async () => {
    const page = String(
      await leagueSeasonPage(
        detail({
          ...board("prize", [], { season: 25, status: "upcoming", outcome: null }),
          ledger: null,
          withdrawal: null,
          payouts: [],
          winners: [],
          settled_at: null,
        }),
      ),
    );
    expect(page).toContain("Season 25: no entrants.");
    expect(page).toContain("No ledger yet.");
    expect(page).toContain("No winners.");
  });

  it("draws the top entrants' profit by day, ending at the row's profit, with the same points in a table", async () => {
    const day0 = season(24, NOW).starts;
    const page = String(
      await leaguePage({
        league: league(),
        prize: board("prize", [hostile, ineligible]),
        practice: board("practice", []),
        curves: {
          [hostile.entry_id]: [
            { ts: day0, profit_usd: 0 },
            { ts: day0 + 86_400, profit_usd: -3.5 },
          ],
        },
      }),
    );
    expectEscaped(page);
    const chart = page.slice(page.indexOf('<svg class="chart" id="profit-chart"'), page.indexOf("</svg>") + 6);
    expect(chart).toContain('role="img"');
    expect(chart.match(/<circle class="point" data-series="le_0000000000000001"/g)).toHaveLength(3);
    expect(chart).toContain(`data-x="${day0 + 86_400}" data-value="-3.5"`);
    expect(chart).toContain(`data-x="${NOW}" data-value="12.5"`);
    // The second row has no curve kept: its line is the row's profit now.
    expect(chart.match(/<circle class="point" data-series="le_0000000000000002"/g)).toHaveLength(1);
    expect(chart).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(page).toMatch(
      /<tr data-entry="le_0000000000000001"><td class="l label">[^<]*<\/td><td>0.00<\/td><td>-3.50<\/td>/,
    );
  });

  it("draws the reserve against its cap, an amount without the partner token's mark as unknown", async () => {
    const l = league();
    const estimate = { status: "estimate", reserve: "3000000000000000000", budget: "3000000000000000000" };
    const at = (orbio: number | null) =>
      leaguePage({
        league: { ...l, reserve: { ...l.reserve, estimate: { ...estimate, ...ledgerCap, orbio_usd: orbio } } },
        prize: board("prize", []),
        practice: board("practice", []),
      });
    const ledgerCap = { cap: ledger.cap, ceiling: ledger.ceiling };
    const priced = String(await at(0.1));
    expect(priced.match(/<rect class="bar"/g)).toHaveLength(5);
    expect(priced).toContain('data-label="Cap: $1000 per season in partner tokens" data-value="10"');
    expect(priced).toContain('data-label="Ceiling the reserve may reach" data-value="30"');
    expect(priced).toContain('data-label="Reserve after the last decided season" data-value="2.5"');
    expect(priced).toContain(
      '<td class="l">Cap: $1000 per season in partner tokens</td>' +
        '<td><span title="10000000000000000000 atoms">10</span>',
    );
    const unpriced = String(await at(null));
    expect(unpriced).toContain('data-label="Cap: $1000 per season in partner tokens" data-value=""');
    expect(unpriced).toContain("unknown: no mark for the partner token");
    expect(
      String(await leaguePage({ league: league(), prize: board("prize", []), practice: board("practice", []) })),
    ).toContain("No prize entrants to draw.");
  });
});
