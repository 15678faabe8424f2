import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import type { Services } from "../services.js";
import { openApiDocument } from "./document.js";

/** GET /api/v1/openapi.json: the document, built once. */
export function openApiRoutes(s: Pick<Services, "config">) {
  const app = new Hono<AppEnv>();
  const doc = openApiDocument({ version: s.config.version });
  app.get("/openapi.json", (c) => c.json(doc));
  return app;
}
