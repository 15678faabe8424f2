import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * The MCP server (issue 19 part 3): every tool is one or two calls to the app's own REST routes,
 * made as the MCP caller (its headers, its API key), so validation, rate limits and error codes
 * are the REST ones unchanged. It never holds, asks for or receives a private key: prepare_trade
 * answers an unsigned plan the agent verifies and signs itself.
 */

/** One call to the app's REST API as the MCP caller; the answer's status and JSON body. */
export type RestCall = (method: "GET" | "POST", path: string, body?: Record<string, unknown>) => Promise<{ status: number; json: unknown }>;

export const SIGN_GRANT_NOTE =
  "Unsigned session grant: this server never holds or asks for a private key. Before signing, rebuild the delegation locally (delegate, caveats, " +
  "limits, expiry, co-signer, and any EIP-7702 authorization changing your wallet's code), e.g. with @pit/sdk grantSession which checks GRANT_BINDING " +
  "and GRANT_CAPS. Sign the typed data with your own wallet, then POST /api/v1/live/session/grant again with session_id, delegation_signature " +
  "and (for a plain wallet) authorization_signature.";
export const SIGN_STATEMENT_NOTE =
  "Unsigned league statement: the owner of the partner agent signs this exact text with personal_sign (EIP-191) in their own wallet, after " +
  "reading it (it states eligibility: 18 or older, not a US person, not sanctioned), then sends it to POST /api/v1/league/enter or /league/confirm.";

export const SIGN_LOCALLY_NOTE =
  "Unsigned plan: this server never holds or asks for a private key. Before signing, verify it locally (chain_id 4663; tx.to is config.router, " +
  "or for steps each tx's target; fee recipient is config.fee.recipient; amounts and amount_out_min are what you asked), e.g. with @pit/sdk which " +
  "re-derives the plan from its calldata. Sign with your own wallet (steps in order, permit typed data if asked), then send the signed raw " +
  "transaction(s) to POST /api/v1/live/submit with the same API key.";

const READ = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

const sizeFields = {
  token_in: z.string().describe("core symbol (ETH, USDG, ...) or token address"),
  token_out: z.string().describe("core symbol or token address"),
  notional_usd: z.number().positive().optional().describe("size in dollars (this or amount_in)"),
  amount_in: z.string().optional().describe("size in input atoms, decimal string (this or notional_usd)"),
  slippage_bps: z.number().int().optional(),
  venues: z.array(z.string()).optional(),
  accept_risks: z.array(z.string()).optional().describe("severe risk codes accepted"),
  shield: z.boolean().optional(),
  policies: z.array(z.string()).optional(),
};

// passthrough: the REST route, not this schema, decides which other fields are allowed.
const quoteInput = z.object({ ...sizeFields, fast: z.boolean().optional() }).passthrough();
const prepareInput = z
  .object({
    wallet: z.string().describe("your wallet address: must be the API key's wallet"),
    ...sizeFields,
    min_amount_out: z.string().optional(),
    approval_mode: z.enum(["budget", "exact", "unlimited"]).optional(),
    approval_budget_usd: z.number().optional(),
    allow_unlimited_approval: z.boolean().optional(),
    permit_mode: z.enum(["signature", "transaction"]).optional(),
    permit_scope: z.enum(["trade", "30d"]).optional(),
    permit_signature: z.string().optional().describe("second call of the permit round trip: your signature of the plan's permit typed data"),
    permit_now: z.number().optional(),
    route_id: z.string().optional(),
    fund: z.union([z.literal("auto"), z.boolean()]).optional(),
    curve_fee_mode: z.enum(["auto", "batch", "two_step"]).optional(),
    owner_attests_non_us: z.boolean().optional(),
    max_fee_bps: z.number().int().optional(),
  })
  .passthrough();
const tokensInput = z.object({
  q: z.string().max(64).optional().describe("name, symbol or address prefix"),
  tier: z.string().optional(),
  kind: z.string().optional(),
  limit: z.number().int().min(1).max(100).optional(),
  shield: z.boolean().optional(),
});
const tradesInput = z.object({ limit: z.number().int().min(1).max(100).optional(), before: z.number().int().optional(), refused: z.boolean().optional() });
const leagueInput = z.object({ season: z.number().int().optional(), board: z.enum(["prize", "practice"]).optional() });
const grantInput = z
  .object({
    wallet: z.string().describe("your wallet address: must be the API key's wallet"),
    executor: z.string().describe("the address that will trade for you within the session's limits"),
    tokens: z.array(z.string()).optional(),
    max_trade_usd: z.number().optional(),
    max_day_usd: z.number().optional(),
    max_trades: z.number().optional(),
    expires_in_s: z.number().optional(),
    accept_risks: z.array(z.string()).optional(),
    shield: z.boolean().optional(),
  })
  .passthrough();
