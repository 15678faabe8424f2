import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";

/**
 * The AI-model gateway behind the `partner_llm` brain: one OpenAI-compatible chat completion per
 * tick, asked for one JSON object under a strict schema. Prices, the cost of an answer, the worst
 * case reserved before a call, and the failures a call can end in (SPEC "Failed calls").
 */

/**
 * A model's price in USD per million tokens; `structured` (when set) replaces the output price
 * under structured output.
 */
export type ModelPrice = { input: number; output: number; structured: number | null; source: string };

/** Tokens one call used. `cached_tokens` are inside `prompt_tokens`, `reasoning_tokens` inside `completion_tokens`. */
export type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
};

export type GatewayFailure =
  | "PARTNER_TIMEOUT"
  | "PARTNER_GATEWAY_ERROR"
  | "PARTNER_UNREACHABLE"
  | "PARTNER_UNAVAILABLE"
  | "PARTNER_REJECTED"
  | "PARTNER_RATE"
  | "PARTNER_BALANCE"
  | "PARTNER_BUSY"
  | "MODEL_NOT_ALLOWED";

export type CompletionAsk = {
  model: string;
  system: string;
  user: string;
  schemaName: string;
  schema: Record<string, unknown>;
  maxCompletionTokens: number;
  timeoutMs: number;
};

/**
 * One call's outcome. ok: the answer's text (not yet validated: it may not even be JSON), its usage
 * and the gateway's cost header when present; `usageEstimated` is true when the answer carried no
 * usage and `usage` is the bound (estimated prompt, the whole completion allowance) instead.
 * Not ok: the SPEC code, a message free of the key and the prompt, and `mayHaveRun` when the
 * gateway may have run (and billed) the model without our seeing the answer.
 */
export type CompletionResult =
  | { ok: true; text: string; usage: Usage; usageEstimated: boolean; costHeaderUsd: number | null; ms: number }
  | {
      ok: false;
      code: GatewayFailure;
      message: string;
      mayHaveRun: boolean;
      status: number | null;
      usage: Usage | null;
      ms: number;
    };

export interface GatewayPort {
  /** Never throws: every failure is a result with its code. */
  complete(ask: CompletionAsk): Promise<CompletionResult>;
}

const PER_MILLION = 1_000_000;
const NANO = 1e9;

function checkPrice(price: ModelPrice) {
  for (const v of [price.input, price.output, price.structured ?? 0]) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`price of ${price.source} is not a non-negative number`);
  }
}

/** The price per million completion tokens: every call asks for structured output. */
const completionPrice = (price: ModelPrice) => price.structured ?? price.output;

/**
 * What a call cost in USD, to 1e-9: prompt tokens at the input price (cached ones too: we keep no
 * cached price, so they are counted at the full input price), completion tokens at the structured
 * (else output) price. Cached and reasoning tokens are never added a second time.
 */
export function costUsd(usage: Usage, price: ModelPrice): number {
  checkPrice(price);
  const usd = (usage.prompt_tokens * price.input + usage.completion_tokens * completionPrice(price)) / PER_MILLION;
  return Math.round(usd * NANO) / NANO;
}

/**
 * The most a call may cost before it is made: the prompt estimate and the whole completion
 * allowance, rounded up to 1e-9.
 */
export function worstCaseUsd(promptTokens: number, maxCompletionTokens: number, price: ModelPrice): number {
  checkPrice(price);
  const usd = (promptTokens * price.input + maxCompletionTokens * completionPrice(price)) / PER_MILLION;
  return Math.ceil(usd * NANO - 1e-6) / NANO;
}

/**
 * An upper bound of the tokens `text` takes as a prompt, without a tokenizer: one token per UTF-8
 * byte (a byte-level BPE never needs more; ordinary text takes about a quarter of that), plus 32
 * for the chat framing and the schema's tokens. Reservations are made on it, so it must bound
 * even text written to defeat merges (an owner's strategy); the answer's usage settles the count.
 */
export function estimatePromptTokens(text: string): number {
  return Buffer.byteLength(text, "utf8") + 32;
}

const count = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : null;

/** The usage an answer reports, or null when it reports none readable. Parts never exceed their totals. */
function readUsage(u: unknown): Usage | null {
  if (!u || typeof u !== "object") return null;
  const x = u as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
    completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  };
  const prompt = count(x.prompt_tokens);
  const completion = count(x.completion_tokens);
  if (prompt === null || completion === null) return null;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: Math.min(prompt, count(x.prompt_tokens_details?.cached_tokens) ?? 0),
    reasoning_tokens: Math.min(completion, count(x.completion_tokens_details?.reasoning_tokens) ?? 0),
  };
}

