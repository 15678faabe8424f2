import { createHmac, timingSafeEqual } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
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

/** A brain's answer: orders to fill, or a refusal code that is logged and trades nothing. */
export type Decision = { orders: Order[]; note?: string } | { refused: string; message: string };

/** Rebalance to target weights: the most overweight token goes to the most underweight, once the drift passes the band. */
export function ruleBrain(agent: StoredAgent, s: TickState): Decision {
  const p = ruleParams.parse(agent.params);
  if (s.value_usd <= 0) return { orders: [], note: "empty book" };
  const drift = Object.entries(p.targets).map(([sym, w]) => ({ sym, usd: (s.book[sym]?.usd ?? 0) - w * s.value_usd }));
  const over = drift.reduce((a, b) => (b.usd > a.usd ? b : a));
  const under = drift.reduce((a, b) => (b.usd < a.usd ? b : a));
  const move = Math.min(over.usd, -under.usd);
  if (move < (p.band_bps / 10_000) * s.value_usd) return { orders: [], note: `within ${p.band_bps} bps of targets` };
  return { orders: [{ token_in: over.sym, token_out: under.sym, amount_usd: Math.min(move, agent.limits.max_trade_usd) }], note: `rebalance ${over.sym} -> ${under.sym}` };
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

/** A host that is, or whose DNS names, a private address (checked each tick; a name that does not resolve is refused too). */
export async function resolvesPrivate(host: string): Promise<boolean> {
  if (privateHost(host)) return true;
  if (isIP(host.replace(/^\[|\]$/g, ""))) return false;
  try {
    return (await lookup(host, { all: true })).some((a) => privateHost(a.address));
  } catch {
    return true;
  }
}

/** Loopback, private, link-local and unspecified addresses (and localhost): refused as webhook targets off the devnet. */
export function privateHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".internal")) return true;
  const v = isIP(h);
  if (v === 4) {
    const [a, b] = h.split(".").map(Number) as [number, number];
    return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  if (v === 6) return h === "::1" || h === "::" || h.startsWith("fc") || h.startsWith("fd") || h.startsWith("fe80") || h.startsWith("::ffff:");
  return false;
}

/**
 * The webhook brain: POSTs the tick's state to the owner's URL, signed per Standard Webhooks
 * (webhook-id = agent:tick, stable across retries), 10 s timeout, no redirects; the answer must be
 * exactly {orders, note?}. Failures are refusal codes, never exceptions.
 */
export async function webhookBrain(agent: StoredAgent, s: TickState, o: { allowPrivate: boolean; timeoutMs?: number }): Promise<Decision> {
  const url = new URL(String(agent.params.url));
  if (!o.allowPrivate && (await resolvesPrivate(url.hostname))) return { refused: "PARTNER_REJECTED", message: `${url.hostname} is or resolves to a private or loopback address` };
  const id = `${agent.id}:${s.tick}`;
  const timestamp = Math.floor(s.at / 1000);
  const body = JSON.stringify(s);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": webhookSignature(agent.webhookSecret!, id, timestamp, body) },
      body,
      signal: AbortSignal.timeout(o.timeoutMs ?? WEBHOOK_TIMEOUT_MS),
    });
  } catch (err) {
    const timeout = (err as Error).name === "TimeoutError" || (err as Error).name === "AbortError";
    return timeout ? { refused: "PARTNER_TIMEOUT", message: `no answer within ${o.timeoutMs ?? WEBHOOK_TIMEOUT_MS} ms` } : { refused: "PARTNER_UNREACHABLE", message: (err as Error).message.slice(0, 200) };
  }
  if (res.status < 200 || res.status >= 300) return { refused: "PARTNER_REJECTED", message: `the webhook answered ${res.status}` };
  const text = (await res.text()).slice(0, 65_536);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { refused: "AI_MALFORMED", message: "the answer is not one JSON object" };
  }
  const parsed = ordersAnswer.safeParse(answer);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return { refused: "AI_MALFORMED", message: "the answer is not one JSON object" };
    if (i.code === "too_big" && i.path.join(".") === "orders") return { refused: "AI_TOO_MANY", message: "more than 5 orders" };
    return { refused: "AI_SCHEMA", message: `${i.path.join(".") || "answer"}: ${i.message}` };
  }
  return parsed.data;
}