const statementInput = z.object({ agent_id: z.number().int().describe("your partner agent's id"), board: z.enum(["prize", "practice"]).optional(), hosted_id: z.string().optional() }).passthrough();
const fastTermsInput = z.object({ shield: z.boolean().optional() });

/** A query string of the given values; booleans as the REST flag `1` (false: left out). */
function query(args: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) if (v !== undefined && v !== false) q.set(k, v === true ? "1" : String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The REST answer as the tool's result: its JSON as text, isError for a refusal ({error: {code, message}}). */
function result(r: { status: number; json: unknown }, ...notes: string[]): CallToolResult {
  const isError = r.status >= 400;
  return { content: [{ type: "text", text: JSON.stringify(r.json) }, ...(isError ? [] : notes.map((text) => ({ type: "text" as const, text })))], isError };
}

/** A server for one MCP request: its tools call REST through `rest`, bound to that request's caller. */
export function mcpServer(rest: RestCall, version: string): McpServer {
  const server = new McpServer({ name: "pit-trading-service", version }, { capabilities: { tools: {} } });
  const tool = server.registerTool.bind(server);
  const keyed = "Needs the API key: send Authorization: Bearer pit_w_... on the MCP HTTP requests (without it: UNAUTHORIZED).";

  tool("config", { description: "Server configuration (GET /api/v1/config): chain 4663, router, tokens, fees, limits. Pin it.", inputSchema: z.object({}), annotations: READ }, async () =>
    result(await rest("GET", "/api/v1/config")),
  );
  tool("tokens", { description: `Token search (GET /api/v1/tokens): never screens. ${keyed}`, inputSchema: tokensInput, annotations: READ }, async (a) =>
    result(await rest("GET", `/api/v1/tokens${query(a)}`)),
  );
  tool("quote", { description: `Quote a trade (POST /api/v1/live/quote): routes, best, risks, fee. Read-only. ${keyed}`, inputSchema: quoteInput, annotations: READ }, async (a) =>
    result(await rest("POST", "/api/v1/live/quote", a)),
  );
  tool("portfolio", { description: `The key's wallet holdings and 30-day volume (GET /api/v1/me/portfolio). ${keyed}`, inputSchema: z.object({}), annotations: READ }, async () =>
    result(await rest("GET", "/api/v1/me/portfolio")),
  );
  tool("trades", { description: `The key's wallet trades, newest first (GET /api/v1/me/trades). ${keyed}`, inputSchema: tradesInput, annotations: READ }, async (a) =>
    result(await rest("GET", `/api/v1/me/trades${query(a)}`)),
  );
  tool("league", { description: "The league (GET /api/v1/league) and a board's standings (GET /api/v1/league/standings). No key.", inputSchema: leagueInput, annotations: READ }, async (a) => {
    const league = await rest("GET", "/api/v1/league");
    if (league.status >= 400) return result(league);
    const standings = await rest("GET", `/api/v1/league/standings${query(a)}`);
    return standings.status >= 400 ? result(standings) : result({ status: 200, json: { league: league.json, standings: standings.json } });
  });
  tool(
    "prepare_trade",
    { description: `Plan a trade for your own wallet (POST /api/v1/live/prepare): unsigned transaction(s) you verify and sign locally, then submit. ${keyed}`, inputSchema: prepareInput, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    async (a) => result(await rest("POST", "/api/v1/live/prepare", a), SIGN_LOCALLY_NOTE),
  );
  tool("fast_terms", { description: `Fast mode terms for your wallet (GET /api/v1/live/fast/terms): the pinned route table and its sha256, fee, limits. Build fast transactions locally from it. ${keyed}`, inputSchema: fastTermsInput, annotations: READ }, async (a) =>
    result(await rest("GET", `/api/v1/live/fast/terms${query(a)}`)),
  );
  tool(
    "prepare_session",
    { description: `Start a session grant for an executor (POST /api/v1/live/session/grant): unsigned delegation typed data you verify and sign locally. ${keyed}`, inputSchema: grantInput, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    async (a) => result(await rest("POST", "/api/v1/live/session/grant", a), SIGN_GRANT_NOTE),
  );
  tool(
    "prepare_league_statement",
    { description: `The league statement a partner agent's owner signs to enter (POST /api/v1/league/statement). ${keyed}`, inputSchema: statementInput, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    async (a) => result(await rest("POST", "/api/v1/league/statement", a), SIGN_STATEMENT_NOTE),
  );
  return server;
}
