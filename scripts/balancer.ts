import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_BODY_BYTES } from "../api/http/guards.js";
import { capEdge } from "../api/http/serve.js";

export type Balancer = { server: Server; port: number; close(): Promise<void> };

/** The header the balancer appends the client's address to (the API processes are told to believe it from loopback). */
export const FORWARDED_FOR = "x-forwarded-for";

/**
 * One public port in front of the API processes of `npm run stack`, round-robin. A process that
 * refuses the connection never saw the request, so the next one is asked; one that fails after
 * taking it may have acted (a relayed trade), so the request is not sent again and the caller gets
 * 503 ENGINE_UNAVAILABLE with Retry-After, as SPEC's retry rules expect. Bodies are read first
 * (capped as the API caps them) so that a refused connection can be retried with the same bytes.
 */
export async function startBalancer(o: { port: number; host: string; backends: () => number[] }): Promise<Balancer> {
  let next = 0;
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const ports = o.backends();
        if (body === null) return refuse(res, 413, "BAD_REQUEST", `body over ${MAX_BODY_BYTES} bytes`);
        const start = next++;
        forward(req, res, body, ports, start % Math.max(ports.length, 1), ports.length);
      },
      () => refuse(res, 400, "BAD_REQUEST", "the request body could not be read"),
    );
  });
  // The balancer is the edge here: the API's caps (connections in all and per client address, header,
  // request and keep-alive timeouts, JSON answers to what cannot be parsed), so no caller can hold its port.
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
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  ports: number[],
  at: number,
  triesLeft: number,
): void {
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
  // A caller that hangs up mid-answer: the process's answer is dropped, not read to the end.
  res.once("close", () => !res.writableFinished && out.destroy());
  out.once("error", (err: NodeJS.ErrnoException) => {
    if (res.headersSent) return void res.destroy();
    if (err.code === "ECONNREFUSED") return void forward(req, res, body, ports, (at + 1) % ports.length, triesLeft - 1);
    refuse(res, 503, "ENGINE_UNAVAILABLE", "the API process handling this request went away; retry shortly");
  });
  out.end(body);
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
