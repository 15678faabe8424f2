import { describe, expect, it } from "vitest";
import { contractProblem } from "./helpers/contract.js";

/** A GET tokens/stats answer as the registry counts it. */
const TOKEN_STATS = {
  total: 1,
  tradable: 1,
  by_tier: { A: 1 },
  by_kind: { core: 1 },
  by_risk: {},
  blocked_by_reason: {},
  generated_at: 1_795_908_313,
  cached_s: 0,
};

/** The whole-suite OpenAPI check itself: it must tell an answer the document describes from one it does not. */
describe("contractProblem", () => {
  it("passes a documented success and a documented refusal", () => {
    expect(contractProblem("GET", "/api/v1/health", 200, { status: "ok", service: "s", version: "1" })).toBeNull();
    expect(contractProblem("GET", "/api/v1/health", 503, { status: "down", service: "s", version: "1" })).toBeNull();
    expect(contractProblem("POST", "/api/v1/live/fast", 422, { error: { code: "POOL_FAR", message: "m" } })).toBeNull();
    expect(contractProblem("GET", "/api/v1/tokens/stats", 200, TOKEN_STATS)).toBeNull();
  });
  it("finds an undocumented status, a code the route does not answer, and a success missing its fields", () => {
    expect(contractProblem("GET", "/api/v1/health", 418, {})).toMatch(/not documented/);
    expect(
      contractProblem("POST", "/api/v1/live/fast", 422, { error: { code: "LEAGUE_PAIRS", message: "m" } }),
    ).toMatch(/allowed values/);
    expect(contractProblem("POST", "/api/v1/live/session/trade", 200, { tx_hash: "0x" })).toMatch(/required property/);
    // A route once typed only by its field names (issue 30): its fields' types are held too.
    const { by_kind: _, ...noKinds } = TOKEN_STATS;
    expect(contractProblem("GET", "/api/v1/tokens/stats", 200, noKinds)).toMatch(/required property 'by_kind'/);
    expect(contractProblem("GET", "/api/v1/tokens/stats", 200, { ...TOKEN_STATS, total: "1" })).toMatch(/integer/);
  });
  it("leaves unknown paths and methods alone (404 and 405 of no route)", () => {
    expect(contractProblem("GET", "/api/v1/nowhere", 404, {})).toBeNull();
    expect(contractProblem("DELETE", "/api/v1/config", 405, {})).toBeNull();
  });
});
