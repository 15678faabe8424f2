import { Hono, type Context } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";
import { attestationBody, sessionBody } from "./request.js";


/** SPEC "Hosted agents": every route, and the owner's own gateway key (ai/own, ai/own/disconnect). */
export function hostedRoutes(s: Pick<Services, "hosted">, http: HttpKit) {
  const { hosted } = s;
  const app = new Hono<AppEnv>();
  // On each route (not "*"): a wrong method stays 405 without a key, as on every other route.
  const g = [limit(http.limiter, ["hostedClient", RATE_RULES.hostedClient, "client"]), http.keyed, limit(http.limiter, ["hostedKey", RATE_RULES.hostedKey, "key"])] as const;
  const who = (c: Context<AppEnv>) => ({ wallet: c.get("key").wallet, keyId: c.get("key").keyId });
  /** A POST that takes no body: any field is UNKNOWN_FIELD. */
  const bare = (c: Context<AppEnv>) => {
    const extra = Object.keys(c.get("body") ?? {});
    if (extra.length) throw new Refusal("UNKNOWN_FIELD", `unknown field ${extra[0]}; this route takes no body`);
  };
  const id = (c: Context<AppEnv>) => c.req.param("id")!;

  app.post("/", ...g, async (c) => c.json(await hosted.create(c.get("body"), who(c)), 201));
  // Before "/:id": "ai" is not an agent id.
  app.get("/ai", ...g, async (c) => c.json(await hosted.aiInfo(who(c))));
  app.post("/ai/own", ...g, async (c) => c.json(await hosted.connectOwn(who(c), c.get("body"))));
  app.post("/ai/own/disconnect", ...g, async (c) => (bare(c), c.json(await hosted.disconnectOwn(who(c)))));
  app.get("/:id/spend", ...g, async (c) => c.json(await hosted.spend(id(c), c.req.query(), who(c))));
  app.get("/", ...g, async (c) => c.json(await hosted.list(who(c))));
  app.get("/:id", ...g, async (c) => c.json(await hosted.detail(id(c), who(c))));
  app.post("/:id/update", ...g, async (c) => c.json(await hosted.update(id(c), c.get("body"), who(c))));
  app.post("/:id/pause", ...g, async (c) => (bare(c), c.json(await hosted.pause(id(c), who(c)))));
  app.post("/:id/resume", ...g, async (c) => (bare(c), c.json(await hosted.resume(id(c), who(c)))));
  app.post("/:id/stop", ...g, async (c) => (bare(c), c.json(await hosted.stop(id(c), who(c)))));
  app.post("/:id/delete", ...g, async (c) => (bare(c), c.json(await hosted.remove(id(c), who(c)))));
  app.get("/:id/logs", ...g, async (c) => c.json(await hosted.logs(id(c), c.req.query(), who(c))));
  app.post("/:id/rotate-webhook-secret", ...g, async (c) => (bare(c), c.json(await hosted.rotateWebhookSecret(id(c), who(c)))));
  app.get("/:id/executor", ...g, async (c) => c.json(await hosted.executor(id(c), who(c))));
  app.post("/:id/session", ...g, async (c) => c.json(await hosted.attachSession(id(c), who(c), c.get("body"), sessionBody)));
  app.post("/:id/stock-attestation", ...g, async (c) => c.json(await hosted.stockAttestation(id(c), who(c), c.get("body"), attestationBody)));
  app.post("/:id/stock-attestation/revoke", ...g, async (c) => c.json(await hosted.revokeStockAttestation(id(c), who(c), c.get("body"))));
  app.post("/:id/refund-gas", ...g, async (c) => c.json(await hosted.refundGas(id(c), who(c), c.get("body"))));
  app.post("/:id/rotate-executor", ...g, async (c) => c.json(await hosted.rotateExecutor(id(c), who(c), c.get("body"))));
  return app;
}
