import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { API_ROUTES as ROUTES } from "../../api/routes.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";

/**
 * The OpenAPI document (issue 19): it validates as OpenAPI 3.1, names every route the app serves,
 * and real answers of the devnet (successes and refusals) match its response schemas.
 */
let stack: Stack;
let doc: any;
beforeAll(async () => {
  stack = await startStack({ before: freshenMarket });
  doc = (await stack.api.call("GET", "/api/v1/openapi.json")).json;
}, 180_000);
afterAll(() => stack?.stop());

const ajv = new Ajv({ strict: false, allErrors: true });
/** Checks an answer against the document's schema for its route and status; answers the problems. */
function mismatch(method: string, path: string, status: number, body: unknown): string | null {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) return `no ${method} ${path} in the document`;
  const res = op.responses[String(status)];
  if (!res) return `${method} ${path}: status ${status} is not documented (${Object.keys(op.responses).join(", ")})`;
  const validate = ajv.compile({ ...res.content["application/json"].schema, components: doc.components });
  return validate(body) ? null : `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`;
}

describe("GET /api/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const v = await new Validator().validate(doc);
    expect(v.errors ?? [], JSON.stringify(v.errors ?? []).slice(0, 2000)).toEqual([]);
    expect(v.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
  });

  it("covers every route the app serves: SPEC's 54 and the 4 served beyond it", () => {
    const served = new Set<string>();
    for (const r of stack.api.app.routes) {
      if (!r.path.startsWith("/api/v1/") || r.method === "ALL" || r.path === "/api/v1/openapi.json") continue;
      served.add(`${r.method.toLowerCase()} ${r.path.slice("/api/v1".length).replace(/:(\w+)/g, "{$1}")}`);
    }
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m} ${p}`)),
    );
    expect([...served].filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((r) => !served.has(r))).toEqual([]);
    expect(ROUTES.filter((r) => !r.extra)).toHaveLength(54);
    expect(documented.size).toBe(58);
    // Every request body the routes validate is in the document, with its fields.
    expect(doc.paths["/live/prepare"].post.requestBody.content["application/json"].schema.properties).toHaveProperty(
      "token_in",
    );
    expect(doc.paths["/league/enter"].post.requestBody.content["application/json"].schema.additionalProperties).toBe(
      false,
    );
  });

  // Every route's answer is typed to its fields (issue 30 point 1): these calls are held to them here, and every
  // other e2e file's answers by test/helpers/contract.ts.
  it("matches real answers of the devnet: successes and refusals", async () => {
    const { agent, dn, api } = stack;
    const wallet = privateKeyToAccount(generatePrivateKey());
    await dn.test.setBalance({ address: wallet.address, value: parseEther("1") });
    const key = await agent.signIn(wallet);
    const auth = { authorization: `Bearer ${key}` };
    const calls: [string, string, string, unknown?, Record<string, string>?][] = [
      ["GET", "/config", "/config"],
      ["GET", "/health", "/health"],
      ["GET", "/stats", "/stats"],
      ["GET", "/treasury", "/treasury"],
      ["POST", "/auth/challenge", "/auth/challenge", { address: wallet.address }],
      ["POST", "/auth/challenge", "/auth/challenge", { address: "nope" }],
      ["GET", "/auth/me", "/auth/me", undefined, auth],
      ["GET", "/auth/me", "/auth/me", undefined, {}],
      ["GET", "/tokens", "/tokens?q=USD", undefined, auth],
      ["GET", "/tokens/{address}", `/tokens/${dn.token("USDG")}`, undefined, auth],
      ["GET", "/tokens/stats", "/tokens/stats", undefined, auth],
      ["GET", "/live/fast/terms", "/live/fast/terms", undefined, auth],
      ["GET", "/hosted/ai", "/hosted/ai", undefined, auth],
      ["POST", "/live/quote", "/live/quote", { token_in: "ETH", token_out: "USDG", notional_usd: 25 }, auth],
      [
        "POST",
        "/live/prepare",
        "/live/prepare",
        { wallet: wallet.address, token_in: "ETH", token_out: "USDG", notional_usd: 25 },
        auth,
      ],
      [
        "POST",
        "/live/prepare",
        "/live/prepare",
        { wallet: wallet.address, token_in: "ETH", token_out: "USDG", notional_usd: 25, color: "red" },
        auth,
      ],
      ["GET", "/me/portfolio", "/me/portfolio", undefined, auth],
      ["GET", "/me/trades", "/me/trades", undefined, auth],
      ["GET", "/me/sessions", "/me/sessions", undefined, auth],
      [
        "POST",
        "/live/session/grant",
        "/live/session/grant",
        { wallet: wallet.address, executor: privateKeyToAccount(generatePrivateKey()).address },
        auth,
      ],
      ["GET", "/hosted", "/hosted", undefined, auth],
      ["GET", "/hosted/{id}", "/hosted/ha_nope", undefined, auth],
      ["GET", "/league", "/league"],
      ["GET", "/league/standings", "/league/standings"],
      ["GET", "/league/standings", "/league/standings?board=gold"],
      ["GET", "/league/seasons", "/league/seasons"],
      ["GET", "/league/seasons/{n}", "/league/seasons/1"],
      ["GET", "/league/seasons/{n}", "/league/seasons/abc"],
      ["GET", "/league/seasons/{n}/books", "/league/seasons/1/books"],
      ["GET", "/league/reserve", "/league/reserve"],
      ["GET", "/league/me", "/league/me", undefined, auth],
      ["POST", "/league/statement", "/league/statement", { agent_id: 987654 }, auth],
    ];
    const problems: string[] = [];
    for (const [method, route, url, body, headers] of calls) {
      const r = await api.call(method, `/api/v1${url}`, body, headers ?? {});
      const m = mismatch(method, route, r.status, r.json);
      if (m) problems.push(m);
    }
    expect(problems).toEqual([]);
  });
});
