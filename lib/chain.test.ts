import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { createPublicClient } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { budgetedHttp, chainUnreachable, NodeSilent, PROBE_EVERY_MS, publicClient, withInFlightCap } from "./chain.js";

/**
 * A node that takes connections and, while `silent`, never answers; otherwise answers every call 0x2a, the methods in
 * `slow` never.
 */
async function node() {
  const state = { silent: true, slow: new Set<string>(), sockets: new Set<Socket>() };
  const server: Server = createServer((s) => {
    state.sockets.add(s);
    s.on("close", () => state.sockets.delete(s));
    s.on("data", (buf) => {
      if (state.silent) return;
      const body = buf.toString().split("\r\n\r\n")[1] ?? "{}";
      const { id = 0, method } = JSON.parse(body) as { id?: number; method?: string };
      if (method && state.slow.has(method)) return;
      const json = JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" });
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
    });
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    state,
    url,
    close: () => {
      for (const s of state.sockets) s.destroy();
      server.close();
    },
  };
}

let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe("budgetedHttp", () => {
  it("refuses a request of five calls to a silent node within one call's budget, and finds the node back", async () => {
    const n = await node();
    stop = n.close;
    const client = createPublicClient({ transport: budgetedHttp(n.url) });
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) await expect(client.getBlockNumber({ cacheTime: 0 })).rejects.toThrow();
    expect(performance.now() - t0).toBeLessThan(5_000);
    n.state.silent = false;
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS + 50));
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
  });

  it("a call slow on a live node costs only its caller: the probe answers and the next calls go through", async () => {
    const n = await node();
    stop = n.close;
    n.state.silent = false;
    n.state.slow.add("eth_call");
    const client = createPublicClient({ transport: budgetedHttp(n.url) });
    const slow = await client
      .call({ to: "0x0000000000000000000000000000000000000001", data: "0x" })
      .catch((e: unknown) => e);
    expect(chainUnreachable(slow)).toBe(true);
    expect(slow).not.toBeInstanceOf(NodeSilent);
    // No breaker opened: an ordinary call right after is answered.
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
  }, 20_000);
});

/** A node that answers each call (its id, as a number) after `delayMs`, counting the requests it holds at once. */
async function countingNode(delayMs: number) {
  const seen = { inFlight: 0, max: 0, requests: 0 };
  const server = createHttpServer(async (req, res) => {
    seen.requests++;
    seen.max = Math.max(seen.max, ++seen.inFlight);
    let body = "";
    for await (const c of req) body += c;
    const { id } = JSON.parse(body) as { id: number };
    await new Promise((r) => setTimeout(r, delayMs));
    seen.inFlight--;
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" }));
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  stop = () => void (server.closeAllConnections(), server.close());
  return { seen, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe("withInFlightCap", () => {
  it("holds a worker's burst to its cap at the node, every call answered", async () => {
    const { seen, url } = await countingNode(20);
    const client = publicClient({ transport: budgetedHttp(url) });
    const capped = withInFlightCap(client, 3);
    // Forty different calls (viem dedupes identical ones in flight).
    const balance = (c: typeof client, i: number) =>
      c.getBalance({ address: `0x${(i + 1).toString(16).padStart(40, "0")}` });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => balance(capped, i)));
    expect(answers).toEqual(Array(40).fill(42n));
    expect(seen.requests).toBe(40);
    expect(seen.max).toBe(3);
    // The same burst on the client itself is not held: what the cap is for.
    seen.max = 0;
    await Promise.all(Array.from({ length: 40 }, (_, i) => balance(client, i)));
    expect(seen.max).toBeGreaterThan(3);
  });
});
