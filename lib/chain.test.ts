import { createServer, type Server, type Socket } from "node:net";
import { createPublicClient } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { budgetedHttp, PROBE_EVERY_MS } from "./chain.js";

/** A node that takes connections and, while `silent`, never answers; otherwise answers eth_blockNumber. */
async function node() {
  const state = { silent: true, sockets: new Set<Socket>() };
  const server: Server = createServer((s) => {
    state.sockets.add(s);
    s.on("close", () => state.sockets.delete(s));
    s.on("data", (buf) => {
      if (state.silent) return;
      const body = buf.toString().split("\r\n\r\n")[1] ?? "{}";
      const id = (JSON.parse(body) as { id?: number }).id ?? 0;
      const json = JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" });
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
    });
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { state, url, close: () => { for (const s of state.sockets) s.destroy(); server.close(); } };
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
});
