import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseBody, Refusal } from "./refusal.js";

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof Refusal) return [err.code, err.message];
  }
  return null;
};

describe("parseBody points a camelCase field to its snake_case name (issue 30)", () => {
  const strict = z.object({ token_in: z.string(), slippage_bps: z.number().optional() }).strict();
  const lenient = z.object({ token_in: z.string(), slippage_bps: z.number().optional() });

  it("names tokenIn and token_in, where it would have said token_in is missing", () => {
    expect(refusal(() => parseBody(strict, { tokenIn: "ETH" }))).toEqual([
      "BAD_REQUEST",
      "tokenIn: fields are snake_case; send token_in",
    ]);
    // Through effects (transform, preprocess) too, as the trade body and sign-in fields are built.
    const wrapped = z.preprocess(
      (v) => v,
      strict.transform((v) => v),
    );
    expect(refusal(() => parseBody(wrapped, { tokenIn: "ETH" }))?.[1]).toBe(
      "tokenIn: fields are snake_case; send token_in",
    );
  });

  it("refuses an optional field sent camelCase instead of quietly using its default", () => {
    expect(refusal(() => parseBody(lenient, { token_in: "ETH", slippageBps: 10 }))).toEqual([
      "BAD_REQUEST",
      "slippageBps: fields are snake_case; send slippage_bps",
    ]);
    expect(refusal(() => parseBody(lenient, { token_in: "ETH" }, { unknownField: "UNKNOWN_FIELD" }))).toBeNull();
    expect(
      refusal(() => parseBody(lenient, { token_in: "ETH", slippageBps: 1 }, { unknownField: "UNKNOWN_FIELD" })),
    ).toEqual(["UNKNOWN_FIELD", "slippageBps: fields are snake_case; send slippage_bps"]);
  });

  it("adds the snake_case names to an unknown nested camelCase field, and leaves other fields alone", () => {
    const nested = z.object({ limits: z.object({ max_trade_usd: z.number() }).strict() });
    expect(refusal(() => parseBody(nested, { limits: { maxTradeUsd: 5 } }))?.[1]).toBe(
      "limits.maxTradeUsd: fields are snake_case; send max_trade_usd",
    );
    expect(refusal(() => parseBody(strict, { token_in: "ETH", extra: 1 }))?.[1]).toBe("unknown field extra");
    expect(refusal(() => parseBody(lenient, { token_in: "ETH", someOther: 1 }))).toBeNull();
  });
});
