import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { TransferRow, WeekRow } from "./close.js";
import type { TokenTotal, TreasuryAnswer } from "./read.js";
import { BUCKETS } from "./split.js";
import { SITE_NAV } from "../../lib/siteNav.js";
import { dollars, inflowChart, splitChart, weekSums } from "./charts.js";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** Atoms as whole units (exact, trailing zeros cut). */
export function units(atoms: string, decimals: number): string {
  const v = BigInt(atoms);
  const scale = 10n ** BigInt(decimals);
  const frac = (v % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${v / scale}${frac ? `.${frac}` : ""}`;
}

const STYLE = raw(`<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;padding:1rem;color:#111;max-width:72rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #ccc;padding:.2rem .45rem;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.bad{color:#a00;font-weight:600}.ok{color:#070;font-weight:600}
code{font-size:12px;overflow-wrap:anywhere}section{margin-bottom:1.5rem}h3{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}.scroll:focus{outline:2px solid #1f5fa8}
svg.chart{display:block;width:100%;max-width:40rem;height:auto;margin:.5rem 0 1rem}
</style>`);

/**
 * A wide table in a box that scrolls sideways by itself, so the page fits a phone; focusable and named, so a
 * keyboard reaches what is off screen.
 */
const scroll = (label: string, table: Html) =>
  html`<div class="scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;

function txLink(a: TreasuryAnswer, hash: string): Html {
  const short = `${hash.slice(0, 10)}…`;
  return a.explorer_tx
    ? html`<a href="${a.explorer_tx.replace("{tx_hash}", hash)}">${short}</a>`
    : html`<code title="${hash}">${short}</code>`;
}

const bucketCells = (per: Record<string, string>, decimals: number) =>
  BUCKETS.map((b) => html`<td>${units(per[b] ?? "0", decimals)}</td>`);

function totalsTable(totals: TokenTotal[]): Html {
  if (!totals.length) return html`<p>No week closed yet.</p>`;
  return scroll(
    "Totals per token",
    html`<table id="totals">
<tr><th class="l">Token</th><th>Received</th><th>Outside</th>\
<th>Trades</th>${BUCKETS.map((b) => html`<th>Moved to ${b}</th>`)}${BUCKETS.map((b) => html`<th>Owed to ${b}</th>`)}\
<th>Held</th></tr>
${totals.map(
  (t) => html`<tr><td class="l">${t.symbol}</td><td>${units(t.received, t.decimals)}</td>\
<td>${units(t.outside, t.decimals)}</td>\
<td>${t.trades}</td>${bucketCells(t.moved, t.decimals)}${bucketCells(t.owed, t.decimals)}<td>\
${units(t.held, t.decimals)}</td></tr>`,
)}
</table>`,
  );
}

function transfersList(a: TreasuryAnswer, transfers: TransferRow[]): Html {
  if (!transfers.length) return html``;
  return scroll(
    "Transfers of the week",
    html`<table><tr><th class="l">Bucket</th><th class="l">To</th><th class="l">Token</th><th>Amount</th>\
<th class="l">Transaction</th><th>Block</th></tr>
${transfers.map(
  (t) => html`<tr><td class="l">${t.bucket}</td><td class="l"><code>${t.to}</code></td>\
<td class="l">${t.symbol}</td><td>${units(t.amount, t.decimals)}</td><td class="l">${txLink(a, t.tx_hash)}</td>\
<td>${t.block}</td></tr>`,
)}</table>`,
  );
}

function weekSection(a: TreasuryAnswer, w: WeekRow): Html {
  const r = w.reconciliation;
  return html`<section class="week" data-seq="${w.seq}">
<h3>${w.week.label} <small>(${new Date(w.week.start * 1000).toISOString().slice(0, 10)}\
 to ${new Date(w.week.end * 1000).toISOString().slice(0, 10)}, blocks ${w.week.first_block ?? "none"}\
–${w.week.last_block ?? ""})</small>: ${w.status}</h3>
${scroll(
  `Tokens of ${w.week.label}`,
  html`<table class="tokens"><tr><th class="l">Token</th><th>Received</th><th>Trades</th><th>Outside</th>\
<th>Carried in</th>\
<th>Pool</th><th class="l">Status</th>${BUCKETS.map((b) => html`<th>Booked ${b}</th>`)}<th>Carried out</th>\
<th>Value (USD)</th></tr>
${w.tokens.map(
  (t) => html`<tr><td class="l">${t.symbol}</td><td>${units(t.received, t.decimals)}</td>\
<td>${t.trades}</td><td>${units(t.outside, t.decimals)}</td><td>${units(t.carried_in, t.decimals)}</td>\
<td>${units(t.pool, t.decimals)}</td>\
<td class="l">${t.status}</td>${bucketCells(t.booked, t.decimals)}<td>${units(t.carried_out, t.decimals)}</td>\
<td>${t.value_usd ?? "unpriced"}</td></tr>`,
)}
</table>`,
)}
${transfersList(a, w.transfers)}
<p>Reconciliation: <span class="${r.status === "agrees" ? "ok" : "bad"}">${r.status}</span> (ETH by ${r.eth}\
)${r.accepted ? html`: ${r.accepted}` : ""}${w.hash ? html` · hash <code>${w.hash}</code>` : ""}</p>
</section>`;
}

/** What the record is: the wallet, the split, the buckets, the integrity check and how to verify it. */
function aboutSection(a: TreasuryAnswer): Html {
  const i = a.integrity;
  return html`<p>Every fee reaches the platform wallet <code>${a.platform_wallet}</code>\
. Each week, ending Monday 00:00 UTC, what came in is split ${BUCKETS.map(
    (b) => `${a.split_bps[b] / 100}% ${b}\
`,
  ).join(", ")}.</p>
<p>Buckets: ${BUCKETS.map(
    (b) =>
      html`${b} ${
        a.buckets[b]
          ? html`<code>${a.buckets[b]}</code>\
`
          : "held in the platform wallet"
      }; `,
  )}</p>
<p id="integrity">Integrity: ${
    i.ok
      ? html`<span class="ok">ok</span>, ${i.rows} rows, head <code>${i.head}</code>\
`
      : html`<span class="bad">broken at row ${i.broken_at}</span>: ${i.why}. Rows from it on are not shown.`
  }</p>
<p>Check it yourself: <code>npm run treasury:verify -- &lt;base_url&gt; &lt;rpc_url&gt;</code>;\
 the JSON is at <a href="/api/v1/treasury">/api/v1/treasury</a>.</p>`;
}

/**
 * The weeks drawn (inflow, then the split) with the same numbers in a table: a chart for the eye, the
 * table for the reader and the screen reader.
 */
function chartsSection(a: TreasuryAnswer): Html {
  if (!a.weeks.length) return html``;
  const sums = weekSums(a.weeks);
  return html`<section id="charts" aria-labelledby="charts-h"><h2 id="charts-h">Week by week</h2>
${raw(inflowChart(sums))}${raw(splitChart(sums))}
${scroll(
  "Week by week in USD",
  html`<table id="week-sums"><tr><th class="l">Week</th><th>Trade fees (USD)</th><th>From outside (USD)</th>\
${BUCKETS.map((b) => html`<th>Booked ${b} (USD)</th>`)}<th class="l">Not priced</th></tr>
${sums.map(
  (s) => html`<tr data-seq="${s.seq}"><td class="l">${s.label}</td><td>${dollars(s.fees)}</td>\
<td>${dollars(s.outside)}</td>${BUCKETS.map((b) => html`<td>${dollars(s.booked[b])}</td>`)}\
<td class="l">${s.unpriced.join(", ") || "–"}</td></tr>`,
)}</table>`,
)}
<p><small>USD at each week's own marks; a token without a mark is left out and named.</small></p></section>`;
}

/** GET /treasury: the record as HTML, server-rendered, no script; every third-party string escaped by hono/html. */
export function treasuryPage(a: TreasuryAnswer): Html {
  const at = new Date(a.generated_at * 1000).toISOString();
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">\
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Treasury record</title>${STYLE}</head><body>
<header>${raw(SITE_NAV)}</header>
<main>
<h1>Treasury record</h1>
${aboutSection(a)}
${chartsSection(a)}
<section id="totals-s" aria-labelledby="totals-h"><h2 id="totals-h">Totals</h2>${totalsTable(a.totals)}</section>
<section id="weeks" aria-labelledby="weeks-h"><h2 id="weeks-h">Weeks</h2>\
${a.weeks.length ? a.weeks.map((w) => weekSection(a, w)) : html`<p>No weeks yet.</p>`}</section>
</main>
<footer><p id="updated"><small>Updated at <time datetime="${at}">${at}</time>. \
<a href="/treasury">Reload</a> for newer numbers.</small></p></footer>
</body></html>`;
}
