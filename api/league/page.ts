import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { PrizeRowView } from "./prize.js";
import type { practiceBoard } from "./practice.js";
import type { LeagueReader } from "./read.js";
import type { BookPoint } from "../../lib/league/book.js";
import { SITE_NAV } from "../../lib/siteNav.js";
import { TOP_CURVES, profitChart, profitLines, reserveChart } from "./charts.js";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;
type LeagueAnswer = Awaited<ReturnType<LeagueReader["league"]>>;
type StandingsAnswer = Awaited<ReturnType<LeagueReader["standings"]>>;
type DetailAnswer = Awaited<ReturnType<LeagueReader["seasonDetail"]>>;
export type PracticeRowView = Awaited<ReturnType<typeof practiceBoard>>[number];

/** What the pages read of the answers (the answers themselves fit; tests need build no more). */
export type LeaguePageInput = {
  league: Pick<
    LeagueAnswer,
    "season" | "next_season" | "entrants" | "practice_entrants" | "schedule" | "past" | "now"
  > & {
    reserve: Pick<LeagueAnswer["reserve"], "on" | "reserve_atoms" | "cap_usd"> & { estimate?: Estimate };
    rules: Pick<LeagueAnswer["rules"], "score" | "split" | "minimum_field" | "prize_cap_usd"> & {
      valuation: Pick<LeagueAnswer["rules"]["valuation"], "marks">;
    };
  };
  prize: BoardAnswer;
  practice: BoardAnswer;
  /** The prize board's profit curves by entry id (from the same computation as its rows). */
  curves?: Record<string, BookPoint[]>;
};
type BoardAnswer = Pick<
  StandingsAnswer,
  "board" | "season" | "status" | "rows" | "outcome" | "amounts_basis" | "decided" | "valued_at" | "entrants_next"
>;
export type LeagueSeasonInput = BoardAnswer &
  Pick<DetailAnswer, "ledger" | "withdrawal" | "payouts" | "winners" | "settled_at">;

/** Prize amounts, reserve and ledger are partner-token atoms with 18 decimals (SPEC GET league). */
const PARTNER_DECIMALS = 18;

const STYLE = raw(`<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;padding:1rem;color:#111;max-width:90rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #ccc;padding:.2rem .45rem;text-align:right;\
vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}.bad{color:#a00;font-weight:600}.ok{color:#070;font-weight:600}\
.wait{color:#8a5200;font-weight:600}
tr.ineligible td{background:#fff7f7}tr.house td,tr.left td{color:#555}ul.why{margin:.2rem 0 0;padding-left:1rem;\
font-size:12px}
.badge{display:inline-block;border:1px solid #888;border-radius:3px;padding:0 .3rem;margin-left:.3rem;font-size:11px;\
text-transform:uppercase}
code{font-size:12px;overflow-wrap:anywhere}section{margin-bottom:1.5rem}p,h1,h2,li{overflow-wrap:anywhere}\
.scroll code{overflow-wrap:normal;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}.scroll:focus{outline:2px solid #1f5fa8}
svg.chart{display:block;width:100%;max-width:40rem;height:auto;margin:.5rem 0 1rem}
</style>`);

/**
 * A wide table in a box that scrolls sideways by itself, so the page fits a phone; focusable and named, so a
 * keyboard reaches what is off screen.
 */
const scroll = (label: string, table: Html) =>
  html`<div class="scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;

/**
 * The shell: the body in `main`; with `updated`, a footer saying when the numbers were read and a link to read
 * them again (the page never reloads itself: a reader keeps their place, and a screen reader is not interrupted).
 */
function page(title: string, body: Html, updated?: { at: number; href: string }): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">\
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>${STYLE}</head><body>
<header>${raw(SITE_NAV)}</header>
<main>
${body}
</main>${
    updated
      ? html`
<footer><p id="updated"><small>Updated at <time datetime="${iso(updated.at)}">${iso(updated.at)}</time>. \
<a href="${updated.href}">Reload</a> for newer numbers.</small></p></footer>`
      : ""
  }
</body></html>`;
}

