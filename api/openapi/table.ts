import { z, type ZodTypeAny } from "zod";
import { CATALOGUE, type Code } from "../errors/index.js";
import { fastRequest } from "../fast/index.js";
import { hostedAttestationBody, hostedCreateRequest, hostedSessionBody, hostedUpdateRequest, ownConnect } from "../hosted/index.js";
import { confirmBody, enterBody, leaveBody, standingsQuery, statementBody } from "../league/index.js";
import { grantRequest, sessionRevokeRequest, sessionTradeRequest, switchOnRequest } from "../sessions/index.js";
import { revokeRequest, submitRequest, tradeRequest } from "../trading/index.js";

/** Who may call a route (SPEC "Authentication"). */
export type Auth = "none" | "key" | "key(wallet)" | "signature";
/** One route of the API as the OpenAPI document describes it. */
export type RouteDoc = {
  method: "get" | "post";
  path: string;
  auth: Auth;
  summary: string;
  /** The zod schema the route validates its JSON body (or query) with. */
  body?: ZodTypeAny;
  query?: ZodTypeAny;
  /** The answer's top-level fields every success carries (SPEC's payload lists). */
  answer: string[];
  status?: 200 | 201;
  errors: Code[];
  /** Not in SPEC: served beyond it (README says why). */
  extra?: boolean;
  /** A status that also answers the success's shape (health: 503 when down). */
  alsoAnswers?: 503;
};

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/);
/** Requests whose routes read fields by hand (sign-in) get their shape here, as the code checks it. */
const challenge = z.object({ address, purpose: z.enum(["revoke-all"]).optional() }).strict();
const verify = z.object({ address, signature, nonce: z.string().optional() }).strict();
const tokensQuery = z.object({ q: z.string().max(64).optional(), tier: z.string().optional(), kind: z.string().optional(), limit: z.coerce.number().int().min(1).max(100).optional(), shield: z.enum(["1"]).optional() }).strict();
const logsQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional(), before: z.coerce.number().int().optional(), kinds: z.string().optional() }).strict();
const tradesQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).optional(), before: z.coerce.number().int().optional(), refused: z.enum(["1"]).optional() }).strict();
const empty = z.object({}).strict();

/** Catalogue codes from `first` to `last`: the catalogue keeps SPEC's error tables in SPEC's order, one table after another. */
function between(first: Code, last: Code): Code[] {
  const codes = Object.keys(CATALOGUE) as Code[];
  const [a, b] = [codes.indexOf(first), codes.indexOf(last)];
  if (a < 0 || b < a) throw new Error(`no catalogue run from ${first} to ${last}`);
  return codes.slice(a, b + 1);
}
/** The edge answers any route may give: request checks, host, country, rate, engine and an unexpected failure. */
export const EDGE: Code[] = ["BAD_REQUEST", "LENGTH_REQUIRED", "UNKNOWN_HOST", "COUNTRY_BLOCKED", "CSRF_REFUSED", "RATE_LIMITED", "ENGINE_UNAVAILABLE", "INTERNAL"];
const KEYED: Code[] = ["UNAUTHORIZED", "SANCTIONED", "RPC_UNAVAILABLE"];
const WALLET: Code[] = [...KEYED, "WALLET_NOT_BOUND", "WALLET_MISMATCH"];
/** SPEC "Tokens", "Risk and policy", "Curve trades" and "Relay": what a trade can be refused for. */
const TRADING: Code[] = [...WALLET, "UNKNOWN_FIELD", "BAD_SIGNATURE", "TOKEN_UNKNOWN", "UNKNOWN_TOKEN", "NOT_A_TOKEN", ...between("NO_ROUTE", "LIVE_UNAVAILABLE")];
const FAST: Code[] = [...TRADING, ...between("FAST_DISABLED", "IN_FLIGHT")];
/** SPEC "Sessions" and "Co-signer refusals". */
const SESSIONS: Code[] = [...TRADING, ...between("NO_SESSION", "REFUSED"), "BAD_SIGNATURE", "EXECUTOR_CLOSED"];
/** SPEC "Hosted agents". */
const HOSTED: Code[] = [...WALLET, "UNKNOWN_FIELD", "NOT_FOUND", "FORBIDDEN", "BAD_SIGNATURE", "SUBMIT_DISABLED", "SIGNER_REQUIRED", "SIGNER_UNAVAILABLE", "NO_MARK", "NO_SESSION", "SESSION_PENDING", "SESSION_REVOKED", "SESSION_EXPIRED", ...between("REFUND_REFUSED", "NOT_AI")];