/** The cost header as USD, or null when absent or not a plain non-negative number. */
function readCostHeader(v: string | null): number | null {
  if (v === null || !/^\s*\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(v)) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** A short token from the gateway's error (code or type), never its free text: that may echo the prompt. */
const tag = (v: unknown) => (typeof v === "string" ? v.replace(/[^\w.:-]/g, "").slice(0, 64) : "");

/** Error codes of a connection that never opened: the request was not sent. */
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

/** The system error codes along an error's causes (fetch's TypeError, undici's, AggregateError's members). */
function causeCodes(err: unknown, seen = new Set<unknown>()): string[] {
  if (!err || typeof err !== "object" || seen.has(err)) return [];
  seen.add(err);
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === "string" ? [e.code] : [];
  const members = Array.isArray(e.errors) ? e.errors.flatMap((m) => causeCodes(m, seen)) : [];
  return [...own, ...causeCodes(e.cause, seen), ...members];
}

const MODEL_WORDS = new RegExp(
  "(invalid|unknown|unsupported|not a valid|no such|not found|not available|does not exist|not allowed)" +
    "[^.]{0,40}\\bmodel\\b|\\bmodel\\b[^.]{0,60}" +
    "(is invalid|not found|not supported|unsupported|not available|does not exist|not allowed|is not a valid)",
  "i",
);

/** Whether a 400 is about the model: its param or code says so, or its message names the model or calls it unknown. */
function aboutModel(err: APIError, model: string): boolean {
  const body = (err.error ?? {}) as { message?: unknown };
  const text = typeof body.message === "string" ? body.message : "";
  return (
    err.param === "model" ||
    /model/i.test(String(err.code ?? "")) ||
    (model.length > 0 && text.includes(model)) ||
    MODEL_WORDS.test(text)
  );
}

type Failure = Omit<Extract<CompletionResult, { ok: false }>, "ms">;

function statusFailure(err: APIError & { status: number }, model: string): Failure {
  const s = err.status;
  const detail = tag(err.code) || tag(err.type);
  const message = `gateway answered ${s}${detail ? ` (${detail})` : ""}`;
  const f = (code: GatewayFailure, mayHaveRun: boolean): Failure => ({
    ok: false,
    code,
    message,
    mayHaveRun,
    status: s,
    usage: null,
  });
  if (s === 429) return f("PARTNER_RATE", false);
  if (s === 402) return f("PARTNER_BALANCE", false);
  if (s === 401 || s === 403) return f("PARTNER_REJECTED", false);
  if (s === 404 || (s === 400 && aboutModel(err, model))) return f("MODEL_NOT_ALLOWED", false);
  // A plain 400 refuses the request before the model runs; other 4xx (408, 409, 422, 499...) may
  // come after a proxy billed the call: counted at the worst case.
  if (s === 400) return f("PARTNER_REJECTED", false);
  if (s > 400 && s < 500) return f("PARTNER_REJECTED", true);
  if (s === 503) return f("PARTNER_BUSY", true);
  // A 502 is the gateway saying the model behind it is down or answered nothing it could use (the
  // gateway itself works): PARTNER_UNAVAILABLE, a failed call that may have run upstream.
  if (s === 502) return f("PARTNER_UNAVAILABLE", true);
  return f("PARTNER_GATEWAY_ERROR", true);
}

function failure(err: unknown, timedOut: boolean, ask: CompletionAsk, timeoutMs: number): Failure {
  if (err instanceof APIError && typeof err.status === "number")
    return statusFailure(err as APIError & { status: number }, ask.model);
  // The SDK's own timeout covers the wait for headers; our deadline (an abort) also covers the body.
  if (err instanceof APIConnectionTimeoutError || timedOut) {
    return {
      ok: false,
      code: "PARTNER_TIMEOUT",
      message: `no answer within ${timeoutMs} ms`,
      mayHaveRun: true,
      status: null,
      usage: null,
    };
  }
  if (err instanceof APIConnectionError) {
    const codes = causeCodes(err);
    const neverSent = codes.some((c) => NEVER_SENT.has(c));
    const why = tag(codes[0]) || "connection failed";
    return {
      ok: false,
      code: "PARTNER_UNREACHABLE",
      message: `gateway unreachable (${why})`,
      mayHaveRun: !neverSent,
      status: null,
      usage: null,
    };
  }
  // A 2xx whose body could not be read (broken JSON, cut short): the model may well have run.
  return {
    ok: false,
    code: "PARTNER_GATEWAY_ERROR",
    message: `gateway answer unreadable (${tag((err as Error)?.name) || "error"})`,
    mayHaveRun: true,
    status: null,
    usage: null,
  };
}

/** The SDK's timeout when a call names none (each call passes its own). */
const DEFAULT_TIMEOUT_MS = 30_000;

/** One chat completion asked for `ask`'s JSON object, with the raw response (for the cost header). */
function askCompletion(client: OpenAI, ask: CompletionAsk, timeoutMs: number, signal: AbortSignal) {
  return client.chat.completions
    .create(
      {
        model: ask.model,
        messages: [
          { role: "system", content: ask.system },
          { role: "user", content: ask.user },
        ],
        max_completion_tokens: ask.maxCompletionTokens,
        response_format: {
          type: "json_schema",
          json_schema: { name: ask.schemaName, schema: ask.schema, strict: true },
        },
      },
      { timeout: timeoutMs, maxRetries: 0, signal },
    )
    .withResponse();
}

/**
 * A 2xx answer read into the call's result: its first choice's text, its usage (or the bound when
 * it reports none) and the cost header; an answer with no text is PARTNER_GATEWAY_ERROR.
 */
function readAnswer(
  data: unknown,
  response: Response,
  ask: CompletionAsk,
  costHeader: string,
  ms: () => number,
): CompletionResult {
  if (!data || typeof data !== "object") {
    return {
      ok: false,
      code: "PARTNER_GATEWAY_ERROR",
      message: "gateway answer is not a chat completion",
      mayHaveRun: true,
      status: response.status,
      usage: null,
      ms: ms(),
    };
  }
  const a = data as {
    usage?: unknown;
    choices?: Array<{ message?: { content?: unknown } | null; finish_reason?: unknown } | null>;
  };
  const usage = readUsage(a.usage);
  const choice = Array.isArray(a.choices) ? a.choices[0] : undefined;
  const content = choice?.message?.content;
  if (typeof content !== "string" || content.length === 0) {
    const why = choice
      ? `no content${tag(choice.finish_reason) ? `, finish_reason ${tag(choice.finish_reason)}` : ""}`
      : "no choices";
    return {
      ok: false,
      code: "PARTNER_GATEWAY_ERROR",
      message: `gateway answer carried ${why}`,
      mayHaveRun: true,
      status: response.status,
      usage,
      ms: ms(),
    };
  }
  const costHeaderUsd = readCostHeader(response.headers.get(costHeader));
  if (usage) return { ok: true, text: content, usage, usageEstimated: false, costHeaderUsd, ms: ms() };
  const bound: Usage = {
    prompt_tokens: estimatePromptTokens(ask.system + ask.user),
    completion_tokens: Math.max(ask.maxCompletionTokens, Math.ceil(Buffer.byteLength(content, "utf8") / 3)),
    cached_tokens: 0,
    reasoning_tokens: 0,
  };
  return { ok: true, text: content, usage: bound, usageEstimated: true, costHeaderUsd, ms: ms() };
}

/** One call under its deadline; never throws (a failure is a result with its code). */
async function complete(client: OpenAI, costHeader: string, ask: CompletionAsk): Promise<CompletionResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const timeoutMs = Math.max(1, Math.ceil(ask.timeoutMs));
  // The SDK's timeout stops at the headers; this deadline also bounds reading the body.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const { data, response } = await askCompletion(client, ask, timeoutMs, deadline.signal);
    return readAnswer(data as unknown, response, ask, costHeader, ms);
  } catch (err) {
    return { ...failure(err, deadline.signal.aborted, ask, timeoutMs), ms: ms() };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The gateway through the `openai` SDK: no hidden retries (maxRetries 0; a retry is the caller's
 * choice and its cost), the call's own timeout, and nothing taken from OPENAI_* environment
 * variables but what cannot be turned off (OPENAI_CUSTOM_HEADERS). One chat completion with
 * `response_format` json_schema strict; the raw response is read for the cost header.
 */
export function openaiGateway(o: { baseURL: string; apiKey: string; costHeader?: string }): GatewayPort {
  const costHeader = (o.costHeader ?? "x-gateway-cost-usd").toLowerCase();
  const client = new OpenAI({
    baseURL: o.baseURL,
    apiKey: o.apiKey,
    maxRetries: 0,
    timeout: DEFAULT_TIMEOUT_MS,
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    // The SDK's debug log prints request bodies (the prompt): never from an environment variable.
    logLevel: "off",
  });
  return { complete: (ask) => complete(client, costHeader, ask) };
}
