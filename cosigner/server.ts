import { createServer, type IncomingMessage, type Server } from "node:http";
import { timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { wire, type CosignerPort, type RequestWire, type RootWire } from "../api/ports/cosigner.js";
import { isCode, Refusal } from "../api/errors/index.js";
import { executorWire, type ExecutorPort } from "../api/ports/executors.js";

/** A root with its binding, or one redeem (a launchpad session's redeem grows with its curve tokens). */
const MAX_BODY = 256 * 1024;

// biome-ignore lint/suspicious/noExplicitAny: each route parses its own JSON body
type Route = (b: any) => Promise<unknown>;
type ServeOpts = { token: string; logger?: Logger };

/**
 * The co-signer as its own process (`npm run cosigner`): POST /v1/{register,revoke,cosign,usage}
 * behind its own bearer secret. It serves nothing of the executor signing service: the two halves
 * of a session's 2-of-2 never share a process, a secret or a store.
 */
export function cosignerServer(port: CosignerPort, opts: ServeOpts): Server {
  return signingServer(
    "the co-signer",
    {
      "/v1/register": (b: RootWire) => port.register(wire.rootIn(b)),
      "/v1/revoke": (b: { delegationHash: `0x${string}` }) => port.revoke(b.delegationHash),
      "/v1/cosign": async (b: RequestWire) => wire.answerOut(await port.cosign(wire.requestIn(b))),
      "/v1/usage": (b: { delegationHash: `0x${string}`; wallet: `0x${string}` }) =>
        port.usage(b.delegationHash, b.wallet),
    },
    opts,
  );
}

/**
 * The executor signing service as its own process (`npm run executors`): POST /v1/executors/<call>,
 * behind its own bearer secret.
 */
export function executorsServer(executors: ExecutorPort, opts: ServeOpts): Server {
  const routes: Record<string, Route> = {};
  for (const [name, fn] of Object.entries(executorWire))
    routes[`/v1/executors/${name}`] = (b: unknown) =>
      (fn as (p: ExecutorPort, b: unknown) => Promise<unknown>)(executors, b);
  return signingServer("the executor signing service", routes, opts);
}

/**
 * One signing process's HTTP face, on 127.0.0.1 unless told otherwise. Plain node:http (no
 * framework): JSON in and out, refusals with their SPEC codes. Logs name the route, code and ms,
 * never a body.
 */
function signingServer(who: string, routes: Record<string, Route>, opts: ServeOpts): Server {
  const secret = Buffer.from(`Bearer ${opts.token}`);
  const authorized = (req: IncomingMessage) => {
    const got = Buffer.from(req.headers.authorization ?? "");
    return got.length === secret.length && timingSafeEqual(got, secret);
  };
  return createServer(async (req, res) => {
    const t0 = performance.now();
    const send = (status: number, body: unknown, code?: string) => {
      res
        .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
        .end(JSON.stringify(body));
      opts.logger?.info(
        { route: req.url, status, code, ms: Math.round((performance.now() - t0) * 100) / 100 },
        "signer request",
      );
    };
    const route = req.method === "POST" ? routes[req.url ?? ""] : undefined;
    if (!route) return send(404, { error: { code: "NOT_FOUND", message: "no such route" } }, "NOT_FOUND");
    if (!authorized(req))
      return send(401, { error: { code: "UNAUTHORIZED", message: `${who} answers only its API` } }, "UNAUTHORIZED");
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return send(400, { error: { code: "BAD_REQUEST", message: "a JSON body of at most 256 KB" } }, "BAD_REQUEST");
    }
    try {
      send(200, { result: (await route(body)) ?? null });
    } catch (err) {
      if (err instanceof Refusal && isCode(err.code)) return send(err.status, err.body(), err.code);
      opts.logger?.error({ err, route: req.url }, "signer failure");
      send(
        503,
        { error: { code: "SIGNER_UNAVAILABLE", message: `${who} failed; nothing was signed` } },
        "SIGNER_UNAVAILABLE",
      );
    }
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error("too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
