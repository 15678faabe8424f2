import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import { boundCaller } from "./caller.js";
import type { AppEnv, KeyRecord } from "./env.js";

/** The caller a key(wallet) route's first step hands its action, over a real Hono request. */
async function callerOf(key: Partial<KeyRecord>, why?: string) {
  const app = new Hono<AppEnv>();
  app.get("/", (c) => {
    c.set("key", key as KeyRecord);
    try {
      return c.json(boundCaller(why)({ c, param: () => "" }));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      return c.json({ code: err.code, message: err.message });
    }
  });
  return (await app.request("/")).json();
}

describe("boundCaller", () => {
  it("hands the action the key's wallet and id, and nothing else of the key", async () => {
    const wallet = "0x00000000000000000000000000000000000000aa";
    expect(await callerOf({ wallet, keyId: 7, account: { id: 1, name: "a" }, expiresAt: 1 })).toEqual({
      wallet,
      keyId: 7,
    });
  });

  it("refuses a key bound to no wallet with WALLET_NOT_BOUND, saying what needed it", async () => {
    expect(await callerOf({ keyId: 7 })).toEqual({
      code: "WALLET_NOT_BOUND",
      message: "this key is bound to no wallet",
    });
    expect(await callerOf({ keyId: 7 }, "the league needs a key bound to a wallet")).toMatchObject({
      message: "the league needs a key bound to a wallet",
    });
  });
});
