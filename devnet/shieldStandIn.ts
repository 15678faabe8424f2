import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";

/**
 * Local stand-in for the Shield verdict provider, speaking the same protocol as the real one
 * (GET /v1/verdicts/:chainId/:address). Verdicts are set by tests; unknown tokens are
 * "unverified". `down()` makes it answer 503 like an outage; `downFor(address)` for one token only.
 */
export async function startShieldStandIn(port = 0) {
  const verdicts = new Map<string, "verified" | "unverified" | "flagged">();
  let isDown = false;
  const downFor = new Set<string>();
  const app = new Hono();
  app.get("/v1/verdicts/:chainId/:address", (c) => {
    const address = c.req.param("address").toLowerCase();
    if (isDown || downFor.has(address)) return c.json({ error: "maintenance" }, 503);
    return c.json({
      verdict: verdicts.get(address) ?? "unverified",
      url: `https://shield.example/reports/${c.req.param("chainId")}/${address}`,
      source: "shield-stand-in",
      checked_at: Math.floor(Date.now() / 1000),
    });
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : port}`;
  return {
    url,
    set: (address: string, v: "verified" | "unverified" | "flagged") => verdicts.set(address.toLowerCase(), v),
    down: (value = true) => (isDown = value),
    downFor: (address: string, value = true) =>
      void (value ? downFor.add(address.toLowerCase()) : downFor.delete(address.toLowerCase())),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
