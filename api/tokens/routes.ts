import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";

const KINDS = ["core", "stock", "partner_agent", "launchpad", "bridged", "erc20"];
const TIERS = ["A", "B", "C", "blocked"];

function onlyQuery(q: Record<string, string>, allowed: string[]) {
  const extra = Object.keys(q).filter((k) => !allowed.includes(k));
  if (extra.length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes ${allowed.join(", ")}`);
}

function shieldParam(v: string | undefined): boolean {
  if (v === undefined || v === "0") return false;
  if (v === "1") return true;
  throw new Refusal("BAD_REQUEST", "shield must be 1");
}

/** SPEC.md "Tokens (key)". */
export function tokenRoutes(s: Pick<Services, "tokens">, http: HttpKit) {
  const { tokens } = s;
  const { keyed, limiter } = http;
  const app = new Hono<AppEnv>();

  app.get("/stats", keyed, async (c) => {
    onlyQuery(c.req.query(), []);
    return c.json(await tokens.stats());
  });

  app.get("/:address", keyed, limit(limiter, ["tokenScreen", RATE_RULES.tokenScreen, "key"], ["tokenScreen", RATE_RULES.tokenScreenClient, "client"]), async (c) => {
    const query = c.req.query();
    onlyQuery(query, ["shield"]);
    return c.json(await tokens.get(c.req.param("address"), { shield: shieldParam(query.shield), keyId: c.get("key").keyId, clientAddr: c.get("clientAddr") }));
  });

  app.get("/", keyed, limit(limiter, ["tokenSearch", RATE_RULES.tokenSearch, "key"], ["tokenSearch", RATE_RULES.tokenSearchClient, "client"]), async (c) => {
    const query = c.req.query();
    onlyQuery(query, ["q", "tier", "kind", "limit", "shield"]);
    if (query.q !== undefined && (query.q.length === 0 || query.q.length > 64)) throw new Refusal("BAD_REQUEST", "q must be 1 to 64 characters");
    if (query.tier !== undefined && !TIERS.includes(query.tier)) throw new Refusal("BAD_REQUEST", `tier must be one of ${TIERS.join(", ")}`);
    if (query.kind !== undefined && !KINDS.includes(query.kind)) throw new Refusal("BAD_REQUEST", `kind must be one of ${KINDS.join(", ")}`);
    const lim = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(lim) || lim < 1 || lim > 100 || !/^\d+$/.test(query.limit ?? "20")) throw new Refusal("BAD_REQUEST", "limit must be an integer from 1 to 100");
    return c.json(await tokens.search({ q: query.q, tier: query.tier, kind: query.kind, limit: lim, shield: shieldParam(query.shield) }));
  });
  return app;
}
