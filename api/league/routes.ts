import { Hono, type Context } from "hono";
import type { AppEnv } from "../deps.js";
import { publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import type { Services } from "../services.js";
import { Refusal } from "../errors/index.js";
import { leagueMissingPage, leaguePage, leagueSeasonPage } from "./page.js";

/** Reading routes need no key: the public routes' limit (per client address, and overall). */

/** SPEC "League": the keyed entry routes and the unkeyed reading routes. */
export function leagueRoutes(s: Pick<Services, "league">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  const who = (c: Context<AppEnv>) => ({ wallet: c.get("key").wallet, keyId: c.get("key").keyId });
  const read = s.league.reader;
  app.get("/league", publicLimit(http.limiter), async (c) => c.json(await read.league()));
  app.get("/league/standings", publicLimit(http.limiter), async (c) => c.json(await read.standings(c.req.query())));
  app.get("/league/seasons", publicLimit(http.limiter), async (c) => c.json(await read.seasons()));
  // Beyond SPEC: each entry's relayed trades with their plans, what `npm run league:verify` recomputes.
  app.get("/league/seasons/:n/books", publicLimit(http.limiter), async (c) => c.json(await read.books(c.req.param("n"))));
  app.get("/league/seasons/:n", publicLimit(http.limiter), async (c) => c.json(await read.seasonDetail(c.req.param("n"))));
  app.get("/league/reserve", publicLimit(http.limiter), async (c) => c.json(await read.reserve()));
  app.post("/league/statement", http.keyed, async (c) => c.json(await s.league.statement(c.get("body"), who(c))));
  app.post("/league/enter", http.keyed, async (c) => c.json(await s.league.enter(c.get("body"), who(c)), 201));
  app.post("/league/confirm", http.keyed, async (c) => c.json(await s.league.confirm(c.get("body"), who(c))));
  // A sanctioned key may still leave (SPEC "Authentication").
  app.post("/league/leave", http.keyedEvenSanctioned, async (c) => c.json(await s.league.leave(c.get("body"), who(c))));
  app.get("/league/me", http.keyed, async (c) => c.json(await s.league.me(who(c))));
  return app;
}

/** GET /league and /league/seasons/<n>: the same answers as pages (HTML, no script); a season off the calendar is an HTML 404. */
export function leaguePageRoutes(s: Pick<Services, "league">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  const read = s.league.reader;
  app.get("/league", publicLimit(http.limiter), async (c) => {
    const [league, prize, practice] = await Promise.all([read.league(), read.standings({ board: "prize" }), read.standings({ board: "practice" })]);
    return c.html(leaguePage({ league, prize, practice }));
  });
  app.get("/league/seasons/:n", publicLimit(http.limiter), async (c) => {
    try {
      return c.html(leagueSeasonPage(await read.seasonDetail(c.req.param("n"))));
    } catch (err) {
      // A person asked for a page: answer one; other refusals (503 LEAGUE_UNAVAILABLE) stay the API's JSON.
      if (err instanceof Refusal && err.code === "NO_SEASON") return c.html(leagueMissingPage(err.message), 404);
      throw err;
    }
  });
  return app;
}