/** Atoms as whole units (exact, trailing zeros cut). */
export function units(atoms: string, decimals = PARTNER_DECIMALS): string {
  const v = BigInt(atoms);
  const scale = 10n ** BigInt(decimals);
  const frac = (v % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${v / scale}${frac ? `.${frac}` : ""}`;
}

/** Seconds as whole days and hours: the season clock needs no finer grain. */
export const dayHours = (s: number) => `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3_600)} h`;
const usd = (x: number | null | undefined) => (x === null || x === undefined ? "–" : x.toFixed(2));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? "–" : `${x.toFixed(2)}%`);
const iso = (ts: number | null | undefined) => (ts ? new Date(ts * 1000).toISOString().replace(".000Z", "Z") : "–");
const short = (a: string) => html`<code title="${a}">${a.slice(0, 6)}…${a.slice(-4)}</code>`;
const atoms = (a: string | null | undefined) =>
  a === null || a === undefined ? "–" : html`<span title="${a} atoms">${units(a)}</span>`;
const statusClass = (s: string) => (s === "pass" ? "ok" : s === "pending" ? "wait" : "bad");

function badges(r: { house: boolean; left: boolean }): Html {
  return html`${r.house ? html`<span class="badge house">house</span>` : ""}${
    r.left
      ? html`<span class="badge left">\
left</span>`
      : ""
  }`;
}

/** Eligibility: the status, then every rule that did not pass with its reason (what keeps the row from a place). */
function eligibilityCell(e: PrizeRowView["eligibility"]): Html {
  const open = e.rules.filter((r) => r.status !== "pass");
  return html`<td class="l">\
<span class="${statusClass(e.status)}">${e.eligible ? "eligible" : e.status}</span>\
${
  open.length
    ? html`<ul class="why">${open.map(
        (r) => html`<li data-rule="${r.rule}">\
<b>${r.rule}</b> ${r.status}: ${r.reason}${r.reviewed ? " (reviewed)" : ""}</li>`,
      )}</ul>`
    : ""
}</td>`;
}

function clusterCell(r: PrizeRowView): Html {
  const kinds = [...new Set(r.cluster_links.map((l) => l.kind))];
  return html`<td class="l">\
<code title="${r.cluster}">${r.cluster.slice(0, 10)}</code> ×${r.cluster_size}${
    kinds.length
      ? html` <small>\
(${kinds.join(", ")})</small>`
      : ""
  }</td>`;
}

function prizeRow(r: PrizeRowView): Html {
  const cls = [r.eligibility.eligible ? "" : "ineligible", r.house ? "house" : "", r.left ? "left" : ""]
    .filter(Boolean)
    .join(" ");
  return html`<tr class="${cls}" data-entry="${r.entry_id}"><td>${r.rank}</td>\
<td class="l label">${r.label}${badges(r)}</td>\
<td class="l">${short(r.wallet)}</td>${clusterCell(r)}<td>${usd(r.profit_usd)}</td><td>${pct(r.return_pct)}</td>\
<td>${pct(r.max_dd_pct)}</td><td>${usd(r.capital_usd)}</td><td>${r.trades}</td><td>${r.active_days}</td>\
<td>${r.unvalued} / ${r.open_unpriced} / ${r.price_outliers}</td>${eligibilityCell(r.eligibility)}<td>\
${r.place ?? "–"}</td><td>${atoms(r.prize_atoms)}</td></tr>`;
}

function practiceRow(r: PracticeRowView): Html {
  return html`<tr class="${r.left ? "left" : ""}" data-entry="${r.entry_id}"><td>${r.rank}</td>\
<td class="l label">${r.label}${badges(r)}</td><td class="l">${r.kind}</td><td>${usd(r.equity)}</td>\
<td>${usd(r.profit_usd)}</td><td>${pct(r.return_pct)}</td><td>${pct(r.max_dd_pct)}</td><td>${r.trades}</td></tr>`;
}

const PRIZE_HEAD = html`<tr><th>Rank</th><th class="l">Entrant</th><th class="l">Wallet</th><th class="l">Cluster</th>\
<th>Profit (USD)</th><th>Return</th><th>Max drawdown</th><th>Capital (USD)</th><th>Trades</th><th>Active days</th>\
<th title="unvalued / open unpriced / price outliers">Unvalued / open unpriced / outliers</th>\
<th class="l">Eligibility</th><th>Place</th><th>Prize (partner token)</th></tr>`;
const PRACTICE_HEAD = html`<tr><th>Rank</th><th class="l">Entrant</th><th class="l">Kind</th><th>Equity (USD)</th>\
<th>Profit (USD)</th><th>Return</th><th>Max drawdown</th><th>Trades</th></tr>`;

/** One board: what its numbers are (estimate, provisional, decided) and the rows, or that nobody plays. */
function boardSection(b: BoardAnswer): Html {
  const basis = b.decided
    ? "decided"
    : b.status === "open"
      ? "live estimate"
      : b.status === "closed"
        ? "provisional, not decided yet"
        : "not started";
  const rows =
    b.board === "prize"
      ? (b.rows as unknown as PrizeRowView[]).map(prizeRow)
      : (b.rows as unknown as PracticeRowView[]).map(practiceRow);
  return html`<section id="${b.board}" class="board">
