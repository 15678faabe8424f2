import { PitError, type ErrorCode } from "./errors.js";

/** A server that has not answered in this long has not answered. */
const ANSWER_TIMEOUT_MS = 30_000;

export type Http = {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  key: string | null;
};

/**
 * The service's REST, typed errors only: an error answer becomes a PitError with the server's
 * `code` (HTTP_<status> when it has none); a 429 or 503 with Retry-After is tried once more after
 * waiting that long (at most `maxRetryWaitS`).
 */
export function createHttp(
  baseUrl: string,
  o: { key?: string | null; maxRetryWaitS?: number; fetch?: typeof fetch; timeoutMs?: number } = {},
): Http {
  const base = `${baseUrl.replace(/\/$/, "")}/api/v1`;
  const doFetch = o.fetch ?? fetch;
  const http: Http = {
    key: o.key ?? null,
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
  };
  async function call<T>(method: string, path: string, body?: unknown, retried = false): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (http.key) headers.authorization = `Bearer ${http.key}`;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(o.timeoutMs ?? ANSWER_TIMEOUT_MS),
      });
      text = await res.text();
    } catch (err) {
      // No answer is not a refusal: the request may have been acted on (NO_ANSWER, the SDK's own code).
      throw new PitError("NO_ANSWER", `${method} ${path} got no answer: ${(err as Error).message}`, {}, { cause: err });
    }
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (res.ok) return json as T;
    const err = (json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    const retryAfterS = Number(res.headers.get("retry-after") ?? NaN);
    if (
      !retried &&
      (res.status === 429 || res.status === 503) &&
      Number.isFinite(retryAfterS) &&
      retryAfterS <= (o.maxRetryWaitS ?? 10)
    ) {
      await new Promise((r) => setTimeout(r, retryAfterS * 1000));
      return call<T>(method, path, body, true);
    }
    // The server's code as it sent it: a newer server may name one this build's catalogue lacks.
    const code = (typeof err?.code === "string" ? err.code : `HTTP_${res.status}`) as ErrorCode;
    throw new PitError(
      code,
      typeof err?.message === "string" ? err.message : `${method} ${path} answered ${res.status}`,
      { status: res.status, body: json, ...(Number.isFinite(retryAfterS) ? { retryAfterS } : {}) },
    );
  }
  return http;
}
