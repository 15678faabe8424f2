import { z } from "zod";
import { inOwnWords, worded } from "../errors/index.js";
import { KEYED } from "../errors/groups.js";
import { onlyQuery } from "../http/query.js";
import { routesFor } from "../http/route.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Tokens } from "./registry.js";
import { tokenRecord, tokenSearchAnswer, tokenStatsAnswer } from "./answers.js";

/** What SPEC "Tokens" reads: the registry's counts, a record (screened on demand) and its search. */
export type TokensService = Pick<Tokens, "stats" | "get" | "search">;

const KINDS = ["core", "stock", "partner_agent", "launchpad", "bridged", "erc20"] as const;
const TIERS = ["A", "B", "C", "blocked"] as const;

/** shield=1 screens with Shield; 0 or nothing does not; anything else is refused in SPEC's words. */
const shield = worded(
  z
    .enum(["0", "1"])
    .optional()
    .transform((v) => v === "1"),
  "shield must be 1",
);
/** GET tokens/{address}'s query, after `first` turned down any other parameter. */
export const recordQuery = z.object({ shield }).strict();
export type RecordParameters = z.infer<typeof recordQuery>;

/** An integer of digits only ("007" is 7, "1e2" is not). */
const limit = inOwnWords(z.coerce.number().int().min(1).max(100).default(20), (v) =>
  v === undefined || (typeof v === "string" && /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 100)
    ? null
    : "limit must be an integer from 1 to 100",
);
/** GET tokens' query (each parameter's refusal in its own words, in this order), after `first`. */
export const searchQuery = z
  .object({
    q: worded(z.string().min(1).max(64).optional(), "q must be 1 to 64 characters"),
    tier: worded(z.enum(TIERS).optional(), `tier must be one of ${TIERS.join(", ")}`),
    kind: worded(z.enum(KINDS).optional(), `kind must be one of ${KINDS.join(", ")}`),
    limit,
    shield,
  })
  .strict();
export type SearchParameters = z.infer<typeof searchQuery>;

/** The MCP tool's arguments: the search's query, shield as a boolean (sent as `1`). */
const searchInput = z
  .object({
    q: z.string().max(64).optional().describe("name, symbol or address prefix"),
    tier: z.string().optional().describe("only this tier (core, verified, listed, unscreened...)"),
    kind: z.string().optional().describe("only this kind of token (stock, launch, ...)"),
    limit: z.number().int().min(1).max(100).optional().describe("rows, 1 to 100 (default 20)"),
    shield: z.boolean().optional().describe("add each token's Shield verdict"),
  })
  .strict();

/** The token tool's arguments: the address in the path, shield as a boolean (sent as `1`). */
const recordInput = z
  .object({
    address: z.string().describe("token address (core assets also by symbol: ETH, USDG, ...)"),
    shield: z.boolean().optional().describe("add the Shield verdict report"),
  })
  .strict();

const route = routesFor<TokensService>({
  name: "Tokens",
  description:
    "The token registry: on-demand screening, tiers, risk disclosures and an optional verdict report (Shield).",
});

/** SPEC.md "Tokens (key)": a fixed path (/tokens/stats) before the parameter that would match it. */
export const tokenRoutes = [
  route({
    method: "get",
    path: "/tokens/stats",
    auth: "key",
    limits: [],
    summary: "Counts of the token registry",
    description:
      "Counts of the token registry: total, tradable, by tier, kind and risk, and blocked tokens by " +
      "reason; counted at most every 30 s (cached_s says how old). 503 STATS_PENDING while the first " +
      "count runs.",
    answer: tokenStatsAnswer,
    errors: [...KEYED, "STATS_PENDING"],
    // Any query parameter is refused; the list it takes is empty.
    first: onlyQuery([]),
    handle: (_, s) => s.stats(),
  }),
  route({
    method: "get",
    path: "/tokens/{address}",
    auth: "key",
    limits: [
      ["tokenScreen", RATE_RULES.tokenScreen, "key"],
      ["tokenScreen", RATE_RULES.tokenScreenClient, "client"],
    ],
    summary: "A token record, screened on demand",
    description:
      "A token's record: what it is (kind, tier), where it trades (venues, reference price), what its " +
      "screen measured (liquidity, taxes, a simulated buy and sell) and its risk disclosures, severe " +
      "first. A token never seen is screened now (within about 8 s; while it runs the record says " +
      "UNSCREENED). Core assets may be named by symbol. With shield=1 the answer carries Shield's " +
      "verdict report.",
    first: onlyQuery(["shield"]),
    query: recordQuery,
    answer: tokenRecord,
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
    mcp: {
      name: "token",
      description:
        "One token's record (GET /api/v1/tokens/{address}): tier, kind, risks, tradable; screened on demand " +
        "(within about 8 s) if it was never screened.",
      input: recordInput,
      readOnly: true,
    },
    handle: ({ query, param, c }, s) =>
      s.get(param("address"), { shield: query.shield, keyId: c.get("key").keyId, clientAddr: c.get("clientAddr") }),
  }),
  route({
    method: "get",
    path: "/tokens",
    auth: "key",
    limits: [
      ["tokenSearch", RATE_RULES.tokenSearch, "key"],
      ["tokenSearch", RATE_RULES.tokenSearchClient, "client"],
    ],
    summary: "Token search (never screens)",
    description:
      "Searches the registry by name, symbol or address prefix, tier and kind; never screens. A core " +
      "symbol finds the core asset exactly and says how many other tokens call themselves by it. limit " +
      "1 to 100 (default 20); shield=1 adds each token's verdict report.",
    first: onlyQuery(["q", "tier", "kind", "limit", "shield"]),
    query: searchQuery,
    answer: tokenSearchAnswer,
    errors: [...KEYED, "REGISTRY_UNAVAILABLE", "REPORT_UNAVAILABLE"],
    mcp: {
      name: "tokens",
      description: "Token search (GET /api/v1/tokens): never screens.",
      input: searchInput,
      readOnly: true,
    },
    handle: ({ query }, s) => s.search(query),
  }),
];
