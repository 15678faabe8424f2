import { Hono } from "hono";
import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import type { KeyChecks } from "./auth.js";
import type { AppEnv, KeyRecord } from "./env.js";
import { onError } from "./errors.js";
import { httpKit } from "./kit.js";
import { RateLimiter } from "./rateLimit.js";

const WALLET: Address = "0x00000000000000000000000000000000000000aa";
const LIVE: KeyRecord = { keyId: 7, wallet: WALLET, account: { id: 1, name: "a" }, expiresAt: Number.MAX_SAFE_INTEGER };

/**
 * The edge's key checks as the root hands them in (api/services.ts keyChecks): here a fixed key and
 * a sanctions list the test sets, so the edge's use of them is seen without sign-in's store.
 */
function edge(sanctioned: Set<string>) {
  const asked: string[] = [];
  const checks: KeyChecks = {
    authenticate: async (apiKey) => (apiKey === "pit_w_live" ? LIVE : null),
    assertNotSanctioned: async (wallet) => {
      asked.push(wallet);
      if (sanctioned.has(wallet))
        throw new Refusal("SANCTIONED", `wallet ${wallet} is on the sanctions list`, {
          address: wallet,
          field: "wallet",
        });
    },
  };
  const http = httpKit(checks, new RateLimiter());
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("clientAddr", "192.0.2.1");
    await next();
  });
  app.get("/keyed", http.keyed, (c) => c.json({ key: c.get("key").keyId }));
  app.get("/even", http.keyedEvenSanctioned, (c) => c.json({ key: c.get("key").keyId }));
  app.onError(onError);
  const get = (path: string, apiKey?: string) =>
    app.request(path, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { get, asked, app };
}

const codeOf = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

describe("httpKit over the root's key checks", () => {
  it("refuses no key or an unknown one with 401, and hands a live key to the route", async () => {
    const { get } = edge(new Set());
    expect(await codeOf(await get("/keyed"))).toBe("UNAUTHORIZED");
    expect((await get("/keyed", "pit_w_other")).status).toBe(401);
    expect(await (await get("/keyed", "pit_w_live")).json()).toEqual({ key: 7 });
  });

  it("says what to do with the Authorization header: a key without Bearer is not an unknown key", async () => {
    const { app } = edge(new Set());
    const message = async (authorization?: string) => {
      const r = await app.request("/keyed", { headers: authorization === undefined ? {} : { authorization } });
      const e = ((await r.json()) as { error: { code: string; message: string } }).error;
      expect([r.status, e.code]).toEqual([401, "UNAUTHORIZED"]);
      return e.message;
    };
    expect(await message()).toBe("send the API key as Authorization: Bearer <api_key>");
    expect(await message("pit_w_live")).toMatch(/no Bearer prefix: send it as Authorization: Bearer <api_key>/);
    expect(await message("Token pit_w_live")).toMatch(/must be Bearer <api_key>/);
    expect(await message("bearer pit_w_gone")).toMatch(/^unknown, expired or revoked API key: sign in again/);
    // The key itself is never echoed back.
    expect(await message("pit_w_live")).not.toContain("pit_w_live");
  });

  it(
    "refuses a sanctioned key's wallet with 451 on keyed routes, asks the list once while it is clean, and lets " +
      "keyedEvenSanctioned through",
    async () => {
      const sanctioned = new Set<string>();
      const { get, asked } = edge(sanctioned);
      expect((await get("/keyed", "pit_w_live")).status).toBe(200);
      expect((await get("/keyed", "pit_w_live")).status).toBe(200);
      expect(asked).toEqual([WALLET]); // a clean answer is trusted for a while

      const listed = edge(new Set([WALLET]));
      const refused = await listed.get("/keyed", "pit_w_live");
      expect(refused.status).toBe(451);
      expect(await codeOf(refused)).toBe("SANCTIONED");
      expect(await (await listed.get("/even", "pit_w_live")).json()).toEqual({ key: 7 });
    },
  );
});