<h2>${b.board === "prize" ? "Prize board" : "Practice board"} <small>Season ${b.season}: ${basis}\
${b.valued_at ? html`, valued at ${iso(b.valued_at)}` : ""}</small></h2>
${
  b.outcome
    ? html`<p class="outcome">${
        b.outcome.pays
          ? html`<span class="ok">pays</span>`
          : html`<span class="bad">\
does not pay</span>`
      }: ${b.outcome.why}</p>`
    : ""
}
${
  b.rows.length
    ? scroll(
        `${b.board === "prize" ? "Prize" : "Practice"} board rows`,
        html`<table class="rows">${b.board === "prize" ? PRIZE_HEAD : PRACTICE_HEAD}${rows}</table>`,
      )
    : html`<p class="empty">Season ${b.season}: no entrants.</p>`
}
<p><small>${b.entrants_next} entered for the next season.</small></p>
</section>`;
}

/** The season clock: where the current season is and when entries made now start playing. */
function clockSection(l: LeaguePageInput["league"]): Html {
  const s = l.season;
  const where =
    s.status === "open"
      ? html`playing, day ${s.day} of ${s.days}, ${dayHours(s.seconds_left)} left (ends ${s.ends_at})`
      : s.status === "upcoming"
        ? html`starts in ${dayHours(s.seconds_left)} (${s.starts_at})`
        : html`ended ${s.ends_at}`;
  return html`<section id="clock"><h2>Season clock</h2>
<p><b>${s.name}</b>: <span class="status">${s.status}</span>, ${where}. ${l.entrants} prize and ${l.practice_entrants}\
 practice entrants.</p>
<p>Entries made now play from <a href="/league/seasons/${l.next_season.number}">${l.next_season.name}</a>\
, starting ${l.next_season.starts_at}.</p>
<p>Schedule: ${l.schedule.map(
    (x) => html`<a href="/league/seasons/${x.number}">${x.name}</a>\
 ${x.starts_at.slice(0, 10)}; `,
  )}</p>
${
  l.past.length
    ? html`<p>Decided: ${l.past.map(
        (p) => html`<a href="/league/seasons/${p.number}">${p.name}</a>\
 (${p.pays ? `${p.winners.length} paid` : "did not pay"}); `,
      )}</p>`
    : ""
}
</section>`;
}

function rulesSection(l: LeaguePageInput["league"]): Html {
  const r = l.rules;
  const t = r.minimum_field.traded;
  return html`<section id="rules"><h2>Rules</h2><ul>
<li>Score: ${r.score}.</li>
<li>Valuation: ${r.valuation.marks}.</li>
<li>Split: ${r.split.bps.map((b) => `${b / 100}%`).join(" / ")} to the top ${r.split.places}\
${r.split.one_per_owner_cluster ? ", one per owner cluster" : ""}; paid in ${r.split.token}.</li>
<li>Minimum field: a season pays only if at least ${r.minimum_field.clusters} owner clusters traded ${t.trades}\
 trades on ${t.active_days} days.</li>
<li>Prize cap: $${r.prize_cap_usd} per season. Reserve ${
    l.reserve.on
      ? html`holds ${units(l.reserve.reserve_atoms)}\
 partner tokens`
      : "is off"
  }.</li>
