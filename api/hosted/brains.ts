import { createHmac, timingSafeEqual } from "node:crypto";
import { lookup as dnsLookup } from "node:dns";
import { lookup } from "node:dns/promises";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { isGlobalUnicast } from "../../lib/netAddress.js";
import { ordersAnswer, ruleParams, type Order } from "./request.js";
import type { StoredAgent } from "./store.js";

/** What a brain sees each tick: the agent's book valued at independent marks, its limits, its last decision. */
export type TickState = {
  agent: { id: string; name: string; mode: string; pairs: string[]; limits: StoredAgent["limits"]; interval_s: number };
  tick: number;
  at: number;
  block: number;
  /** Per token symbol: whole units held and their USD value (null when unpriced). */
  book: Record<string, { amount: string; usd: number | null }>;
  marks: Record<string, number | null>;
  value_usd: number;
  last_decision: Record<string, unknown> | null;
};

/**
 * A brain's answer: orders to fill, or a refusal code that is logged (a `hold` or an `error` row)
 * and trades nothing. AI decisions also name who paid (`source`) and, when the owner paid, why the
 * service's credits did not (`poolHold`).
 */
export type Decision = (
  | { orders: Order[]; note?: string }
  | { refused: string; message: string; kind?: "hold" | "error" }
) & { poolHold?: string; source?: "service" | "own" };

/**
 * Orders checked against the agent's pairs and per-trade limit: the first that breaks a rule refuses
 * the whole answer.
 */
export function checkOrders(agent: StoredAgent, orders: Order[]): { code: string; message: string } | null {
  const tokens = new Set(agent.pairs.flatMap((p) => p.split("/")));
  for (const o of orders) {
    if (!tokens.has(o.token_in) || !tokens.has(o.token_out))
      return {
        code: "AI_TOKEN",
        message: `${tokens.has(o.token_in) ? o.token_out : o.token_in} is not in the agent's pairs`,
      };
    if (!agent.pairs.includes(`${o.token_in}/${o.token_out}`) && !agent.pairs.includes(`${o.token_out}/${o.token_in}`))
      return { code: "AI_PAIR", message: `${o.token_in}/${o.token_out} is not one of the agent's pairs` };
    if (o.amount_usd < 1 || o.amount_usd > agent.limits.max_trade_usd)
      return { code: "AI_SIZE", message: `$${o.amount_usd} is outside 1 to ${agent.limits.max_trade_usd}` };
  }
  return null;
}

/**
 * Rebalance to target weights: the most overweight token goes to the most underweight, once the drift
 * passes the band.
 */
export function ruleBrain(agent: StoredAgent, s: TickState): Decision {
  const p = ruleParams.parse(agent.params);
  if (s.value_usd <= 0) return { orders: [], note: "empty book" };
  const drift = Object.entries(p.targets).map(([sym, w]) => ({ sym, usd: (s.book[sym]?.usd ?? 0) - w * s.value_usd }));
  const over = drift.reduce((a, b) => (b.usd > a.usd ? b : a));
  const under = drift.reduce((a, b) => (b.usd < a.usd ? b : a));
  const move = Math.min(over.usd, -under.usd);
  if (move < (p.band_bps / 10_000) * s.value_usd) return { orders: [], note: `within ${p.band_bps} bps of targets` };
  return {
    orders: [{ token_in: over.sym, token_out: under.sym, amount_usd: Math.min(move, agent.limits.max_trade_usd) }],
    note: `rebalance ${over.sym} -> ${under.sym}`,
  };
}

/** Standard Webhooks v1 signature of `${id}.${timestamp}.${body}` with the secret's bytes (base64 after `whsec_`). */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** Whether `header` (space-separated `v1,<sig>` entries) holds the signature of this message under `secret`. */
export function webhookVerifies(secret: string, id: string, timestamp: number, body: string, header: string): boolean {
  const want = Buffer.from(webhookSignature(secret, id, timestamp, body));
  return header.split(" ").some((sig) => {
    const got = Buffer.from(sig);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * A host that is, or whose DNS names, a private address (checked each tick; a name that does not
 * resolve is refused too).
 */
export async function resolvesPrivate(host: string): Promise<boolean> {
  if (privateHost(host)) return true;
  if (isIP(host.replace(/^\[|\]$/g, ""))) return false;
  try {
    const found = await Promise.race([
      lookup(host, { all: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("DNS timeout")), DNS_TIMEOUT_MS).unref()),
    ]);
    return found.some((a) => privateHost(a.address));
  } catch {
    return true;
  }
}

/**
 * Whether a webhook host is refused off the devnet: localhost names, and any IP literal that is
 * not global unicast (lib/netAddress: ipaddr.js's special-purpose ranges as an allow-list). Other
 * names are not decided here: their DNS answers are, by resolvesPrivate and at connect.
 */
export function privateHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".internal")) return true;
  const global = isGlobalUnicast(h);
  return global !== null && !global;
}

/** An answer larger than this is refused unread. */
const MAX_ANSWER_BYTES = 65_536;
const DNS_TIMEOUT_MS = 2_000;

type Posted =
  | { status: number; text: string }
  | { error: "timeout" | "unreachable" | "private" | "too_big"; message: string };

