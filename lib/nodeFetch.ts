import http, { type ClientRequest, type IncomingMessage } from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import { PassThrough, type Readable } from "node:stream";
import zlib from "node:zlib";

/**
 * `fetch` for JSON-RPC over node:http(s), given to viem's http transport as its `fetchFn`: viem keeps everything it
 * does around a call (ids, batching, the timeout and its abort, the body's size limit, the errors it raises), and
 * only the request itself changes hands.
 *
 * Why not the global fetch (undici): it writes a request two event-loop turns after the call, which costs a busy
 * server a few ms a call (docs/fast.md), and its Request, Headers and web streams cost about 0.5 ms of CPU a call in
 * this machine's measurements, against about 0.2 here. node:http writes the request once the current turn's
 * synchronous work is done, on a kept-alive socket.
 *
 * What it answers is the part of a Response its callers read: `ok`, `status`, `statusText`, `headers.get`, `text`,
 * `json` (up to TEXT_MAX_BYTES), and `body` as a reader of the bytes as they come (viem counts them against its size
 * limit and cancels past it). As fetch does: an abort (viem's timeout, a caller's signal) rejects with the signal's
 * reason and closes the connection, whatever the request's state; a gzip, deflate or brotli body is decoded; a request
 * ended by the server without a response (a 101, a closed socket) rejects. Unlike fetch it follows no redirect: a 3xx
 * is answered as is, so a signed transaction is never re-sent to another host.
 */
export type NodeFetch = (url: string | URL, init?: NodeFetchInit) => Promise<NodeResponse>;

/** The part of RequestInit its callers pass. */
export type NodeFetchInit = {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
};

/** The part of a Response its callers read. */
export type NodeResponse = {
  ok: boolean;
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  body: { getReader(): BodyReader; cancel(): Promise<void> };
  text(): Promise<string>;
  json(): Promise<unknown>;
};

type BodyReader = {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
};

/**
 * An idle connection is closed after this long, or a second before the server's `Keep-Alive: timeout` when it names
 * one (undici's rule): a request written as the server closes an idle socket would fail, and a POST is not retried.
 */
export const IDLE_MS = 4_000;
/**
 * The most `text` and `json` read, as decoded (fetch has no bound): their callers (the sequencer, the signing services)
 * expect a hash or a signature, and a server that answers without end, or a small gzip that inflates to gigabytes,
 * would otherwise fill the process's memory within the call's timeout. Past it the connection is closed and the read
 * rejects. viem reads `body` under its own limit.
 */
export const TEXT_MAX_BYTES = 1024 * 1024;
/** Idle connections kept per origin; past it a finished call's connection is closed. */
const FREE_SOCKETS = 64;

/** The server's idle timeout as its last response on the socket named it, in ms. */
const hints = new WeakMap<Socket, number>();

function idleFor(socket: Socket): number {
  const hint = hints.get(socket);
  return hint === undefined ? IDLE_MS : Math.min(IDLE_MS, hint - 1_000);
}

/** An agent that keeps a finished call's connection for idleFor(socket), or closes it at once when that is none. */
// biome-ignore lint/suspicious/noExplicitAny: a mixin's constructor takes what its base takes.
function keptAlive<A extends new (...args: any[]) => http.Agent>(Base: A) {
  return class extends Base {
    override keepSocketAlive(socket: Socket): boolean {
      const idle = idleFor(socket);
      // Node's own answers true, or false where it would not keep the socket (its types say void).
      if (idle <= 0 || (super.keepSocketAlive(socket) as unknown) === false) return false;
      socket.setTimeout(idle);
      return true;
    }
  };
}

const agentOpts = { keepAlive: true, maxFreeSockets: FREE_SOCKETS, scheduling: "lifo", timeout: IDLE_MS } as const;
/** Each scheme's request and its one agent. */
const schemes: Record<string, { request: typeof http.request; agent: http.Agent }> = {
  "http:": { request: http.request, agent: new (keptAlive(http.Agent))(agentOpts) },
  "https:": { request: https.request, agent: new (keptAlive(https.Agent))(agentOpts) },
};

/** What fetch rejects with once its signal aborts: the signal's reason (an AbortError, or AbortSignal.timeout's). */
const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("This operation was aborted", "AbortError");

