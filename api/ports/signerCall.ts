import { nodeFetch, type NodeResponse } from "../../lib/nodeFetch.js";
import { isCode, Refusal } from "../errors/index.js";

/**
 * One call to a signing process (the standalone co-signer and executor signing service): POST JSON
 * with the bearer secret, `{result}` back, or its refusal with the same code. No answer, a wrong
 * secret or anything else is `down` (503), and nothing was signed.
 */
export async function signerCall<T>(o: {
  url: string;
  token: string;
  path: string;
  body: unknown;
  timeoutMs: number;
  down: "SIGNER_UNAVAILABLE" | "SIGNER_REQUIRED";
  who: string;
}): Promise<T> {
  let res: NodeResponse;
  try {
    // node:http with kept-alive connections (lib/nodeFetch.ts): a session trade's co-signature is on its path.
    res = await nodeFetch(`${o.url.replace(/\/$/, "")}/v1/${o.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${o.token}` },
      body: JSON.stringify(o.body ?? {}),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    throw new Refusal(o.down, `${o.who} did not answer; nothing was signed`, {}, { cause: err, retryAfterS: 2 });
  }
  const json = (await res.json().catch(() => null)) as {
    result?: T;
    error?: { code: string; message: string } & Record<string, unknown>;
  } | null;
  if (res.ok && json && "result" in json) return json.result as T;
  const e = json?.error;
  // A wrong secret (401) or a route it does not serve (another signing service's URL) is no answer.
  if (e && res.status !== 401 && e.code !== "NOT_FOUND" && isCode(e.code)) {
    const { code, message, ...extra } = e;
    throw new Refusal(code, message, extra);
  }
  throw new Refusal(o.down, `${o.who} answered ${res.status}; nothing was signed`, {}, { retryAfterS: 2 });
}
