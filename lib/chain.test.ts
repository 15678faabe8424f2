import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { createPublicClient } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import {
  budgetedHttp,
  chainUnreachable,
  NodeSilent,
  PROBE_EVERY_MS,
  publicClient,
  ReadsBackedUp,
  withInFlightCap,
} from "./chain.js";

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

/**
 * A node that answers each call 0x2a after `delayMs` (the methods in `fail` with HTTP 500), counting the requests it
 * holds at once and those of each method.
 */
async function countingNode(delayMs: number, fail: string[] = []) {
  const seen = { inFlight: 0, max: 0, requests: 0, methods: {} as Record<string, number> };
  const server = createHttpServer(async (req, res) => {
    seen.requests++;
    seen.max = Math.max(seen.max, ++seen.inFlight);
    let body = "";
    for await (const c of req) body += c;
    const { id, method } = JSON.parse(body) as { id: number; method: string };
    seen.methods[method] = (seen.methods[method] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, delayMs));
    seen.inFlight--;
    if (fail.includes(method)) return void res.writeHead(500).end("down");
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" }));
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  stop = () => void (server.closeAllConnections(), server.close());
  return { seen, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const address = (i: number) => `0x${(i + 1).toString(16).padStart(40, "0")}` as const;

describe("withInFlightCap", () => {
  it("holds a worker's burst to its cap at the node, every call answered", async () => {
    const { seen, url } = await countingNode(20);
    const client = publicClient({ transport: budgetedHttp(url) });
    const capped = withInFlightCap(client, 3);
    // Forty different calls (viem dedupes identical ones in flight).
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => capped.getBalance({ address: address(i) })));
    expect(answers).toEqual(Array(40).fill(42n));
    expect(seen.requests).toBe(40);
    expect(seen.max).toBe(3);
    // The same burst on the client itself is not held: what the cap is for.
    seen.max = 0;
    await Promise.all(Array.from({ length: 40 }, (_, i) => client.getBalance({ address: address(i) })));
    expect(seen.max).toBeGreaterThan(3);
  });

  it("passes a call's own options through (a raw transaction is sent once, never retried) and its errors", async () => {
    const { seen, url } = await countingNode(0, ["eth_sendRawTransaction", "eth_getBalance"]);
    const capped = withInFlightCap(publicClient({ transport: budgetedHttp(url) }), 2);
    const sent = await capped.sendRawTransaction({ serializedTransaction: "0x02" }).catch((e: unknown) => e);
    expect(seen.methods.eth_sendRawTransaction).toBe(1);
    // A read is retried as the client's own transport retries it (once), and its failure stays what it was.
    const read = await capped.getBalance({ address: address(0) }).catch((e: unknown) => e);
    expect(seen.methods.eth_getBalance).toBe(2);
    expect([chainUnreachable(sent), chainUnreachable(read)]).toEqual([true, true]);
  });

  it("refuses a call at once past the calls it lets wait, and takes calls again once they drain", async () => {
    const { seen, url } = await countingNode(50);
    const capped = withInFlightCap(publicClient({ transport: budgetedHttp(url) }), 1, 5);
    const calls = Array.from({ length: 10 }, (_, i) =>
      capped.getBalance({ address: address(i) }).then(
        () => "answered",
        (e: Error) => (e instanceof ReadsBackedUp || e.cause instanceof ReadsBackedUp ? "refused" : e.message),
      ),
    );
    // One at the node, five waiting, four refused without reaching it.
    expect(await Promise.all(calls)).toEqual([...Array(6).fill("answered"), ...Array(4).fill("refused")]);
    expect(seen.requests).toBe(6);
    expect(await capped.getBalance({ address: address(11) })).toBe(42n);
  });
});
