import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { keccak256, type Hex } from "viem";

/**
 * Local stand-in for the real chain's sequencer, speaking its JSON-RPC (eth_sendRawTransaction).
 * `forward` passes transactions to an RPC (anvil); `blackhole` answers the hash and drops the
 * transaction (it never mines); `silent` never answers (the relay must time out); `lost` passes
 * the transaction on and then never answers (it mines, but the relay cannot know).
 */
export async function startSequencerStandIn(upstream: string, port = 0) {
  let mode: "forward" | "blackhole" | "silent" | "lost" = "forward";
  const received: Hex[] = [];
  const app = new Hono();
  app.post("/", async (c) => {
    const body = (await c.req.json().catch(() => null)) as { id?: unknown; method?: string; params?: unknown[] } | null;
    if (!body || body.method !== "eth_sendRawTransaction")
      return c.json({ jsonrpc: "2.0", id: body?.id ?? null, error: { code: -32601, message: "method not found" } });
    const raw = body.params?.[0] as Hex;
    received.push(raw);
    if (mode === "silent") return new Promise<Response>(() => {});
    if (mode === "blackhole") return c.json({ jsonrpc: "2.0", id: body.id, result: keccak256(raw) });
    const res = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (mode === "lost") return new Promise<Response>(() => {});
    return c.json(await res.json());
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : port}`,
    received,
    mode: (m: typeof mode) => (mode = m),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
