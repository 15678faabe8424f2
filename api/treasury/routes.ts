import { Hono } from "hono";
import type { AppEnv } from "../http/env.js";
import { PUBLIC, publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import { routesFor } from "../http/route.js";
import { treasuryAnswer } from "./answers.js";
import { treasuryPage } from "./index.js";
import type { TreasuryReader } from "./read.js";

/** What the public record's routes read: the record's answer. */
export type TreasuryService = Pick<TreasuryReader, "answer">;

const route = routesFor<TreasuryService>({
  name: "Treasury",
  description: "The public record of fee splits, rows chained by SHA-256.",
});

/** GET /api/v1/treasury: the record as JSON (unkeyed, the public routes' limit). */
export const treasuryRoutes = [
  route({
    method: "get",
    path: "/treasury",
    auth: "none",
    limits: PUBLIC,
    summary: "The public treasury record",
    description:
      "Every fee goes to the platform wallet; weekly (week ends Monday 00:00 UTC) split 50% operations, 40% " +
      "buybacks, 10% treasury. Rows are chained by SHA-256; rows from a broken one on are not served. The " +
      "record names no trading wallet and no trade.",
    answer: treasuryAnswer,
    errors: ["RATE_LIMITED"],
    handle: (_, s) => s.answer(),
  }),
];

/** GET /treasury: the same record as a page (HTML, no script); outside /api/v1, so a Hono app of its own. */
export function treasuryPageRoutes(s: { treasury: { reader: TreasuryService } }, http: HttpKit) {
  const app = new Hono<AppEnv>();
  app.get("/treasury", publicLimit(http.limiter), async (c) => c.html(treasuryPage(await s.treasury.reader.answer())));
  return app;
}
