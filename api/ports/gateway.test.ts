import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startGatewayStandIn } from "../../devnet/gatewayStandIn.js";
import {
  costUsd,
  estimatePromptTokens,
  openaiGateway,
  worstCaseUsd,
  type CompletionAsk,
  type CompletionResult,
  type ModelPrice,
} from "./gateway.js";

const SYSTEM = "You trade for agent 7. Answer one JSON object {orders:[...]}.";
const USER = "Pairs: WETH/USDC. Marks: WETH 3120.55. Secret-ish prompt text 9f8e7d.";
const SCHEMA = {
  type: "object",
  properties: { orders: { type: "array", items: { type: "object" } } },
  required: ["orders"],
  additionalProperties: false,
};
const ask = (over: Partial<CompletionAsk> = {}): CompletionAsk => ({
  model: "stand-in/small",
  system: SYSTEM,
  user: USER,
  schemaName: "orders",
  schema: SCHEMA,
  maxCompletionTokens: 400,
  timeoutMs: 5_000,
  ...over,
});
const PRICE: ModelPrice = { input: 0.15, output: 0.6, structured: null, source: "test table" };

type Failed = Extract<CompletionResult, { ok: false }>;
const failed = (r: CompletionResult): Failed => {
  if (r.ok) throw new Error(`expected a failure, got ok with ${r.text}`);
  return r;
};

let gw: Awaited<ReturnType<typeof startGatewayStandIn>>;

beforeAll(async () => {
  gw = await startGatewayStandIn();
});
afterAll(() => gw.close());
beforeEach(() => {
  gw.calls.length = 0;
  gw.script(null);
});

describe("costUsd / worstCaseUsd / estimatePromptTokens", () => {
  it("counts cached tokens inside the prompt and reasoning tokens inside the completion, once", () => {
    const usage = {
      prompt_tokens: 1_000_000,
      completion_tokens: 1_000_000,
      cached_tokens: 400_000,
      reasoning_tokens: 900_000,
    };
    expect(costUsd(usage, { input: 1, output: 2, structured: null, source: "t" })).toBe(3);
    expect(costUsd(usage, { input: 1, output: 2, structured: 5, source: "t" })).toBe(6);
  });

  it("rounds to 1e-9 USD and refuses a price that is not a non-negative number", () => {
    expect(
      costUsd(
        { prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reasoning_tokens: 0 },
        { input: 0.1234567, output: 0, structured: null, source: "t" },
      ),
    ).toBe(1.23e-7);
    expect(() =>
      costUsd(
        { prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reasoning_tokens: 0 },
        { input: Number.NaN, output: 1, structured: null, source: "t" },
      ),
    ).toThrow(RangeError);
  });

  it(
    "bounds a call before it is made: the estimate covers the stand-in's count and the worst case covers the real " +
      "cost",
    async () => {
      const r = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask());
      if (!r.ok) throw new Error(r.message);
      const prompt = estimatePromptTokens(SYSTEM + USER);
      expect(prompt).toBeGreaterThanOrEqual(r.usage.prompt_tokens);
      expect(worstCaseUsd(prompt, 400, PRICE)).toBeGreaterThanOrEqual(costUsd(r.usage, PRICE));
      expect(worstCaseUsd(1_000_000, 1_000_000, { input: 1, output: 2, structured: 3, source: "t" })).toBe(4);
    },
  );
});

