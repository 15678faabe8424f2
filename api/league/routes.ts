import { Hono, type Context } from "hono";
import type { AppEnv } from "../deps.js";
import type { HttpKit } from "../http/kit.js";
import type { Services } from "../services.js";

/** SPEC "League": the keyed entry routes (reading routes come with the standings). */
export function leagueRoutes(s: Pick<Services, "league">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  const who = (c: Context<AppEnv>) => ({ wallet: c.get("key").wallet, keyId: c.get("key").keyId });
  app.post("/league/statement", http.keyed, async (c) => c.json(await s.league.statement(c.get("body"), who(c))));
  app.post("/league/enter", http.keyed, async (c) => c.json(await s.league.enter(c.get("body"), who(c)), 201));
  app.post("/league/confirm", http.keyed, async (c) => c.json(await s.league.confirm(c.get("body"), who(c))));
  // A sanctioned key may still leave (SPEC "Authentication").
  app.post("/league/leave", http.keyedEvenSanctioned, async (c) => c.json(await s.league.leave(c.get("body"), who(c))));
  app.get("/league/me", http.keyed, async (c) => c.json(await s.league.me(who(c))));
  return app;
}
