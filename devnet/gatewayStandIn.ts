import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../lib/config.js";

/** What the stand-in saw: one chat completion request as sent, and whether its bearer key held. */
export type Call = {
  model: unknown;
  messages: Array<{ role?: unknown; content?: unknown }>;
  max_completion_tokens: unknown;
  response_format: any;
  authorized: boolean;
  /** The accepted key that made the call (null when refused). */
  key: string | null;
  body: any;
};

type UsageParts = { prompt_tokens: number; completion_tokens: number; cached_tokens: number; reasoning_tokens: number };

/**
 * Its answer to one call. content (or json, serialised) and usage (null: the answer carries no
 * usage); or an error status with its body; a delay before the headers, or after them before the
 * body (bodyDelayMs); costUsd sets the x-gateway-cost-usd header; destroy drops the socket unanswered.
 */
export type Reply = {
  content?: string;
  json?: unknown;
  usage?: Partial<UsageParts> | null;
  status?: number;
  errorBody?: unknown;
  delayMs?: number;
  bodyDelayMs?: number;
  costUsd?: number;
  headers?: Record<string, string>;
  destroy?: boolean;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An OpenAI-style error body. */
const errorBody = (message: string, type: string, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});

const ERRORS: Record<number, [string, string]> = {
  400: ["invalid_request_error", "bad_request"],
  401: ["invalid_request_error", "invalid_api_key"],
  402: ["insufficient_quota", "insufficient_quota"],
  403: ["invalid_request_error", "forbidden"],
  404: ["invalid_request_error", "not_found"],
  429: ["rate_limit_exceeded", "rate_limit_exceeded"],
  500: ["server_error", "server_error"],
  503: ["server_error", "overloaded"],
};

const contentChars = (messages: Call["messages"]) =>
  messages.reduce(
    (n, m) => n + (typeof m?.content === "string" ? m.content.length : JSON.stringify(m?.content ?? "").length),
    0,
  );

/**
 * An OpenAI-compatible AI-model gateway stand-in on 127.0.0.1: POST /v1/chat/completions and
 * GET /v1/models behind `Authorization: Bearer <apiKey>` (a wrong key gets 401 with an OpenAI
 * error body), a model outside `models` gets 404 model_not_found, and every call answers what the
 * test scripted (default: content {"orders":[]}, usage prompt = ceil(message chars / 4),
 * completion = ceil(content chars / 4)).
 */