</ul></section>`;
}

const JSON_LINKS = html`<p>JSON: <a href="/api/v1/league">/api/v1/league</a>\
, <a href="/api/v1/league/standings?board=prize">standings (prize)</a>\
, <a href="/api/v1/league/standings?board=practice">standings (practice)</a>, <a href="/api/v1/league/seasons">\
seasons</a>, <a href="/api/v1/league/reserve">reserve</a>.</p>`;

/** The reserve's estimate as the page reads it (a pending estimate has only a why). */
type Estimate = {
  status: string;
  why?: string | null;
  reserve?: string;
  cap?: string;
  ceiling?: string;
  budget?: string;
  orbio_usd?: number | null;
};
/** One amount of the reserve chart and table: partner-token atoms, or null with why it is not known. */
type ReserveRow = { label: string; atoms: string | null; why: string };

/** The reserve against its cap: what it holds, this season's estimate, the cap, the ceiling and the budget. */
export function reserveRows(r: LeaguePageInput["league"]["reserve"]): ReserveRow[] {
  const e = r.estimate;
  const why = e?.why ?? (e ? `estimate ${e.status}` : "no estimate");
  // Without the partner token's mark the cap (USD in tokens) is not known; the book then carries a cap of 0.
  const noMark = e && e.orbio_usd === null ? "no mark for the partner token" : why;
  return [
    { label: "Reserve after the last decided season", atoms: r.reserve_atoms, why },
    { label: "Reserve this season (estimate)", atoms: e?.reserve ?? null, why },
    {
      label: `Cap: $${r.cap_usd} per season in partner tokens`,
      atoms: e?.orbio_usd ? (e.cap ?? null) : null,
      why: noMark,
    },
    { label: "Ceiling the reserve may reach", atoms: e?.orbio_usd ? (e.ceiling ?? null) : null, why: noMark },
    { label: "This season's budget", atoms: e?.budget ?? null, why },
  ];
}

/** Partner tokens to six significant digits: the chart's text (the table has them exact). */
const approx = (atoms: string) => String(Number(Number(units(atoms)).toPrecision(6)));

function reserveSection(l: LeaguePageInput["league"]): Html {
  if (!l.reserve.on)
    return html`<section id="reserve"><h2>Reserve against its cap</h2><p>The reserve is off.</p>\
</section>`;
  const rows = reserveRows(l.reserve);
  const bars = rows.map((r) => ({
    label: r.label,
    value: r.atoms === null ? null : Number(units(r.atoms)),
    text: r.atoms === null ? `unknown: ${r.why}` : `${approx(r.atoms)} tokens`,
  }));
  return html`<section id="reserve"><h2>Reserve against its cap</h2>${raw(reserveChart(bars))}
${scroll(
  "Reserve against its cap",
  html`<table id="reserve-rows"><tr><th class="l">Amount</th><th>Partner tokens</th></tr>
${rows.map(
  (r) => html`<tr><td class="l">${r.label}</td>\
<td>${r.atoms === null ? `unknown: ${r.why}` : atoms(r.atoms)}</td></tr>`,
)}\
</table>`,
)}</section>`;
}

/** The top entrants' profit over the season, drawn, and the same points in a table (a column per day). */
function profitSection(b: BoardAnswer, curves: Record<string, BookPoint[]>): Html {
  const rows = b.rows as unknown as PrizeRowView[];
  const head = html`<h2>Profit over the season <small>(top ${TOP_CURVES} of the prize board)</small></h2>`;
  if (!rows.length) return html`<section id="profit">${head}<p>No prize entrants to draw.</p></section>`;
  const lines = profitLines(rows, curves, b.valued_at);
  const times = [...new Set(lines.flatMap((l) => l.points.map((p) => p.x)))].sort((x, y) => x - y);
  return html`<section id="profit">${head}${raw(profitChart(lines, b.season))}
${scroll(
  "Profit over the season",
  html`<table id="profit-rows"><tr><th class="l">Entrant</th>${times.map((t) => html`<th>${iso(t)}</th>`)}</tr>
${lines.map(
  (l) =>
    html`<tr data-entry="${l.key}"><td class="l label">${l.name}</td>${times.map((t) => {
      const p = l.points.find((x) => x.x === t);
      return html`<td>${p ? usd(p.y) : "–"}</td>`;
    })}</tr>`,
)}</table>`,
)}</section>`;
}

/**
 * GET /league: both boards of the current season, the clock, the charts and the rules; server-rendered, no
 * script, every third-party string escaped (hono/html for the page, lib/svgChart for the charts).
 */
export function leaguePage(input: LeaguePageInput): Html {
  const l = input.league;
  return page(
    "League",
    html`<h1>League</h1>
${clockSection(l)}
${boardSection(input.prize)}
${profitSection(input.prize, input.curves ?? {})}
${reserveSection(l)}
${boardSection(input.practice)}
${rulesSection(l)}
${JSON_LINKS}`,
    { at: l.now, href: "/league" },
  );
}

function winnersTable(d: LeagueSeasonInput): Html {
  if (!d.winners.length) return html`<p>No winners.</p>`;
  return scroll(
    "Winners",
    html`<table id="winners"><tr><th>Place</th><th class="l">Entrant</th><th>Profit (USD)</th><th>Amount</th>\
