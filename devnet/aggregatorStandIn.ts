import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";

/**
 * Local stand-in for an aggregator's quote API (GET /quote?chainId&sellToken&buyToken&sellAmount
 * answering {buyAmount, gas}). Its price is set by tests as output atoms per input atom, with
 * enough precision for any pair; `down()` answers 503.
 */
export async function startAggregatorStandIn(port = 0) {
  let rate: { num: bigint; den: bigint } | null = null;
  let isDown = false;
  const app = new Hono();
  app.get("/quote", (c) => {
    if (isDown || !rate) return c.json({ error: "unavailable" }, 503);
    const sell = c.req.query("sellAmount");
    if (!sell || !/^\d+$/.test(sell) || !c.req.query("sellToken") || !c.req.query("buyToken"))
      return c.json({ error: "bad request" }, 400);
    return c.json({ buyAmount: ((BigInt(sell) * rate.num) / rate.den).toString(), gas: "180000" });
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : port}`,
    price: (num: bigint, den: bigint) => (rate = { num, den }),
    down: (value = true) => (isDown = value),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