export const nodeFetch: NodeFetch = (url, init = {}) =>
  new Promise((resolve, reject) => {
    const signal = init.signal ?? null;
    if (signal?.aborted) return reject(abortError(signal));
    const target = typeof url === "string" ? new URL(url) : url;
    const scheme = Object.hasOwn(schemes, target.protocol) ? schemes[target.protocol] : undefined;
    if (!scheme) return reject(new TypeError(`nodeFetch: unsupported protocol ${target.protocol}`));
    const body = init.body ?? "";
    const req = scheme.request(target, {
      method: init.method ?? "GET",
      headers: { "accept-encoding": "gzip", ...init.headers, "content-length": Buffer.byteLength(body) },
      agent: scheme.agent,
    });
    let answered = false;
    const fail = (err: unknown) => {
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    };
    // Rejected here, not from the request's error: a request the server already ended emits none.
    const onAbort = () => {
      req.destroy();
      fail(abortError(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", fail);
    // Ended without a response: a 101 the request did not ask for, a socket closed before the headers.
    req.once("close", () => {
      if (!answered) fail(new Error("the connection closed before a response"));
    });
    req.once("response", (res) => {
      answered = true;
      resolve(responseOf(req, res, signal, () => signal?.removeEventListener("abort", onAbort)));
    });
    req.end(body);
  });

function responseOf(
  req: ClientRequest,
  res: IncomingMessage,
  signal: AbortSignal | null,
  done: () => void,
): NodeResponse {
  const hint = /timeout=(\d+)/.exec(String(res.headers["keep-alive"] ?? ""))?.[1];
  if (hint && res.socket) hints.set(res.socket, Number(hint) * 1_000);
  const status = res.statusCode ?? 0;
  const stream = decoded(res, status);
  // Read from the first moment, so a connection that breaks before its first read is seen by it.
  const reader = readerOf(stream, signal, () => {
    req.destroy();
    res.destroy();
    stream.destroy();
  });
  res.once("end", done);
  res.once("close", done);
  let used = false;
  /** The body's reader, once: a second reader (fetch's "Body is unusable") would wait on bytes the first took. */
  const take = (): BodyReader => {
    if (used) throw new TypeError("nodeFetch: the body was already read");
    used = true;
    return reader;
  };
  const body = { getReader: take, cancel: () => reader.cancel() };
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
      const r = take();
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (let c = await r.read(); !c.done; c = await r.read()) {
        size += c.value.length;
        if (size > TEXT_MAX_BYTES) {
          await r.cancel();
          throw new RangeError(`nodeFetch: a body past ${TEXT_MAX_BYTES} bytes (as decoded) is not read whole`);
        }
        chunks.push(c.value);
      }
      return Buffer.concat(chunks).toString("utf8");
    },
    async json() {
      return JSON.parse(await this.text());
    },
  };
}

/**
 * The body as fetch gives it: decoded when the server compressed it (it is asked for gzip only), each coding of a list
 * in turn, leniently as undici does (a gzip without its trailer is read to where it stops); none for a bodiless
 * status.
 */
function decoded(res: IncomingMessage, status: number): Readable {
  const codings = String(res.headers["content-encoding"] ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== "identity")
    .reverse();
  if (!codings.length || status === 204 || status === 304) return res;
  const lenient = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  let stream: Readable = res;
  for (const coding of codings) {
    const decoder =
      coding === "gzip" || coding === "x-gzip"
        ? zlib.createGunzip(lenient)
        : coding === "deflate"
          ? zlib.createInflate(lenient)
          : coding === "br"
            ? zlib.createBrotliDecompress({
                flush: zlib.constants.BROTLI_OPERATION_FLUSH,
                finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
              })
            : null;
    if (!decoder) return failed(new Error(`nodeFetch: unknown content-encoding ${coding}`));
    stream = pipeOrFail(stream, decoder);
  }
  // A connection cut before the end is an error of the body, not a shorter one.
  res.on("close", () => void (!res.complete && stream.destroy(new Error("the response was cut off"))));
  return stream;
}

/** `from` piped into `to`; an error of either ends both, so neither is left open. */
function pipeOrFail(from: Readable, to: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress): Readable {
  from.on("error", (err) => to.destroy(err));
  to.on("error", () => from.destroy());
  return from.pipe(to);
}

function failed(err: Error): Readable {
  const r = new PassThrough();
  queueMicrotask(() => r.destroy(err));
  return r;
}

/**
 * The body's bytes as they come. A read past an abort rejects as fetch's does (the signal's reason); past a broken
 * or cut-off connection, with its error. `cancel` closes the connection.
 */
function readerOf(stream: Readable, signal: AbortSignal | null, close: () => void): BodyReader {
  const chunks: Buffer[] = [];
  let ended = false;
  let cancelled = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const woken = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  stream.on("data", (c: Buffer) => {
    if (cancelled) return;
    chunks.push(c);
    woken();
  });
  stream.once("end", () => {
    ended = true;
    woken();
  });
  // A broken body closes its connection: nothing else would (its bytes will not all come, and it is not reusable).
  stream.once("error", (err) => {
    failure ??= err;
    close();
    woken();
  });
  stream.once("close", () => {
    if (!ended) {
      failure ??= new Error("the connection closed before the response's end");
      close();
    }
    woken();
  });
  const onAbort = () => woken();
  signal?.addEventListener("abort", onAbort, { once: true });
  const settle = () => signal?.removeEventListener("abort", onAbort);
  return {
    async read() {
      for (;;) {
        const c = chunks.shift();
        if (c) return { done: false, value: c };
        if (signal?.aborted) {
          settle();
          close();
          throw abortError(signal);
        }
        if (failure) {
          settle();
          throw failure;
        }
        if (ended) {
          settle();
          return { done: true };
        }
        await new Promise<void>((r) => (wake = r));
      }
    },
    async cancel() {
      cancelled = true;
      chunks.length = 0;
      settle();
      close();
    },
    releaseLock() {},
  };
}
