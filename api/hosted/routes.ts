import { Hono, type Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";

const noBody = z.object({}).strict();
const sessionBody = z.object({ session_id: z.string().min(1).max(64) }).strict();
const attestationBody = z.object({ session_id: z.string().min(1).max(64), issued: z.number().int(), expires: z.number().int(), signature: z.string().regex(/^0x[0-9a-fA-F]+$/) }).strict();

/** SPEC "Hosted agents": every route but `ai` and `spend` (the AI brain's). */
export function hostedRoutes(s: Pick<Services, "hosted">, http: HttpKit) {
  const { hosted } = s;
  const app = new Hono<AppEnv>();
  app.use("*", limit(http.limiter, ["hostedClient", RATE_RULES.hostedClient, "client"]), http.keyed, limit(http.limiter, ["hostedKey", RATE_RULES.hostedKey, "key"]));
  const who = (c: Context<AppEnv>) => ({ wallet: c.get("key").wallet, keyId: c.get("key").keyId });
  /** A POST that takes no body: any field is UNKNOWN_FIELD. */
  const bare = (c: Context<AppEnv>) => {
    const extra = Object.keys(c.get("body") ?? {});
    if (extra.length) throw new Refusal("UNKNOWN_FIELD", `unknown field ${extra[0]}; this route takes no body`);
  };
  const id = (c: Context<AppEnv>) => c.req.param("id")!;

  app.post("/", async (c) => c.json(await hosted.create(c.get("body"), who(c)), 201));
  app.get("/", async (c) => c.json(await hosted.list(who(c))));
  app.get("/:id", async (c) => c.json(await hosted.detail(id(c), who(c))));
  app.post("/:id/update", async (c) => c.json(await hosted.update(id(c), c.get("body"), who(c))));
  app.post("/:id/pause", async (c) => (bare(c), c.json(await hosted.pause(id(c), who(c)))));
  app.post("/:id/resume", async (c) => (bare(c), c.json(await hosted.resume(id(c), who(c)))));
  app.post("/:id/stop", async (c) => (bare(c), c.json(await hosted.stop(id(c), who(c)))));
  app.post("/:id/delete", async (c) => (bare(c), c.json(await hosted.remove(id(c), who(c)))));
  app.get("/:id/logs", async (c) => c.json(await hosted.logs(id(c), c.req.query(), who(c))));
  app.post("/:id/rotate-webhook-secret", async (c) => (bare(c), c.json(await hosted.rotateWebhookSecret(id(c), who(c)))));
  app.get("/:id/executor", async (c) => c.json(await hosted.executor(id(c), who(c))));
  app.post("/:id/session", async (c) => c.json(await hosted.sessionOnly(id(c), who(c), c.get("body"), sessionBody)));
  app.post("/:id/stock-attestation", async (c) => c.json(await hosted.sessionOnly(id(c), who(c), c.get("body"), attestationBody)));
  app.post("/:id/stock-attestation/revoke", async (c) => c.json(await hosted.sessionOnly(id(c), who(c), c.get("body"), noBody)));
  app.post("/:id/refund-gas", async (c) => c.json(await hosted.refundGas(id(c), who(c), c.get("body"))));
  app.post("/:id/rotate-executor", async (c) => c.json(await hosted.rotateExecutor(id(c), who(c), c.get("body"))));
  return app;
}
