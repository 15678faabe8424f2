import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback JSON-RPC proxy in front of a node: counts round trips (HTTP requests) and the calls
 * inside them (benchmarks), and can stop answering like a dead RPC (tests). `refuse` lists methods
 * answered with JSON-RPC error -32601 like a node without them (e.g. debug_traceTransaction).
 * `onCall` sees each call (method and params) before it is forwarded, `onTrip` each round trip's calls
 * together (a batch as one trip: the benchmarks' "node alone" lines replay them so). `silent` keeps requests
 * open without an answer, like a stalled node; `hold` keeps the round trips that call one of its methods until it is
 * released (a node slow on one method: a test can look at what a client did before it). `counts.to` counts the
 * eth_call and eth_getCode calls per contract address (lower case).
 */
export async function startRpcProxy(
  upstream: string,
  opts: {
    refuse?: string[];
    onCall?: (m: { method: string; params?: unknown }) => void;
    onTrip?: (calls: { method: string; params?: unknown }[]) => void;
  } = {},
) {
  const refuse = new Set(opts.refuse ?? []);
  const counts = { trips: 0, calls: 0, methods: {} as Record<string, number>, to: {} as Record<string, number> };
  let down = false;
  let silent = false;
  let held: { methods: Set<string>; released: Promise<void> } | null = null;
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (down) return void req.socket.destroy();
    if (silent) return;
    let body = Buffer.concat(chunks).toString();
    counts.trips++;
    let refused: { jsonrpc: "2.0"; id: unknown; error: { code: number; message: string } }[] = [];
    let single = false;
    try {
      const parsed = JSON.parse(body);
      single = !Array.isArray(parsed);
      const calls: { id: unknown; method: string; params?: unknown[] }[] = single ? [parsed] : parsed;
      opts.onTrip?.(calls.map((m) => ({ method: m.method, params: m.params })));
      for (const m of calls) {
        opts.onCall?.(m);
        counts.calls++;
        counts.methods[m.method] = (counts.methods[m.method] ?? 0) + 1;
        const p0 = m.params?.[0] as { to?: string } | string | undefined;
        const to =
          m.method === "eth_call" && typeof p0 === "object"
            ? p0?.to
            : m.method === "eth_getCode" && typeof p0 === "string"
              ? p0
              : undefined;
        if (to) counts.to[to.toLowerCase()] = (counts.to[to.toLowerCase()] ?? 0) + 1;
      }
      const wait = held;
      if (wait && calls.some((m) => wait.methods.has(m.method))) await wait.released;
      refused = calls
        .filter((m) => refuse.has(m.method))
        .map((m) => ({
          jsonrpc: "2.0",
          id: m.id,
          error: { code: -32601, message: `the method ${m.method} does not exist/is not available` },
        }));
      if (refused.length && single)
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(refused[0]));
      if (refused.length) {
        const rest = calls.filter((m) => !refuse.has(m.method));
        if (!rest.length)
          return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(refused));
        body = JSON.stringify(rest);
      }
    } catch {
      // not JSON: forwarded as is
    }
    const up = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await up.text();
    res.writeHead(up.status, { "content-type": "application/json" });
    res.end(refused.length && !single ? JSON.stringify([...JSON.parse(text), ...refused]) : text);
  });
  // Port 0: the kernel's pick at bind time. A port picked first and bound later can be taken in
  // between (another file's server, or an outgoing connection's ephemeral port): EADDRINUSE.
  await new Promise<void>((r, reject) => (srv.once("error", reject), srv.listen(0, "127.0.0.1", () => r())));
  const port = (srv.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    counts,
    reset: () => Object.assign(counts, { trips: 0, calls: 0, methods: {}, to: {} }),
    down: (value = true) => (down = value),
    silent: (value = true) => (silent = value),
    /** Holds every round trip that calls one of `methods` until the returned release is called. */
    hold(methods: string[]): () => void {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      held = { methods: new Set(methods), released };
      return () => {
        held = null;
        release();
      };
    },
    close: () => new Promise<void>((r) => (srv.closeAllConnections?.(), srv.close(() => r()))),
  };
}