<th class="l">Status</th><th class="l">Transaction</th></tr>
${d.winners.map(
  (w) => html`<tr><td>${String(w.place)}</td><td class="l label">${String(w.label)}</td>\
<td>${usd(w.profit_usd as number)}</td><td>${atoms(w.amount as string | null)}</td><td class="l">${w.status}</td>\
<td class="l">${w.tx_hash ? html`<code>${w.tx_hash}</code>` : "–"}</td></tr>`,
)}</table>`,
  );
}

function payoutsTable(d: LeagueSeasonInput): Html {
  if (!d.payouts.length) return html`<p>No payouts.</p>`;
  return scroll(
    "Payouts",
    html`<table id="payouts"><tr><th>Place</th><th>Agent</th><th class="l">Recipient</th><th>Amount</th>\
<th class="l">Status</th><th class="l">Transaction</th></tr>
${d.payouts.map(
  (p) => html`<tr><td>${p.place}</td><td>${p.agent_id}</td><td class="l"><code>${p.recipient}</code>\
</td><td>${atoms(p.amount)}</td><td class="l">${p.status}${p.why ? html`: ${p.why}` : ""}</td>\
<td class="l">${p.tx_hash ? html`<code>${p.tx_hash}</code>` : "–"}</td></tr>`,
)}</table>`,
  );
}

/** The reserve ledger: partner-token amounts as units, the rest as served. */
function ledgerTable(d: LeagueSeasonInput): Html {
  const l = d.ledger;
  if (!l) return html`<p>No ledger yet.</p>`;
  const amount = (
    k:
      | "reserve_before"
      | "gain"
      | "half_gain"
      | "added"
      | "kept_staked"
      | "cap"
      | "ceiling"
      | "reserve"
      | "budget"
      | "paid_total"
      | "reserve_after",
  ) => html`<tr><th class="l">${k}</th><td>${atoms(l[k])}</td></tr>`;
  return html`${scroll(
    "Reserve ledger",
    html`<table id="ledger">
<tr><th class="l">status</th><td>\
<span class="${l.status === "settled" ? "ok" : l.status === "incomplete" ? "bad" : "wait"}">${l.status}</span>\
${l.why ? html`: ${l.why}` : ""}</td></tr>
${(
  [
    "reserve_before",
    "gain",
    "half_gain",
    "added",
    "kept_staked",
    "cap",
    "ceiling",
    "reserve",
    "budget",
    "paid_total",
    "reserve_after",
  ] as const
).map(amount)}
<tr><th class="l">shares</th><td>${l.shares.map((s) => units(s)).join(" / ") || "–"}</td></tr>
<tr><th class="l">cap_usd</th><td>${l.cap_usd}</td></tr>
<tr><th class="l">orbio_usd</th><td>${l.orbio_usd ?? "no mark"}</td></tr>
<tr><th class="l">mark</th><td>${iso(l.mark_ts)} (${l.mark_source})</td></tr>
</table>`,
  )}
${
  d.withdrawal
    ? html`<p id="withdrawal">Withdrawal: ${
        d.withdrawal.tx_hash
          ? html`<code>${d.withdrawal.tx_hash}\
</code>`
          : "no transaction"
      }; ${d.withdrawal.note}.</p>`
    : ""
}`;
}

/** GET /league/seasons/<n>: one season's prize standings, reserve ledger, payouts and winners. */
export function leagueSeasonPage(d: LeagueSeasonInput): Html {
  const n = d.season;
  return page(
    `Season ${n}: league`,
    html`<h1>Season ${n} <small>(${d.status}${d.decided ? ", decided" : ""})</small></h1>
<p><a href="/league">League</a>${d.settled_at ? html` · settled ${iso(d.settled_at)}` : ""}</p>
${boardSection(d)}
<section><h2>Winners</h2>${winnersTable(d)}</section>
<section><h2>Payouts</h2>${payoutsTable(d)}</section>
<section><h2>Reserve ledger</h2>${ledgerTable(d)}</section>
<p>JSON: <a href="/api/v1/league/seasons/${n}">/api/v1/league/seasons/${n}</a>, <a href="/api/v1/league/seasons/${n}\
/books">books</a> (each entry's trades, to recompute the rows).</p>`,
  );
}

/** A season that is not on the calendar: a small page for the 404. */
export function leagueMissingPage(message: string): Html {
  return page("No such season", html`<h1>No such season</h1><p>${message}.</p><p><a href="/league">League</a></p>`);
}