/**
 * POSTs `body` with node:http(s): the address is checked when the socket connects (a name that
 * resolved to a public address for a check and to a private one for the request cannot slip
 * through), DNS is bounded in time, redirects are not followed, and the answer is read up to
 * MAX_ANSWER_BYTES.
 */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  o: { allowPrivate: boolean; timeoutMs: number; lookup?: typeof dnsLookup },
): Promise<Posted> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (p: Posted) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(p);
    };
    // Node may ask for one address or, choosing a family itself, for all: every one is checked.
    const guardedLookup = ((
      host: string,
      opts: { all?: boolean },
      cb: (err: Error | null, address: unknown, family?: number) => void,
    ) => {
      const t = setTimeout(
        () => cb(new Error(`DNS for ${host} took over ${DNS_TIMEOUT_MS} ms`), opts.all ? [] : ""),
        DNS_TIMEOUT_MS,
      );
      (o.lookup ?? dnsLookup)(
        host,
        { ...opts, all: true } as never,
        ((err: Error | null, found: { address: string; family: number }[]) => {
          clearTimeout(t);
          if (err) return cb(err, opts.all ? [] : "");
          const list = Array.isArray(found) ? found : [{ address: String(found), family: isIP(String(found)) || 4 }];
          if (!list.length) return cb(new Error(`${host} has no address`), opts.all ? [] : "");
          if (!o.allowPrivate && list.some((a) => privateHost(a.address)))
            return cb(
              Object.assign(new Error(`${host} resolves to a private address`), { code: "PRIVATE" }),
              opts.all ? [] : "",
            );
          if (opts.all) cb(null, list);
          else cb(null, list[0]!.address, list[0]!.family);
        }) as never,
      );
    }) as unknown as LookupFunction;
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(
      url,
      { method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, lookup: guardedLookup },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_ANSWER_BYTES)
            return finish({ error: "too_big", message: `the answer passed ${MAX_ANSWER_BYTES} bytes` });
          chunks.push(c);
        });
        res.on("end", () => finish({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (err) => finish({ error: "unreachable", message: err.message.slice(0, 200) }));
      },
    );
    const timer = setTimeout(
      () => finish({ error: "timeout", message: `no answer within ${o.timeoutMs} ms` }),
      o.timeoutMs,
    );
    req.on("error", (err: NodeJS.ErrnoException) =>
      finish({ error: err.code === "PRIVATE" ? "private" : "unreachable", message: err.message.slice(0, 200) }),
    );
    req.end(body);
  });
}

/**
 * The webhook brain: POSTs the tick's state to the owner's URL, signed per Standard Webhooks
 * (webhook-id = agent:tick, stable across retries), 10 s timeout, no redirects; the answer must be
 * exactly {orders, note?}. Failures are refusal codes, never exceptions; their messages name no
 * field of the answer (an internal service's answer must not be echoed into the logs).
 */
export async function webhookBrain(
  agent: StoredAgent,
  s: TickState,
  o: { allowPrivate: boolean; timeoutMs?: number; lookup?: typeof dnsLookup },
): Promise<Decision> {
  const url = new URL(String(agent.params.url));
  const timeoutMs = o.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  if (!o.allowPrivate && privateHost(url.hostname))
    return { refused: "PARTNER_REJECTED", message: `${url.hostname} is a private or loopback address` };
  const id = `${agent.id}:${s.tick}`;
  const timestamp = Math.floor(s.at / 1000);
  const body = JSON.stringify(s);
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": webhookSignature(agent.webhookSecret!, id, timestamp, body),
  };
  const res = await post(url, headers, body, { allowPrivate: o.allowPrivate, timeoutMs, lookup: o.lookup });
  if ("error" in res) {
    if (res.error === "timeout") return { refused: "PARTNER_TIMEOUT", message: res.message };
    if (res.error === "private")
      return { refused: "PARTNER_REJECTED", message: `${url.hostname} resolves to a private or loopback address` };
    if (res.error === "too_big") return { refused: "AI_MALFORMED", message: res.message };
    return { refused: "PARTNER_UNREACHABLE", message: res.message };
  }
  if (res.status < 200 || res.status >= 300)
    return {
      refused: "PARTNER_REJECTED",
      message:
        res.status >= 300 && res.status < 400
          ? "the webhook answered a redirect (not followed)"
          : "the webhook did not answer 2xx",
    };
  let answer: unknown;
  try {
    answer = JSON.parse(res.text);
  } catch {
    return { refused: "AI_MALFORMED", message: "the answer is not one JSON object" };
  }
  if (typeof answer !== "object" || answer === null || Array.isArray(answer))
    return { refused: "AI_MALFORMED", message: "the answer is not one JSON object" };
  const parsed = ordersAnswer.safeParse(answer);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    if (i.code === "too_big" && i.path.join(".") === "orders")
      return { refused: "AI_TOO_MANY", message: "more than 5 orders" };
    return {
      refused: "AI_SCHEMA",
      message:
        i.code === "unrecognized_keys"
          ? "the answer holds fields other than orders and note"
          : `${i.path.join(".") || "answer"} is not as asked`,
    };
  }
  return parsed.data;
}