export async function startGatewayStandIn(o: { apiKey?: string; models?: string[]; keepCalls?: boolean } = {}) {
  const apiKey = o.apiKey ?? `sk-standin-${randomBytes(12).toString("hex")}`;
  // Further accounts (an owner's own key): each call records which key paid.
  const keys = new Set([apiKey]);
  const models = o.models ?? ["stand-in/small", "stand-in/large"];
  const calls: Call[] = [];
  let scripted: ((call: Call) => Reply) | null = null;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "/").split("?")[0]!;
    const bearer = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    const authorized = keys.has(bearer);
    const unauthorized = () =>
      send(res, 401, errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));

    if (req.method === "GET" && path === "/v1/models") {
      if (!authorized) return unauthorized();
      return send(res, 200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "stand-in" })),
      });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return send(
        res,
        404,
        errorBody(`Unknown request URL: ${req.method} ${path}`, "invalid_request_error", "unknown_url"),
      );
    }

    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return send(res, 400, errorBody("The request body is not valid JSON.", "invalid_request_error", "invalid_json"));
    }
    const messages = Array.isArray(body?.messages) ? body.messages : [];
    const call: Call = {
      model: body?.model,
      messages,
      max_completion_tokens: body?.max_completion_tokens,
      response_format: body?.response_format,
      authorized,
      key: authorized ? bearer : null,
      body,
    };
    // A long-running devnet keeps no history (it would only grow); tests read it.
    if (o.keepCalls !== false) calls.push(call);
    if (!authorized) return unauthorized();
    if (typeof call.model !== "string" || !models.includes(call.model)) {
      return send(
        res,
        404,
        errorBody(
          `The model \`${String(call.model)}\` does not exist or you do not have access to it.`,
          "invalid_request_error",
          "model_not_found",
          "model",
        ),
      );
    }

    const reply = scripted?.(call) ?? {};
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if (reply.destroy) return void req.socket.destroy();

    const headers: Record<string, string> = { ...reply.headers };
    if (reply.costUsd !== undefined) headers["x-gateway-cost-usd"] = String(reply.costUsd);
    const status = reply.status ?? 200;
    if (status !== 200) {
      const [type, code] = ERRORS[status] ?? ["server_error", `status_${status}`];
      return send(res, status, reply.errorBody ?? errorBody(`stand-in answered ${status}`, type, code), headers);
    }

    const content =
      reply.content ?? (reply.json !== undefined ? JSON.stringify(reply.json) : JSON.stringify({ orders: [] }));
    const u = reply.usage;
    const prompt = u?.prompt_tokens ?? Math.ceil(contentChars(messages) / 4);
    const completion = u?.completion_tokens ?? Math.ceil(content.length / 4);
    const completionObject = {
      id: `chatcmpl-${randomBytes(8).toString("hex")}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: call.model,
      choices: [
        { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
      ],
      ...(u === null
        ? {}
        : {
            usage: {
              prompt_tokens: prompt,
              completion_tokens: completion,
              total_tokens: prompt + completion,
              prompt_tokens_details: { cached_tokens: u?.cached_tokens ?? 0 },
              completion_tokens_details: { reasoning_tokens: u?.reasoning_tokens ?? 0 },
            },
          }),
    };
    if (reply.bodyDelayMs) {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.flushHeaders();
      await sleep(reply.bodyDelayMs);
      if (!res.destroyed) res.end(JSON.stringify(completionObject));
      return;
    }
    send(res, 200, completionObject, headers);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    /** A second account's key (an owner's own); answers it. */
    addKey: (k: string) => void keys.add(k),
    dropKey: (k: string) => void keys.delete(k),
    calls,
    /** How the stand-in answers from now on (null: the default answer). */
    script: (fn: ((call: Call) => Reply) | null) => void (scripted = fn),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * The models `npm start` offers on the devnet when no gateway is configured (AI_MODELS' format):
 * made-up prices in USD per million tokens, named as stand-ins.
 */
export const DEVNET_AI_MODELS = [
  { id: "stand-in/small", input: 0.15, output: 0.6, source: "stand-in" },
  { id: "stand-in/large", input: 2.5, output: 10, source: "stand-in" },
];
/** The devnet's pool for AI calls (USD per UTC day) when the stand-in pays: new owners' trials use it at once. */
export const DEVNET_AI_POOL_USD_DAY = "5";

/** One stand-in order's size: small, so a paper book sees many. */
const DEVNET_ORDER_USD = 10;

/**
 * The devnet stand-in's answer (no model behind it): a fixed rule a newcomer can follow in the logs.
 * It moves up to $10 (at most the per-trade limit, half the holding) of the largest priced holding
 * into the other token of the first pair that names it; nothing when no holding is worth $2. It reads
 * the decision's prompt as the service sends it (a JSON state); anything else gets no orders.
 */
export function devnetAnswer(call: Call): Reply {
  const none = (why: string): Reply => ({ json: { orders: [], note: `stand-in ${String(call.model)}: ${why}` } });
  let s: any;
  try {
    s = JSON.parse(String(call.messages.findLast((m) => m?.role === "user")?.content));
  } catch {
    return none("the prompt is not the service's JSON state");
  }
  const pairs: string[] = Array.isArray(s?.pairs) ? s.pairs.filter((p: unknown) => typeof p === "string") : [];
  const held = Object.entries((s?.book ?? {}) as Record<string, { usd?: unknown }>)
    .map(([sym, h]) => ({ sym, usd: typeof h?.usd === "number" ? h.usd : 0 }))
    .filter((h) => pairs.some((p) => p.split("/").includes(h.sym)))
    .sort((a, b) => b.usd - a.usd)[0];
  const maxTrade = Number(s?.limits?.max_trade_usd ?? 0);
  const amount = Math.floor(Math.min(DEVNET_ORDER_USD, maxTrade, (held?.usd ?? 0) / 2) * 100) / 100;
  if (!held || amount < 1) return none("no holding to move");
  const pair = pairs.find((p) => p.split("/").includes(held.sym))!;
  const other = pair.split("/").find((x) => x !== held.sym)!;
  return {
    json: {
      orders: [{ token_in: held.sym, token_out: other, amount_usd: amount }],
      note: `stand-in ${String(call.model)}: moves $${amount} of ${held.sym} into ${other}`,
    },
  };
}

/**
 * `npm start`'s AI gateway: none off the devnet or when AI_GATEWAY_URL names one; else the stand-in
 * serving AI_MODELS' models (DEVNET_AI_MODELS when unset) behind AI_GATEWAY_KEY (or a key drawn
 * now), answering devnetAnswer, and the environment that gives it to the API: marked as a stand-in,
 * with a pool (DEVNET_AI_POOL_USD_DAY unless AI_POOL_USD_DAY is set) so an AI agent decides at once.
 */
export async function startDevnetGateway(
  config: Pick<Config, "devnet" | "ai">,
  env: Record<string, string | undefined> = process.env,
) {
  if (!config.devnet || config.ai.gatewayUrl) return null;
  const models = config.ai.models.length ? config.ai.models.map((m) => m.id) : DEVNET_AI_MODELS.map((m) => m.id);
  const standIn = await startGatewayStandIn({ models, apiKey: config.ai.gatewayKey ?? undefined, keepCalls: false });
  standIn.script(devnetAnswer);
  return {
    url: standIn.url,
    models,
    close: standIn.close,
    apiEnv: {
      AI_GATEWAY_URL: standIn.url,
      AI_GATEWAY_KEY: standIn.apiKey,
      AI_GATEWAY_STAND_IN: "true",
      AI_MODELS: env.AI_MODELS ?? JSON.stringify(DEVNET_AI_MODELS),
      AI_POOL_USD_DAY: env.AI_POOL_USD_DAY ?? DEVNET_AI_POOL_USD_DAY,
    },
  };
}