/** Every route the app serves under /api/v1 (the contract test checks the app's own list against it). */
export const ROUTES: RouteDoc[] = [
  { method: "get", path: "/config", auth: "none", summary: "The server's pinned configuration", answer: ["chain_id", "version", "auth", "router", "permit_contract", "tokens", "fee"], errors: ["RATE_LIMITED"] },
  { method: "get", path: "/health", auth: "none", summary: "Health of the chain, indexer and database", answer: ["status", "service", "version"], errors: ["RATE_LIMITED"], alsoAnswers: 503 },
  { method: "get", path: "/stats", auth: "none", summary: "Shared market statistics (rebuilt at most every 5 s)", answer: ["status", "generated_at", "cached_s"], errors: ["RATE_LIMITED"] },
  { method: "get", path: "/treasury", auth: "none", summary: "The public treasury record", answer: ["platform_wallet", "buckets", "split_bps", "integrity", "weeks", "totals", "prize_payouts"], errors: ["RATE_LIMITED"] },
  { method: "post", path: "/auth/challenge", auth: "none", summary: "A sign-in (or revoke-all) challenge", body: challenge, answer: ["message", "nonce"], errors: ["BAD_REQUEST", "AUTH_DOMAIN_UNSET", "RATE_LIMITED", "SANCTIONED"] },
  { method: "post", path: "/auth/verify", auth: "none", summary: "A signed challenge for an API key", body: verify, answer: ["api_key", "key_id", "expires_at", "wallet"], errors: ["BAD_REQUEST", "CHALLENGE_EXPIRED", "BAD_SIGNATURE", "NOT_PARTNER_AGENT", "PARTNER_UNAVAILABLE", "RATE_LIMITED", "SANCTIONED", "SIGNUP_CAPPED", "KEYS_CAPPED", "AUTH_DOMAIN_UNSET"] },
  { method: "get", path: "/auth/me", auth: "key", summary: "The key's wallet and account", answer: ["wallet", "key_id", "expires_at"], errors: KEYED },
  { method: "post", path: "/auth/revoke", auth: "key", summary: "Revokes the calling key", answer: ["revoked", "key_id"], errors: KEYED },
  { method: "post", path: "/auth/revoke-all", auth: "signature", summary: "Revokes every key of a wallet with its signature", body: verify, answer: ["wallet", "revoked"], errors: ["BAD_REQUEST", "BAD_SIGNATURE", "CHALLENGE_EXPIRED", "RATE_LIMITED"] },
  { method: "get", path: "/tokens", auth: "key", summary: "Token search (never screens)", query: tokensQuery, answer: ["query", "tokens", "count"], errors: [...KEYED, "REGISTRY_UNAVAILABLE", "REPORT_UNAVAILABLE"] },
  { method: "get", path: "/tokens/stats", auth: "key", summary: "Counts of the token registry", answer: ["total", "tradable", "by_tier"], errors: [...KEYED, "STATS_PENDING"] },
  { method: "get", path: "/tokens/{address}", auth: "key", summary: "A token record, screened on demand", query: z.object({ shield: z.enum(["1"]).optional() }).strict(), answer: ["address", "screen_status", "tradable"], errors: [...KEYED, "ADDRESS_REQUIRED", "NOT_A_TOKEN", "UNKNOWN_TOKEN", "TOKEN_CHANGED", "SCREEN_UNAVAILABLE", "REGISTRY_UNAVAILABLE", "REPORT_UNAVAILABLE"] },
  { method: "post", path: "/live/quote", auth: "key", summary: "Routes and marks for a trade (read-only)", body: tradeRequest, answer: ["token_in", "token_out", "best", "routes"], errors: TRADING },
  { method: "post", path: "/live/prepare", auth: "key(wallet)", summary: "A plan for the wallet to sign: transactions, fee, checks, simulation", body: tradeRequest, answer: ["ready", "tx", "steps", "amount_in", "amount_out_min", "fee_bps", "fee_class"], errors: TRADING },
  { method: "post", path: "/live/build", auth: "key(wallet)", summary: "A plan built without simulation", body: tradeRequest, answer: ["tx", "amount_in", "amount_out_min"], errors: TRADING },
  { method: "post", path: "/live/simulate", auth: "key", summary: "A trade simulated against the chain", body: tradeRequest, answer: ["ok"], errors: TRADING },
  { method: "post", path: "/live/submit", auth: "key(wallet)", summary: "Relays a transaction the service built for this key", body: submitRequest, answer: ["tx_hash", "as_built"], errors: [...TRADING, "NONCE", "IN_FLIGHT"] },
  { method: "post", path: "/live/revoke", auth: "key(wallet)", summary: "Transactions that revoke the wallet's approvals", body: revokeRequest, answer: ["steps", "before", "ready", "nothing_to_revoke"], errors: TRADING },
  { method: "get", path: "/live/fast/terms", auth: "key", summary: "Fast mode's pinned route table", answer: ["enabled", "routes", "fee", "base_fee_wei"], errors: WALLET },
  { method: "post", path: "/live/fast", auth: "key(wallet)", summary: "A fast-mode trade from the pinned table", body: fastRequest, answer: ["tx_hash", "relayed", "repeat"], errors: FAST },
  { method: "post", path: "/live/session/grant", auth: "key(wallet)", summary: "Starts a session grant, or switches it on with the wallet's signatures", body: z.union([grantRequest, switchOnRequest]), answer: ["session_id", "status"], errors: SESSIONS },
  { method: "post", path: "/live/session/trade", auth: "key", summary: "A co-signed trade within a session", body: sessionTradeRequest, answer: ["session_id", "ready", "tx"], errors: SESSIONS },
  { method: "post", path: "/live/session/revoke", auth: "key(wallet)", summary: "Revokes a session for every key", body: sessionRevokeRequest, answer: ["session_id", "status"], errors: SESSIONS },
  { method: "get", path: "/me/portfolio", auth: "key(wallet)", summary: "The wallet's holdings at independent marks", answer: ["wallet", "block", "holdings", "total_usd", "volume"], errors: [...WALLET, "RPC_UNAVAILABLE", "LIVE_UNAVAILABLE"] },
  { method: "get", path: "/me/trades", auth: "key(wallet)", summary: "The wallet's trades, newest first", query: tradesQuery, answer: ["wallet", "trades", "next_before"], errors: [...WALLET, "BAD_REQUEST"] },
  { method: "get", path: "/me/sessions", auth: "key(wallet)", summary: "The wallet's sessions and hosted agents", answer: ["wallet"], errors: WALLET },
  { method: "get", path: "/hosted", auth: "key(wallet)", summary: "The wallet's hosted agents", answer: ["agents"], errors: WALLET },
  { method: "post", path: "/hosted", auth: "key(wallet)", summary: "Creates a hosted agent", body: hostedCreateRequest, status: 201, answer: ["id", "brain", "mode", "status"], errors: [...HOSTED, "TOKEN_NOT_ALLOWED", "LEAGUE_PAIRS", "LEAGUE_INTERVAL"] },
  { method: "get", path: "/hosted/ai", auth: "key(wallet)", summary: "The AI-model brain's models, pool and funding", answer: ["models"], errors: WALLET },
  { method: "post", path: "/hosted/ai/own", auth: "key(wallet)", summary: "Connects the owner's own gateway key", body: ownConnect, answer: [], errors: HOSTED, extra: true },
  { method: "post", path: "/hosted/ai/own/disconnect", auth: "key(wallet)", summary: "Disconnects the owner's own gateway key", body: empty, answer: [], errors: HOSTED, extra: true },
  { method: "get", path: "/hosted/{id}", auth: "key(wallet)", summary: "One hosted agent", answer: ["id", "status"], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/update", auth: "key(wallet)", summary: "Changes an agent's settings", body: hostedUpdateRequest, answer: ["id"], errors: [...HOSTED, "TOKEN_NOT_ALLOWED", "LEAGUE_PAIRS", "LEAGUE_INTERVAL"] },
  { method: "post", path: "/hosted/{id}/pause", auth: "key(wallet)", summary: "Pauses an agent", body: empty, answer: ["id", "status"], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/resume", auth: "key(wallet)", summary: "Resumes an agent", body: empty, answer: ["id", "status"], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/stop", auth: "key(wallet)", summary: "Stops an agent (it leaves the league)", body: empty, answer: ["id", "status"], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/delete", auth: "key(wallet)", summary: "Deletes an agent", body: empty, answer: [], errors: HOSTED },
  { method: "get", path: "/hosted/{id}/logs", auth: "key(wallet)", summary: "Why the agent did or did not trade", query: logsQuery, answer: ["id", "rows", "next_before"], errors: [...HOSTED, "BAD_REQUEST"] },
  { method: "get", path: "/hosted/{id}/spend", auth: "key(wallet)", summary: "An AI agent's spend", query: logsQuery, answer: [], errors: [...HOSTED, "NOT_AI"] },
  { method: "get", path: "/hosted/{id}/executor", auth: "key(wallet)", summary: "A live agent's executor", answer: [], errors: [...HOSTED, "NO_EXECUTOR"] },
  { method: "post", path: "/hosted/{id}/session", auth: "key(wallet)", summary: "Attaches a session to a live agent's executor", body: hostedSessionBody, answer: [], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/rotate-executor", auth: "key(wallet)", summary: "A new executor for a live agent", body: empty, answer: [], errors: [...HOSTED, "PAPER_AGENT"] },
  { method: "post", path: "/hosted/{id}/rotate-webhook-secret", auth: "key(wallet)", summary: "A new webhook secret", body: empty, answer: [], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/stock-attestation", auth: "key(wallet)", summary: "The owner's stock-token attestation", body: hostedAttestationBody, answer: [], errors: [...HOSTED, "BAD_REQUEST", "BAD_SIGNATURE"] },
  { method: "post", path: "/hosted/{id}/stock-attestation/revoke", auth: "key(wallet)", summary: "Revokes the stock-token attestation", body: empty, answer: [], errors: HOSTED },
  { method: "post", path: "/hosted/{id}/refund-gas", auth: "key(wallet)", summary: "Returns a live agent's executor gas to the owner", body: empty, answer: [], errors: [...HOSTED, "SUBMIT_DISABLED"] },
  { method: "get", path: "/league", auth: "none", summary: "The calendar, the reserve and the rules", answer: ["season", "next_season", "entrants", "practice_entrants", "schedule", "reserve", "rules", "past", "now"], errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"] },
  { method: "get", path: "/league/standings", auth: "none", summary: "A board's standings for a season", query: standingsQuery, answer: ["board", "season", "status", "rows", "outcome", "places", "amounts_atoms", "amounts_basis", "decided", "entrants_next", "now"], errors: ["BAD_REQUEST", "NO_SEASON", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"] },
  { method: "get", path: "/league/seasons", auth: "none", summary: "Every season, newest first", answer: ["seasons", "now"], errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"] },
  { method: "get", path: "/league/seasons/{n}", auth: "none", summary: "One season: standings, ledger, payouts, winners", answer: ["board", "season", "rows", "ledger", "withdrawal", "payouts", "winners", "settled_at"], errors: ["NO_SEASON", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"] },
  { method: "get", path: "/league/seasons/{n}/books", auth: "none", summary: "A season's published inputs for league:verify", answer: ["season", "decided", "books"], errors: ["NO_SEASON", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"], extra: true },
  { method: "get", path: "/league/reserve", auth: "none", summary: "The prize reserve's ledger by season", answer: ["on", "agent_id", "rows", "estimate", "rules"], errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"] },
  { method: "get", path: "/league/me", auth: "key(wallet)", summary: "The wallet's league entries", answer: ["wallet", "entries"], errors: WALLET },
  { method: "post", path: "/league/statement", auth: "key(wallet)", summary: "The statement an agent's owner signs to enter or confirm", body: statementBody, answer: ["message", "nonce", "expires_at", "agent_id", "board", "entrant", "owner"], errors: [...WALLET, "BAD_REQUEST", "UNKNOWN_FIELD", "FORBIDDEN", "NOT_FOUND", "NOT_AN_AGENT", "NOT_OWNER", "AGENT_ENTERED", "ALREADY_ENTERED", "PRIZE_IS_LIVE", "LEAGUE_PAPER_ONLY", "LEAGUE_PAIRS", "LEAGUE_INTERVAL", "SANCTIONED", "LEAGUE_UNAVAILABLE"] },
  { method: "post", path: "/league/enter", auth: "key(wallet)", summary: "Enters a board from the next season", body: enterBody, status: 201, answer: ["entry_id", "board", "agent_id", "status", "from_season", "confirmed", "note"], errors: [...WALLET, "BAD_REQUEST", "UNKNOWN_FIELD", "STATEMENT_EXPIRED", "STATEMENT_MISMATCH", "BAD_SIGNATURE", "NOT_OWNER", "FORBIDDEN", "NOT_AN_AGENT", "NOT_FOUND", "AGENT_ENTERED", "ALREADY_ENTERED", "PRIZE_IS_LIVE", "LEAGUE_DIVISION", "LEAGUE_PAPER_ONLY", "LEAGUE_PAIRS", "LEAGUE_INTERVAL", "STOPPED", "SANCTIONED", "LEAGUE_UNAVAILABLE", "HOSTED_UNAVAILABLE"] },
  { method: "post", path: "/league/confirm", auth: "key(wallet)", summary: "Confirms a prize entry with the owner's signed statement", body: confirmBody, answer: ["entry_id", "confirmed"], errors: [...WALLET, "BAD_REQUEST", "UNKNOWN_FIELD", "STATEMENT_EXPIRED", "STATEMENT_MISMATCH", "BAD_SIGNATURE", "NOT_OWNER", "FORBIDDEN", "NOT_ENTERED", "SANCTIONED"] },
  { method: "post", path: "/league/leave", auth: "key(wallet)", summary: "Leaves a board at once", body: leaveBody, answer: ["entry_id", "status"], errors: [...WALLET, "BAD_REQUEST", "FORBIDDEN", "NOT_ENTERED"] },
];
