import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
export async function startGatewayStandIn(o: { apiKey?: string; models?: string[] } = {}) {
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
    calls.push(call);
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
