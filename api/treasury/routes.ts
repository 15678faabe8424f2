import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import type { Services } from "../services.js";
import { treasuryPage } from "./index.js";


/** GET /api/v1/treasury: the record as JSON (unkeyed, the public routes' limit). */
export function treasuryRoutes(s: Pick<Services, "treasury">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  app.get("/treasury", publicLimit(http.limiter), async (c) => c.json(await s.treasury.reader.answer()));
  return app;
}

/** GET /treasury: the same record as a page (HTML, no script). */
export function treasuryPageRoutes(s: Pick<Services, "treasury">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  app.get("/treasury", publicLimit(http.limiter), async (c) => c.html(treasuryPage(await s.treasury.reader.answer())));
  return app;
}
