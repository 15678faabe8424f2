import { Hono } from "hono";
import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import type { AppEnv, KeyRecord } from "../http/env.js";
import { onError } from "../http/errors.js";
import { httpKit } from "../http/kit.js";
import { RateLimiter } from "../http/rateLimit.js";
import { mountRoutes } from "../http/route.js";
import { hostedRoutes, type HostedService } from "./routes.js";

const OWNER: Address = "0x00000000000000000000000000000000000000aa";
const KEY: KeyRecord = { keyId: 7, wallet: OWNER, account: { id: 1, name: "a" }, expiresAt: Number.MAX_SAFE_INTEGER };

/**
 * The hosted routes at the edge for a key whose wallet is on the sanctions list; the service
 * answers every action with its name, so what reaches it is seen.
 */
function sanctionedOwner() {
  const reached: string[] = [];
  const http = httpKit(
    {
      authenticate: async (k) => (k === "pit_w_owner" ? KEY : null),
      assertNotSanctioned: async (wallet) => {
        throw new Refusal("SANCTIONED", `wallet ${wallet} is on the sanctions list`, {
          address: wallet,
          field: "wallet",
        });
      },
    },
    new RateLimiter(),
  );
  const service = new Proxy({} as HostedService, {
    get: (_, action: string) => async () => {
      reached.push(action);
      return action === "owned" ? { id: "ha_1", wallet: OWNER } : { action };
    },
  });
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("clientAddr", "192.0.2.1");
    await next();
  });
  mountRoutes(app, hostedRoutes, service, http);
  app.onError(onError);
  const post = (path: string) =>
    app.request(`/hosted${path}`, { method: "POST", headers: { authorization: "Bearer pit_w_owner" } });
  return { post, reached };
}

describe("a sanctioned owner on the hosted routes (SPEC Authentication 10)", () => {
  it("may still pause, stop and delete its agent", async () => {
    const { post, reached } = sanctionedOwner();
    for (const [path, action] of [
      ["/ha_1/pause", "pause"],
      ["/ha_1/stop", "stop"],
      ["/ha_1/delete", "remove"],
    ] as const) {
      const r = await post(path);
      expect([r.status, await r.json()]).toEqual([200, { action }]);
    }
    expect(reached).toEqual(["owned", "pause", "owned", "stop", "owned", "remove"]);
  });

  it("is refused 451 SANCTIONED on every other route before the agent is read", async () => {
    const { post, reached } = sanctionedOwner();
    for (const path of ["", "/ha_1/resume", "/ha_1/update", "/ha_1/session", "/ha_1/refund-gas"]) {
      const r = await post(path);
      expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([451, "SANCTIONED"]);
    }
    expect(reached).toEqual([]);
    const even = hostedRoutes.filter((e) => e.evenSanctioned).map((e) => e.path);
    expect(even).toEqual(["/hosted/{id}/pause", "/hosted/{id}/stop", "/hosted/{id}/delete"]);
  });
});
