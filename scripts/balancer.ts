import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { framingRefusal, MAX_BODY_BYTES, unknownHost } from "../api/http/guards.js";
import { CONNECTIONS_CHECK_MS, capEdge } from "../api/http/serve.js";

export type Balancer = { server: Server; port: number; close(): Promise<void> };

/** The header the balancer appends the client's address to (the API processes are told to believe it from loopback). */
export const FORWARDED_FOR = "x-forwarded-for";

/** Requests one connection may have waiting behind the one being served (pipelining); past it, it is closed. */
export const MAX_PIPELINED = 8;
/** An API process that took a request and then says nothing this long (frozen, not dead) answers 503. */
export const UPSTREAM_IDLE_MS = 60_000;

/**
 * One public port in front of the API processes of `npm run stack`, round-robin. A process that
 * refuses the connection never saw the request, so the next one is asked; one that fails after
 * taking it may have acted (a relayed trade), so a request that is not a read is not sent again and
 * the caller gets 503 ENGINE_UNAVAILABLE with Retry-After, as SPEC's retry rules expect (a read is
 * sent once more: `resendable`). Bodies are read first
 * (capped as the API caps them) so that a refused connection can be retried with the same bytes.
 *
 * It is the edge here, so it holds the API's own edge rules (capEdge: connections in all and per
 * client address, timeouts, JSON answers to what cannot be parsed), serves a connection's pipelined
 * requests one after another (one connection never fans out into thousands upstream), gives up on a
 * request whose caller has gone, and refuses chunked or oversized bodies before reading them, as the
 * API does (issue 32's attack on the running stack found each of these open).
 */
export async function startBalancer(o: {
  port: number;
  host: string;
  backends: () => number[];
  /** UPSTREAM_IDLE_MS unless given (tests). */
  upstreamIdleMs?: number;
}): Promise<Balancer> {
  const idleMs = o.upstreamIdleMs ?? UPSTREAM_IDLE_MS;
  let next = 0;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const refused = refusedAtEdge(req);
    if (refused) return refuse(res, refused.status, refused.code, refused.message);
    const body = await readBody(req).catch(() => undefined);
    if (body === undefined) return refuse(res, 400, "BAD_REQUEST", "the request body could not be read");
    if (body === null) return refuse(res, 413, "BAD_REQUEST", `body over ${MAX_BODY_BYTES} bytes`);
    const ports = o.backends();
    const start = next++;
    // Served once its answer is done or its caller gone; a keep-alive connection carries many: no listener stays.
    await new Promise<void>((resolve) => {
      const done = () => (res.off("close", done), req.socket.off("close", done), resolve());
      res.once("close", done);
      req.socket.once("close", done);
      forward({ req, res, body, ports, idleMs }, start % Math.max(ports.length, 1), ports.length);
    });
  };
  const server = createServer({ connectionsCheckingInterval: CONNECTIONS_CHECK_MS }, (req, res) =>
    serially(req, () => serve(req, res)),
  );
  capEdge(server, []);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Each connection's requests, served one at a time: the last one's promise and how many wait. */
const queues = new WeakMap<Socket, { tail: Promise<void>; waiting: number }>();
function serially(req: IncomingMessage, run: () => Promise<void>): void {
  const socket = req.socket;
  const q = queues.get(socket) ?? { tail: Promise.resolve(), waiting: 0 };
  queues.set(socket, q);
  if (q.waiting > MAX_PIPELINED) return void socket.destroy();
  q.waiting++;
  q.tail = q.tail.then(async () => {
    try {
      if (!socket.destroyed) await run();
    } catch {
      socket.destroy();
    } finally {
      q.waiting--;
    }
  });
}

/**
 * What the API would refuse before reading a body, in its own words (api/http/guards.ts): no Host (421:
 * passed on, Node would name the API process's own address as the host), and the body's framing.
 */
function refusedAtEdge(req: IncomingMessage) {
  if (!req.headers.host) return unknownHost(undefined);
  return framingRefusal(req.method ?? "", req.headers["transfer-encoding"], req.headers["content-length"]);
}

/** The body, or null past the API's cap. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Sends the request to ports[at], moving on to the next process only while connections are refused. */
type Forwarded = {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  ports: number[];
  idleMs: number;
  /** A safe request already sent again once after a process went away. */
  resent?: boolean;
};
function forward(f: Forwarded, at: number, triesLeft: number): void {
  const { req, res, body, ports } = f;
  if (triesLeft <= 0) return void refuse(res, 503, "ENGINE_UNAVAILABLE", "no API process is answering; retry shortly");
  const peer = req.socket.remoteAddress ?? "";
  const prior = req.headers[FORWARDED_FOR];
  const headers = {
    ...endToEnd(req.headers),
    [FORWARDED_FOR]: prior ? `${Array.isArray(prior) ? prior.join(", ") : prior}, ${peer}` : peer,
    "content-length": String(body.length),
  };
  // A connection per request (no keep-alive pool): a refused connection then always means the process never saw
  // the request, where a reset of a pooled one cannot tell a closed idle socket from a death mid-request.
  const target = { host: "127.0.0.1", port: ports[at], method: req.method, path: req.url, headers, agent: false };
  const out = request(target, (answer) => {
    res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
    answer.pipe(res);
    answer.once("error", () => res.destroy());
  });
  // A caller gone mid-answer, or before it (its socket closed): the process's answer is dropped, not read to the end.
  const gone = () => !res.writableFinished && out.destroy();
  res.once("close", gone);
  req.socket.once("close", gone);
  res.once("finish", () => req.socket.off("close", gone));
  out.setTimeout(f.idleMs, () => out.destroy(new Error("the API process said nothing in time")));
  out.once("error", (err: NodeJS.ErrnoException) => {
    req.socket.off("close", gone);
    if (res.headersSent) return void res.destroy();
    if (err.code === "ECONNREFUSED") return void forward(f, (at + 1) % ports.length, triesLeft - 1);
    if (resendable(f, err)) return void forward({ ...f, resent: true }, (at + 1) % ports.length, triesLeft - 1);
    refuse(res, 503, "ENGINE_UNAVAILABLE", "the API process handling this request went away; retry shortly");
  });
  out.end(body);
}

/**
 * A safe request (GET, HEAD, OPTIONS: a read, RFC 9110 9.2.1) whose process went away before answering
 * is sent to the next one, as a proxy may: a reader never sees a process's death (a process dies
 * between its kill and the kernel closing its port). Once only, so that a request that itself kills a
 * process cannot take down each of them in turn; and never after the idle timeout (a frozen process).
 */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
function resendable(f: Forwarded, err: NodeJS.ErrnoException): boolean {
  const died = err.code === "ECONNRESET" || err.code === "EPIPE";
  return died && !f.resent && SAFE_METHODS.has(f.req.method ?? "") && f.ports.length > 1;
}

/** Hop-by-hop headers (RFC 9110 7.6.1) belong to one connection: each side of the balancer has its own. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"];
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  return out;
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { "content-type": "application/json", ...(status === 503 ? { "retry-after": "1" } : {}) });
  res.end(JSON.stringify({ error: { code, message } }));
}
