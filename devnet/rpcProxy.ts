import { createServer } from "node:http";
import { freePort } from "./anvil.js";

/**
 * A loopback JSON-RPC proxy in front of a node: counts round trips (HTTP requests) and the calls
 * inside them (benchmarks), and can stop answering like a dead RPC (tests).
 */
export async function startRpcProxy(upstream: string) {
  const counts = { trips: 0, calls: 0, methods: {} as Record<string, number> };
  let down = false;
  const port = await freePort();
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (down) return void req.socket.destroy();
    const body = Buffer.concat(chunks).toString();
    counts.trips++;
    try {
      const parsed = JSON.parse(body);
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        counts.calls++;
        counts.methods[m.method] = (counts.methods[m.method] ?? 0) + 1;
      }
    } catch {
      // not JSON: forwarded as is
    }
    const up = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(up.status, { "content-type": "application/json" });
    res.end(await up.text());
  });
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", () => r()));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    counts,
    reset: () => Object.assign(counts, { trips: 0, calls: 0, methods: {} }),
    down: (value = true) => (down = value),
    close: () => new Promise<void>((r) => (srv.closeAllConnections?.(), srv.close(() => r()))),
  };
}
