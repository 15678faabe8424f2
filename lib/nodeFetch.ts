import http, { type IncomingMessage } from "node:http";
import https from "node:https";

/**
 * `fetch` for JSON-RPC over node:http(s), given to viem's http transport as its `fetchFn`: viem keeps everything it
 * does around a call (ids, batching, the timeout and its abort, the body's size limit, the errors it raises), and
 * only the request itself changes hands.
 *
 * Why not the global fetch (undici): it writes a request two event-loop turns after the call, which costs a busy
 * server a few ms a call (docs/fast.md), and its Request, Headers and web streams cost about 0.6 ms of CPU a call in the
 * API's profile. node:http writes the request in the same turn (on a kept-alive socket, before the loop moves on) and
 * hands the body over as the socket gives it.
 *
 * What it answers is the part of a Response viem reads: `ok`, `status`, `statusText`, `headers.get`, and `body` as a
 * reader of the bytes as they come (viem counts them against its size limit and cancels past it). An abort (viem's
 * timeout, or a caller's signal) destroys the request and rejects with an AbortError, as fetch does. Connections are
 * kept alive per origin (the server's `Keep-Alive: timeout` is honoured less a second, node:http's Agent), so a call
 * costs no TCP handshake.
 */
export type NodeFetch = (url: string | URL, init?: NodeFetchInit) => Promise<NodeResponse>;

/** The part of RequestInit viem passes. */
export type NodeFetchInit = {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
};

/** The part of a Response viem reads. */
export type NodeResponse = {
  ok: boolean;
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  body: { getReader(): BodyReader };
  text(): Promise<string>;
  json(): Promise<unknown>;
};

type BodyReader = {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
};

/** Idle sockets kept per origin; beyond it a finished call's socket is closed. */
const FREE_SOCKETS = 64;

const agents = {
  "http:": new http.Agent({ keepAlive: true, maxFreeSockets: FREE_SOCKETS, scheduling: "lifo" }),
  "https:": new https.Agent({ keepAlive: true, maxFreeSockets: FREE_SOCKETS, scheduling: "lifo" }),
};

/** What fetch rejects with once its signal aborts: the signal's reason (an AbortError, or AbortSignal.timeout's). */
const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("This operation was aborted", "AbortError");

export const nodeFetch: NodeFetch = (url, init = {}) =>
  new Promise((resolve, reject) => {
    const signal = init.signal ?? null;
    if (signal?.aborted) return reject(abortError(signal));
    const target = typeof url === "string" ? new URL(url) : url;
    const lib = target.protocol === "https:" ? https : target.protocol === "http:" ? http : null;
    if (!lib) return reject(new TypeError(`nodeFetch: unsupported protocol ${target.protocol}`));
    const body = init.body ?? "";
    const req = lib.request(target, {
      method: init.method ?? "GET",
      headers: { ...init.headers, "content-length": Buffer.byteLength(body) },
      agent: agents[target.protocol as "http:" | "https:"],
    });
    const onAbort = () => req.destroy(abortError(signal!) as Error);
    signal?.addEventListener("abort", onAbort, { once: true });
    const detach = () => signal?.removeEventListener("abort", onAbort);
    req.on("error", (err) => {
      detach();
      reject(err);
    });
    req.once("response", (res) => {
      res.once("end", detach);
      res.once("close", detach);
      resolve(responseOf(res, signal));
    });
    req.end(body);
  });

function responseOf(res: IncomingMessage, signal: AbortSignal | null): NodeResponse {
  const status = res.statusCode ?? 0;
  let reader: BodyReader | null = null;
  const body = {
    getReader(): BodyReader {
      reader ??= readerOf(res, signal);
      return reader;
    },
  };
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? "",
    headers: {
      get(name: string) {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
      },
    },
    body,
    async text() {
      const r = body.getReader();
      const chunks: Uint8Array[] = [];
      for (let c = await r.read(); !c.done; c = await r.read()) chunks.push(c.value);
      return Buffer.concat(chunks).toString("utf8");
    },
    async json() {
      return JSON.parse(await this.text());
    },
  };
}

/**
 * The response's bytes as they come. A read past an abort rejects as fetch's does (the signal's reason); past a broken
 * or cut-off connection, with its error.
 */
function readerOf(res: IncomingMessage, signal: AbortSignal | null): BodyReader {
  const chunks: Buffer[] = [];
  let ended = false;
  let failed: Error | null = null;
  let waiting: { resolve: () => void } | null = null;
  const wake = () => {
    const w = waiting;
    waiting = null;
    w?.resolve();
  };
  res.on("data", (c: Buffer) => {
    chunks.push(c);
    wake();
  });
  res.once("end", () => {
    ended = true;
    wake();
  });
  res.once("error", (err) => {
    failed = err;
    wake();
  });
  res.once("close", () => {
    if (!ended && !failed) failed = new Error("the connection closed before the response's end");
    wake();
  });
  return {
    async read() {
      for (;;) {
        const c = chunks.shift();
        if (c) return { done: false, value: c };
        if (signal?.aborted) throw abortError(signal);
        if (failed) throw failed;
        if (ended) return { done: true };
        await new Promise<void>((resolve) => (waiting = { resolve }));
      }
    },
    async cancel() {
      res.destroy();
    },
    releaseLock() {},
  };
}