describe("openaiGateway against the stand-in", () => {
  it("answers the text, the usage and the cost header of a valid answer", async () => {
    const orders = { orders: [{ sell: "USDC", buy: "WETH", usd: 25 }] };
    gw.script(() => ({ json: orders, usage: { prompt_tokens: 1200, completion_tokens: 300 }, costUsd: 0.00042 }));
    const r = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask());
    expect(r).toMatchObject({
      ok: true,
      text: JSON.stringify(orders),
      usage: { prompt_tokens: 1200, completion_tokens: 300, cached_tokens: 0, reasoning_tokens: 0 },
      usageEstimated: false,
      costHeaderUsd: 0.00042,
    });
    expect(r.ms).toBeGreaterThanOrEqual(0);
  });

  it(
    "sends one chat completion: system then user, max_completion_tokens, response_format json_schema strict, the " +
      "bearer key",
    async () => {
      await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask({ maxCompletionTokens: 321 }));
      expect(gw.calls).toHaveLength(1);
      const call = gw.calls[0]!;
      expect(call.authorized).toBe(true);
      expect(call.model).toBe("stand-in/small");
      expect(call.messages).toEqual([
        { role: "system", content: SYSTEM },
        { role: "user", content: USER },
      ]);
      expect(call.max_completion_tokens).toBe(321);
      expect(call.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "orders", schema: SCHEMA, strict: true },
      });
      expect(call.body.stream).toBeUndefined();
    },
  );

  it("reads cached and reasoning tokens from the answer without double counting them in the cost", async () => {
    gw.script(() => ({
      usage: { prompt_tokens: 2_000, completion_tokens: 1_000, cached_tokens: 1_500, reasoning_tokens: 800 },
    }));
    const r = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask());
    if (!r.ok) throw new Error(r.message);
    expect(r.usage).toEqual({
      prompt_tokens: 2_000,
      completion_tokens: 1_000,
      cached_tokens: 1_500,
      reasoning_tokens: 800,
    });
    expect(costUsd(r.usage, PRICE)).toBe((2_000 * 0.15 + 1_000 * 0.6) / 1e6);
  });

  it("reads a cost header under the name the gateway uses, and ignores one that is not a number", async () => {
    gw.script(() => ({ headers: { "x-or-cost": "0.0031", "x-gateway-cost-usd": "free" } }));
    const named = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey, costHeader: "X-OR-Cost" }).complete(ask());
    const junk = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask());
    expect(named).toMatchObject({ ok: true, costHeaderUsd: 0.0031 });
    expect(junk).toMatchObject({ ok: true, costHeaderUsd: null });
  });

  it("passes malformed content through as ok with its text: the caller judges it", async () => {
    gw.script(() => ({ content: "Sure! {orders: [buy ETH" }));
    const r = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask());
    expect(r).toMatchObject({ ok: true, text: "Sure! {orders: [buy ETH" });
  });

  it("counts an answer without usage at its bound and says so", async () => {
    gw.script(() => ({ usage: null }));
    const r = await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask({ maxCompletionTokens: 500 }));
    expect(r).toMatchObject({
      ok: true,
      usageEstimated: true,
      usage: { prompt_tokens: estimatePromptTokens(SYSTEM + USER), completion_tokens: 500 },
    });
  });

  it("fails an answer with no choices as a gateway error that may have run, keeping its usage", async () => {
    const gateway = openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey });
    gw.script(() => ({ content: "" }));
    const r = failed(await gateway.complete(ask()));
    expect(r).toMatchObject({ code: "PARTNER_GATEWAY_ERROR", mayHaveRun: true, status: 200 });
    expect(r.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("times out a slow gateway at the call's timeout: PARTNER_TIMEOUT that may have run", async () => {
    gw.script(() => ({ delayMs: 3_000 }));
    const r = failed(await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask({ timeoutMs: 300 })));
    expect(r).toMatchObject({ code: "PARTNER_TIMEOUT", mayHaveRun: true, status: null, usage: null });
    expect(r.ms).toBeGreaterThanOrEqual(250);
    expect(r.ms).toBeLessThan(2_000);
    expect(gw.calls).toHaveLength(1);
  });

  it("times out a gateway that sends its headers and then stalls the body", async () => {
    gw.script(() => ({ bodyDelayMs: 3_000 }));
    const r = failed(await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask({ timeoutMs: 300 })));
    expect(r).toMatchObject({ code: "PARTNER_TIMEOUT", mayHaveRun: true });
    expect(r.ms).toBeLessThan(2_000);
  });

  it.each([
    [500, "PARTNER_GATEWAY_ERROR", true],
    [502, "PARTNER_UNAVAILABLE", true],
    [504, "PARTNER_GATEWAY_ERROR", true],
    [503, "PARTNER_BUSY", true],
    [429, "PARTNER_RATE", false],
    [402, "PARTNER_BALANCE", false],
    [403, "PARTNER_REJECTED", false],
    [422, "PARTNER_REJECTED", true],
  ] as const)(
    "maps %i to %s (mayHaveRun %s) after exactly one request: no hidden retries",
    async (status, code, mayHaveRun) => {
      gw.script(() => ({ status, headers: { "retry-after-ms": "0", "x-should-retry": "true" } }));
      const r = failed(await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask()));
      expect(r).toMatchObject({ code, mayHaveRun, status });
      expect(gw.calls).toHaveLength(1);
    },
  );

  it("refuses a wrong key as PARTNER_REJECTED, and no message carries the key or the prompt", async () => {
    const wrongKey = "sk-wrong-0123456789abcdef";
    const r = failed(await openaiGateway({ baseURL: gw.url, apiKey: wrongKey }).complete(ask()));
    expect(r).toMatchObject({ code: "PARTNER_REJECTED", mayHaveRun: false, status: 401 });
    expect(gw.calls[0]!.authorized).toBe(false);
    gw.script(() => ({
      status: 400,
      errorBody: {
        error: { message: `bad request: ${USER} key ${gw.apiKey}`, type: "invalid_request_error", code: null },
      },
    }));
    const echo = failed(await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask()));
    expect(echo.code).toBe("PARTNER_REJECTED");
    for (const m of [r.message, echo.message]) {
      expect(m).not.toContain(wrongKey);
      expect(m).not.toContain(gw.apiKey);
      expect(m).not.toContain("9f8e7d");
    }
  });

  it("maps a model the gateway does not serve (404, or a 400 about the model) to MODEL_NOT_ALLOWED", async () => {
    const gateway = openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey });
    const missing = failed(await gateway.complete(ask({ model: "vendor/nonexistent" })));
    expect(missing).toMatchObject({ code: "MODEL_NOT_ALLOWED", mayHaveRun: false, status: 404 });
    gw.script(() => ({
      status: 400,
      errorBody: { error: { message: "stand-in/small is not a valid model ID", code: 400 } },
    }));
    expect(failed(await gateway.complete(ask()))).toMatchObject({ code: "MODEL_NOT_ALLOWED", status: 400 });
    gw.script(() => ({
      status: 400,
      errorBody: {
        error: {
          message: "This model's maximum context length is 8192 tokens.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
    }));
    expect(failed(await gateway.complete(ask()))).toMatchObject({ code: "PARTNER_REJECTED", status: 400 });
  });

  it("fails a closed port as PARTNER_UNREACHABLE that did not run", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const r = failed(await openaiGateway({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "sk-x" }).complete(ask()));
    expect(r).toMatchObject({ code: "PARTNER_UNREACHABLE", mayHaveRun: false, status: null });
    expect(r.message).toContain("ECONNREFUSED");
  });

  it("fails a dropped connection after the request was sent as PARTNER_UNREACHABLE that may have run", async () => {
    gw.script(() => ({ destroy: true }));
    const r = failed(await openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey }).complete(ask()));
    expect(r).toMatchObject({ code: "PARTNER_UNREACHABLE", mayHaveRun: true, status: null });
    expect(gw.calls).toHaveLength(1);
  });
});

describe("the stand-in's models list", () => {
  it("lists its models to the right key through the SDK and refuses a wrong one", async () => {
    const ids = [];
    for await (const m of new OpenAI({ baseURL: gw.url, apiKey: gw.apiKey, maxRetries: 0 }).models.list())
      ids.push(m.id);
    expect(ids).toEqual(["stand-in/small", "stand-in/large"]);
    const wrong = await fetch(`${gw.url}/models`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
  });
});
