import { BlockList, isIPv4, isIPv6, type Socket } from "node:net";
import { createServer, STATUS_CODES, type Server } from "node:http";
import { getRequestListener, RequestError } from "@hono/node-server";
import { refusals } from "../../lib/metrics.js";

/**
 * The edge's caps (issue 12 fault 4: ~20,000 idle connections from one client exhausted the
 * process's 20,000 file descriptors and the embedded stores failed with them):
 * - at most MAX_CONNECTIONS open sockets; Node closes any beyond at accept;
 * - at most PER_ADDRESS_CONNECTIONS from one peer address (a configured trusted proxy has none),
 *   closed at once, before they cost a request;
 * - a connection must send its headers within HEADERS_TIMEOUT_MS (an idle socket is reaped), a
 *   request must finish within REQUEST_TIMEOUT_MS, an idle keep-alive lasts KEEP_ALIVE_MS.
 * So one client holds at most 128 descriptors and everyone together 4,000, leaving the stores,
 * the chain client and Ponder the rest.
 */
export const MAX_CONNECTIONS = 4_000;
export const PER_ADDRESS_CONNECTIONS = 128;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_MS = 5_000;
/** How often Node checks connections against the header and request timeouts (its default: 30 s). */
export const CONNECTIONS_CHECK_MS = 2_000;

type Fetch = (request: Request, env?: unknown) => Response | Promise<Response>;
export type ServeOptions = { port: number; hostname?: string; trustedProxies?: string[] };

/** Serves a Hono app behind the edge's caps; resolves once listening. */
export async function serveApp(app: { fetch: Fetch }, opts: ServeOptions): Promise<Server> {
  // Node looks for connections past their timeouts this often; its default (30 s) lets slow ones linger.
  const server = createServer(
    { connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    getRequestListener(app.fetch, { hostname: opts.hostname, errorHandler: unreadableRequest }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.hostname ?? "0.0.0.0", () => resolve());
  });
  capEdge(server, opts.trustedProxies ?? []);
  return server;
}

/**
 * A request Node parsed but no URL can be made of (a Host like `a@b`, `OPTIONS *`): @hono/node-server
 * would answer a bare 400 with no body before the app sees it; ours is the JSON error shape. Anything
 * else reaching here is the app's own failure: 500 in the same shape, never a stack trace.
 */
function unreadableRequest(err: unknown): Response {
  const malformed = err instanceof RequestError;
  const code = malformed ? "BAD_REQUEST" : "INTERNAL";
  refusals.inc({ code });
  const message = malformed ? `malformed request: ${err.message}` : "internal error";
  return new Response(JSON.stringify({ error: { code, message } }), {
    status: malformed ? 400 : 500,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/**
 * The edge's caps and JSON answers to unparseable requests on any public HTTP server of ours: the
 * API's, and `npm run stack`'s balancer in front of it (scripts/balancer.ts), which is the edge there.
 */
export function capEdge(server: Server, trustedProxies: string[]): void {
  capConnections(server, trustedProxies);
  server.on("clientError", answerClientError);
}

function capConnections(server: Server, trustedProxies: string[]) {
  server.maxConnections = MAX_CONNECTIONS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  const trusted = blockListOf(trustedProxies);
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const peer = socket.remoteAddress ?? "";
    if (isTrusted(trusted, peer)) return;
    const n = (open.get(peer) ?? 0) + 1;
    if (n > PER_ADDRESS_CONNECTIONS) return void socket.destroy();
    open.set(peer, n);
    socket.once("close", () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left <= 0) open.delete(peer);
      else open.set(peer, left);
    });
  });
}

/**
 * Node answers a request it cannot parse itself, in plain text; ours is the JSON error shape. 431
 * for headers past Node's limit, 408 for a connection that sent no complete request in time.
 */
function answerClientError(err: Error & { code?: string }, socket: Socket) {
  if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy();
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const message =
    status === 431
      ? "request headers too large"
      : status === 408
        ? "no complete request in time"
        : "malformed HTTP request";
  const body = JSON.stringify({ error: { code: "BAD_REQUEST", message } });
  refusals.inc({ code: "BAD_REQUEST" });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n` +
      `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** IPs and CIDRs (IPv4, IPv6) as a BlockList; IPv4-mapped IPv6 peers are matched as IPv4. */
export function blockListOf(entries: string[]): BlockList {
  const list = new BlockList();
  for (const e of entries) {
    const [addr, bits] = e.split("/") as [string, string | undefined];
    const ip = addr.startsWith("::ffff:") && isIPv4(addr.slice(7)) ? addr.slice(7) : addr;
    const type = isIPv6(ip) ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list;
}

export function isTrusted(list: BlockList, peer: string): boolean {
  const ip = peer.startsWith("::ffff:") && isIPv4(peer.slice(7)) ? peer.slice(7) : peer;
  if (!ip) return false;
  return list.check(ip, isIPv6(ip) ? "ipv6" : "ipv4");
}
