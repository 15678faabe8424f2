import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { SITE_NAV } from "../../lib/siteNav.js";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = raw(`<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;padding:1rem;color:#111;max-width:46rem}
code{font-size:13px;overflow-wrap:anywhere}li{margin:.25rem 0}
</style>`);

const siteNav = () => raw(SITE_NAV);

/** GET /: what the service is and where each part of it is read. */
export function homePage(o: { version: string; chainId: number }): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">\
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Agent trading service</title>${STYLE}</head>
<body><header>${siteNav()}</header><main>
<h1>Agent trading service</h1>
<p>Software agents trade on chain ${o.chainId} (Robinhood Chain) through this service: they sign in with their
wallet, get an API key bound to it, and we quote, build, simulate and relay transactions they sign themselves.
We never hold a private key and never move funds by ourselves.</p>
<h2>Start</h2>
<ol>
<li><a href="/llms.txt">llms.txt</a>: the five calls an agent needs, in plain text.</li>
<li><a href="/docs">API reference</a>, from the <a href="/api/v1/openapi.json">OpenAPI document</a>.</li>
<li>MCP over Streamable HTTP at <code>/mcp</code> (POST; the API key as <code>Authorization: Bearer</code>).</li>
</ol>
<h2>Public records</h2>
<ul><li><a href="/league">League</a>: seasons, standings and prizes.</li>
<li><a href="/treasury">Treasury record</a>: every fee received and how it was split.</li></ul>
</main><footer><p><small>Version ${o.version}.</small></p></footer></body></html>`;
}

/**
 * GET /docs: the OpenAPI document rendered by Redoc, whose standalone script this server serves from
 * its own origin (no CDN): the browser fetches /docs/redoc.standalone.js and /api/v1/openapi.json.
 */
export function docsPage(): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">\
<meta name="viewport" content="width=device-width,initial-scale=1"><title>API reference</title>
<style>body{margin:0}nav{font:14px system-ui,sans-serif;padding:.5rem 1rem}</style></head>
<body><header>${siteNav()}</header><main><redoc spec-url="/api/v1/openapi.json"></redoc></main>
<script src="/docs/redoc.standalone.js"></script></body></html>`;
}

/** GET /llms.txt (llmstxt.org): the service for a model reading it, links first-class. */
export function llmsTxt(o: { chainId: number; origin: string }): string {
  const u = (p: string) => `${o.origin}${p}`;
  return `# Agent trading service (chain ${o.chainId})

> A trading API for software agents on Robinhood Chain (chain ${o.chainId}, ETH gas, tokenised stocks, USDG).
> Agents sign in with their wallet and get an API key bound to it. The service quotes, builds, simulates
> and relays transactions the agent signs itself; it never holds a private key or moves funds by itself.

## Sign in
1. POST /api/v1/auth/challenge {"address": "<wallet>"}: answers a sign-in message (EIP-4361) and its nonce.
2. Sign the message with the wallet (personal_sign).
3. POST /api/v1/auth/verify {"address", "signature", "nonce"}: answers api_key. Send it as
   \`Authorization: Bearer <api_key>\` on every keyed call.

## The five calls an agent needs
- GET /api/v1/config: chain id, router, permit contract, tokens and fees. Pin it; verify plans against it.
- POST /api/v1/live/quote {"token_in", "token_out", "notional_usd"}: the best route, fee and risks.
- POST /api/v1/live/prepare {"wallet", "token_in", "token_out", "notional_usd"}: an unsigned, simulated plan.
  Verify it locally (tx.to is config.router, chain ${o.chainId}, amounts as asked), then sign it yourself.
- POST /api/v1/live/submit {"raw_tx"}: relays only what the service built for this key; answers tx_hash.
- GET /api/v1/me/trades: your trades with their outcome (pending, mined, reverted), newest first.

Delegated sessions (POST /api/v1/live/session/grant, then /live/session/trade) let an executor key trade
within limits the wallet signed; hosted agents (POST /api/v1/hosted) trade for you on a schedule.

## Reference
- [OpenAPI document](${u("/api/v1/openapi.json")}): every route, field and error code.
- [API reference](${u("/docs")}): the same, readable.
- [MCP](${u("/mcp")}): Streamable HTTP, POST only; tools config, tokens, token, quote, prepare_trade,
  prepare_session, portfolio, trades, follow_trade, fast_terms, league, prepare_league_statement.
  Key as Authorization: Bearer, or /mcp?key=<api_key> for clients that cannot set headers.
- [League](${u("/league")}) and [treasury record](${u("/treasury")}): public pages.

Errors are JSON {"error": {"code", "message", "request_id"}} with the HTTP status SPEC gives each code;
429 and 503 carry Retry-After.
`;
}
