import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../http/env.js";
import { RateLimiter } from "../http/rateLimit.js";
import { docsRoutes } from "./routes.js";

/** The docs routes as the app mounts them, for one client. */
function served(publicOrigin: string | null) {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("clientAddr", "192.0.2.7");
    await next();
  });
  app.route("/", docsRoutes({ version: "test", chainId: 4663, publicOrigin }, { limiter: new RateLimiter(() => 0) }));
  return app;
}

describe("/llms.txt's links (issue 30)", () => {
  it("use the configured public origin, not the request's (behind a TLS proxy it arrives as http)", async () => {
    const text = await (await served("https://api.example.test").request("http://10.0.0.5:42069/llms.txt")).text();
    expect(text).toContain("(https://api.example.test/api/v1/openapi.json)");
    expect(text).toContain("(https://api.example.test/mcp)");
    expect(text).not.toContain("10.0.0.5");
  });

  it("use the request's origin where none is configured (a devnet on localhost)", async () => {
    const text = await (await served(null).request("http://localhost:42069/llms.txt")).text();
    expect(text).toContain("(http://localhost:42069/api/v1/openapi.json)");
  });
});
