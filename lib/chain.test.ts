import { createServer, type Server, type Socket } from "node:net";
import { createPublicClient } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { budgetedHttp, chainUnreachable, NodeSilent, PROBE_EVERY_MS } from "./chain.js";

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
