import { z } from "zod";
import { Refusal } from "../errors/index.js";
import { KEYED } from "../errors/groups.js";
import { route } from "../http/route.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Tokens } from "./registry.js";

/** What SPEC "Tokens" reads: the registry's counts, a record (screened on demand) and its search. */
export type TokensService = Pick<Tokens, "stats" | "get" | "search">;

const KINDS = ["core", "stock", "partner_agent", "launchpad", "bridged", "erc20"];
const TIERS = ["A", "B", "C", "blocked"];

function onlyQuery(q: Record<string, string>, allowed: string[]) {
  const extra = Object.keys(q).filter((k) => !allowed.includes(k));
  if (extra.length)
    throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes ${allowed.join(", ")}`);
}

function shieldParam(v: string | undefined): boolean {
  if (v === undefined || v === "0") return false;
  if (v === "1") return true;
  throw new Refusal("BAD_REQUEST", "shield must be 1");
}

/**
 * The queries' shapes as the handlers check them by hand (documented only: their own checks answer
 * each parameter's refusal in its own words, and shield=0 is taken though undocumented).
 */
const searchQuery = z
  .object({
    q: z.string().max(64).optional(),
    tier: z.string().optional(),
    kind: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    shield: z.enum(["1"]).optional(),
  })
  .strict();
const recordQuery = z.object({ shield: z.enum(["1"]).optional() }).strict();

/** The MCP tool's arguments: the search's query, shield as a boolean (sent as `1`). */
const searchInput = z.object({
  q: z.string().max(64).optional().describe("name, symbol or address prefix"),
  tier: z.string().optional(),
  kind: z.string().optional(),
  limit: z.number().int().min(1).max(100).optional(),
  shield: z.boolean().optional(),
});

/** SPEC.md "Tokens (key)": a fixed path (/tokens/stats) before the parameter that would match it. */
export const tokenRoutes = [
  route<TokensService>({
    method: "get",
    path: "/tokens/stats",
    auth: "key",
    limits: [],
    summary: "Counts of the token registry",
    answer: ["total", "tradable", "by_tier"],
    errors: [...KEYED, "STATS_PENDING"],
    handle: ({ query }, s) => {
      onlyQuery(query, []);
      return s.stats();
    },
  }),
  route<TokensService>({
    method: "get",
    path: "/tokens/{address}",
    auth: "key",
    limits: [
      ["tokenScreen", RATE_RULES.tokenScreen, "key"],
      ["tokenScreen", RATE_RULES.tokenScreenClient, "client"],
    ],
    summary: "A token record, screened on demand",
    documents: { query: recordQuery },
    answer: ["address", "screen_status", "tradable"],
    errors: [
      ...KEYED,
      "ADDRESS_REQUIRED",
      "NOT_A_TOKEN",
      "UNKNOWN_TOKEN",
      "TOKEN_CHANGED",
      "SCREEN_UNAVAILABLE",
      "REGISTRY_UNAVAILABLE",
      "REPORT_UNAVAILABLE",
    ],
    handle: ({ query, param, c }, s) => {
      onlyQuery(query, ["shield"]);
      return s.get(param("address"), {
        shield: shieldParam(query.shield),
        keyId: c.get("key").keyId,
        clientAddr: c.get("clientAddr"),
      });
    },
  }),
  route<TokensService>({
    method: "get",
    path: "/tokens",
    auth: "key",
    limits: [
      ["tokenSearch", RATE_RULES.tokenSearch, "key"],
      ["tokenSearch", RATE_RULES.tokenSearchClient, "client"],
    ],
    summary: "Token search (never screens)",
    documents: { query: searchQuery },
    answer: ["query", "tokens", "count"],
    errors: [...KEYED, "REGISTRY_UNAVAILABLE", "REPORT_UNAVAILABLE"],
    mcp: {
      name: "tokens",
      description: "Token search (GET /api/v1/tokens): never screens.",
      input: searchInput,
      readOnly: true,
    },
    handle: ({ query }, s) => {
      onlyQuery(query, ["q", "tier", "kind", "limit", "shield"]);
      if (query.q !== undefined && (query.q.length === 0 || query.q.length > 64))
        throw new Refusal("BAD_REQUEST", "q must be 1 to 64 characters");
      if (query.tier !== undefined && !TIERS.includes(query.tier))
        throw new Refusal("BAD_REQUEST", `tier must be one of ${TIERS.join(", ")}`);
      if (query.kind !== undefined && !KINDS.includes(query.kind))
        throw new Refusal("BAD_REQUEST", `kind must be one of ${KINDS.join(", ")}`);
      const lim = query.limit === undefined ? 20 : Number(query.limit);
      if (!Number.isInteger(lim) || lim < 1 || lim > 100 || !/^\d+$/.test(query.limit ?? "20"))
        throw new Refusal("BAD_REQUEST", "limit must be an integer from 1 to 100");
      return s.search({
        q: query.q,
        tier: query.tier,
        kind: query.kind,
        limit: lim,
        shield: shieldParam(query.shield),
      });
    },
  }),
];
