import { request } from "node:http";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import { serveApi, type Api } from "../helpers/api.js";
import { startServedDevnet, type Served } from "../helpers/stack.js";
import { RateLimiter, RATE_RULES } from "../../api/http/rateLimit.js";
import { requestLog } from "../../api/http/requestLog.js";
import { Hono } from "hono";

let dn: Devnet;
let store: Served["store"];
let api: Api;
let served: Served;
let now = Date.now();
const clock = () => now;

beforeAll(async () => {
  // Rate limits on: this file pins them.
  served = await startServedDevnet({ clock, limiter: new RateLimiter(clock) });
  ({ dn, store, api } = served);
});
afterAll(() => served?.stop());

/** A raw HTTP request (fetch cannot send chunked bodies on demand or a forged Host). */
function raw(opts: {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  chunked?: boolean;
}): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: api.port, method: opts.method, path: opts.path, headers: opts.headers },
      (res) => {
        let data = "";
        res.on("data", (d) => (data += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(data), headers: res.headers }));
      },
    );
    req.on("error", reject);
    if (opts.chunked) {
      req.write(opts.body ?? "{}");
      req.end();
    } else req.end(opts.body);
  });
}

describe("host and browser rules", () => {
  it("answers 421 UNKNOWN_HOST for a host it does not serve", async () => {
    const r = await raw({ method: "GET", path: "/api/v1/config", headers: { host: "evil.example" } });
    expect([r.status, r.body.error.code]).toEqual([421, "UNKNOWN_HOST"]);
  });

  it("refuses cross-origin POSTs and cookie POSTs without JSON and X-Pit-Client", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    let r = await api.call("POST", "/api/v1/auth/challenge", { address }, { origin: "https://evil.example" });
    expect([r.status, r.json.error.code]).toEqual([403, "CSRF_REFUSED"]);
    r = await api.call("POST", "/api/v1/auth/challenge", { address }, { cookie: "s=1" });
    expect([r.status, r.json.error.code]).toEqual([403, "CSRF_REFUSED"]);
    r = await api.call("POST", "/api/v1/auth/challenge", JSON.stringify({ address }), {
      cookie: "s=1",
      "x-pit-client": "web",
      "content-type": "text/plain",
    });
    expect([r.status, r.json.error.code]).toEqual([403, "CSRF_REFUSED"]);
    r = await api.call("POST", "/api/v1/auth/challenge", { address }, { cookie: "s=1", "x-pit-client": "web" });
    expect(r.status).toBe(200);
    r = await api.call("POST", "/api/v1/auth/challenge", { address }, { origin: `http://127.0.0.1:${api.port}` });
    expect(r.status).toBe(200);
  });
});

describe("request bodies", () => {
  const host = () => `127.0.0.1:${api.port}`;
  it("refuses chunked bodies with 411 LENGTH_REQUIRED", async () => {
    const r = await raw({
      method: "POST",
      path: "/api/v1/auth/challenge",
      headers: { host: host(), "content-type": "application/json", "transfer-encoding": "chunked" },
      body: "{}",
      chunked: true,
    });
    expect([r.status, r.body.error.code]).toEqual([411, "LENGTH_REQUIRED"]);
  });
  it("refuses bodies over 64 KB with 413, and non-objects and broken JSON with 400", async () => {
    const big = JSON.stringify({ address: "0x" + "a".repeat(40), pad: "x".repeat(70_000) });
    let r = await api.call("POST", "/api/v1/auth/challenge", big);
    expect([r.status, r.json.error.code]).toEqual([413, "BAD_REQUEST"]);
    for (const body of ["[1,2]", "null", "42", '"s"', "{broken", '{"a":']) {
      r = await api.call("POST", "/api/v1/auth/challenge", body);
      expect([body, r.status, r.json.error.code]).toEqual([body, 400, "BAD_REQUEST"]);
    }
  });
});

describe("rate limits", () => {
  it(
    "spends the public bucket (60, then 2 per second) across GET /api/v1/treasury and the /treasury " + "page",
    async () => {
      now += 200_000; // full buckets
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++)
        statuses.push((await api.call("GET", i % 2 ? "/treasury" : "/api/v1/treasury")).status);
      expect(statuses.every((s) => s === 200)).toBe(true);
      const limited = await api.call("GET", "/treasury");
      expect([limited.status, limited.json?.error?.code]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      now += 1_000;
      expect((await api.call("GET", "/api/v1/treasury")).status).toBe(200);
    },
  );

  it("spends the sign-in bucket (10, then one per 10 s) with Retry-After, and refills", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    now += 200_000; // full buckets
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await api.call("POST", "/api/v1/auth/challenge", { address });
      statuses.push(r.status);
      remaining.push(r.headers.get("ratelimit-remaining"));
      // The tightest bucket is the client's sign-in one (10, then one per 10 s): one more request in 10 s.
      if (i < 10) expect([r.headers.get("ratelimit-limit"), r.headers.get("ratelimit-reset")]).toEqual(["10", "10"]);
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    // Issue 30: the RateLimit headers count down with each request, and the 429 says 0.
    expect(remaining).toEqual(["9", "8", "7", "6", "5", "4", "3", "2", "1", "0", "0"]);
    const limited = await api.call("POST", "/api/v1/auth/challenge", { address });
    expect([limited.status, limited.json.error.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(limited.headers.get("retry-after"))).toBe(10);
    expect(["limit", "remaining", "reset"].map((h) => limited.headers.get(`ratelimit-${h}`))).toEqual([
      "10",
      "0",
      "10",
    ]);
    expect(limited.json.error.request_id).toBe(limited.headers.get("x-request-id"));
    now += 10_000;
    expect((await api.call("POST", "/api/v1/auth/challenge", { address })).status).toBe(200);
    expect((await api.call("POST", "/api/v1/auth/challenge", { address })).status).toBe(429);
  });

  it("locks out an address after 20 failed authentications (then one per 5 s)", async () => {
    now += 1_000_000;
    for (let i = 0; i < 20; i++)
      expect(
        (await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer pit_w_wrong${i}` })).status,
      ).toBe(401);
    const locked = await api.call("GET", "/api/v1/auth/me", undefined, { authorization: "Bearer pit_w_wrong" });
    expect([locked.status, locked.json.error.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(locked.headers.get("retry-after"))).toBe(5);
    expect(["limit", "remaining", "reset"].map((h) => locked.headers.get(`ratelimit-${h}`))).toEqual(["20", "0", "5"]);
    now += 5_000;
    expect((await api.call("GET", "/api/v1/auth/me")).status).toBe(401);
  });

  it("limits a key to 30, then 10 per second, and public reads per client", async () => {
    now += 1_000_000;
    const a = privateKeyToAccount(generatePrivateKey());
    const ch = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
    const key = (
      await api.call("POST", "/api/v1/auth/verify", {
        address: a.address,
        signature: await a.signMessage({ message: ch.message }),
      })
    ).json.api_key;
    const codes: number[] = [];
    const left: number[] = [];
    for (let i = 0; i < 31; i++) {
      const r = await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` });
      codes.push(r.status);
      left.push(Number(r.headers.get("ratelimit-remaining")));
    }
    expect(codes.filter((s) => s === 200)).toHaveLength(30);
    expect(codes[30]).toBe(429);
    // The key's bucket (30, then 10 per second) counts down to the 429, whose Reset is its Retry-After.
    expect(left).toEqual([...Array.from({ length: 30 }, (_, i) => 29 - i), 0]);
    now += 1000;
    expect((await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` })).status).toBe(200);

    const pub: number[] = [];
    for (let i = 0; i < 61; i++) pub.push((await api.call("GET", "/api/v1/config")).status);
    expect(pub.filter((s) => s === 200)).toHaveLength(60);
    expect(pub[60]).toBe(429);
  });

  it("keeps memory bounded under a flood of distinct client addresses", () => {
    const limiter = new RateLimiter(() => 0, 1000);
    for (let i = 0; i < 50_000; i++)
      limiter.take(`public:client:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, RATE_RULES.public);
    expect(limiter.size).toBeLessThanOrEqual(1000);
  });
});

describe("client address and chain reads", () => {
  it("takes the client address from a configured trusted proxy header only", async () => {
    const proxied = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      limiter: new RateLimiter(clock),
      config: { trustedProxyHeader: "x-forwarded-for" },
    });
    // Two clients behind the proxy have separate buckets; spoofed leading entries are ignored.
    const hit = (ip: string) =>
      proxied.call("GET", "/api/v1/config", undefined, { "x-forwarded-for": `6.6.6.6, ${ip}` });
    for (let i = 0; i < 60; i++) expect((await hit("203.0.113.1")).status).toBe(200);
    expect((await hit("203.0.113.1")).status).toBe(429);
    expect((await hit("203.0.113.2")).status).toBe(200);
    await proxied.close();
    // Without the setting the header means nothing: every request is the socket's address.
    now += 100_000;
    const direct = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, clock, limiter: new RateLimiter(clock) });
    for (let i = 0; i < 60; i++)
      await direct.call("GET", "/api/v1/config", undefined, { "x-forwarded-for": `10.0.0.${i}` });
    expect((await direct.call("GET", "/api/v1/config", undefined, { "x-forwarded-for": "10.9.9.9" })).status).toBe(429);
    await direct.close();
  });

  it("fails closed with 503 ENGINE_UNAVAILABLE and Retry-After when the sanctions list cannot be read", async () => {
    const contracts = {
      ...dn.universe.contracts,
      sanctionsList: "0x000000000000000000000000000000000000dEaD" as const,
    };
    const blind = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      limiter: new RateLimiter(clock, 100, false),
      config: { contracts },
    });
    const r = await blind.call("POST", "/api/v1/auth/challenge", {
      address: privateKeyToAccount(generatePrivateKey()).address,
    });
    await blind.close();
    expect([r.status, r.json.error.code]).toEqual([503, "ENGINE_UNAVAILABLE"]);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("logs", () => {
  it("writes one JSON line per request with id, route, status, code and ms, never the key", async () => {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _e, cb) {
        lines.push(JSON.parse(chunk.toString()));
        cb();
      },
    });
    const app = new Hono();
    app.use("*", requestLog(pino({ level: "info" }, sink)));
    app.get("/x", (c) => c.json({ ok: true }));
    await app.request("/x", { headers: { authorization: "Bearer pit_w_secretsecret", "x-request-id": "abc-123" } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ req_id: "abc-123", method: "GET", route: "/x", status: 200 });
    expect(typeof lines[0].ms).toBe("number");
    expect(JSON.stringify(lines)).not.toContain("secret");
  });
});

describe("wrong method and unknown path", () => {
  it(
    "answers a known route's wrong method 405 METHOD_NOT_ALLOWED with Allow, parameterised routes " + "included",
    async () => {
      now += 1_000_000; // full buckets, whatever ran before
      const cases: [string, string, string][] = [
        ["POST", "/api/v1/tokens/USDG", "GET, HEAD"], // /tokens/:address (404 before)
        ["DELETE", "/api/v1/tokens/0x00000000000000000000000000000000000000aa", "GET, HEAD"],
        ["POST", "/api/v1/tokens", "GET, HEAD"],
        ["PUT", "/api/v1/me/portfolio", "GET, HEAD"],
        ["POST", "/api/v1/config", "GET, HEAD"],
        ["GET", "/api/v1/live/quote", "POST"],
        ["GET", "/api/v1/auth/challenge", "POST"],
      ];
      for (const [method, path, allow] of cases) {
        const r = await api.call(method, path, method === "GET" ? undefined : {});
        expect([
          method,
          path,
          r.status,
          r.json?.error?.code,
          r.headers.get("allow"),
          r.headers.get("cache-control"),
        ]).toEqual([method, path, 405, "METHOD_NOT_ALLOWED", allow, "no-store"]);
      }
      // HEAD is served with GET, so on a POST-only route it is a wrong method too (no body, same headers).
      const head = await api.call("HEAD", "/api/v1/live/quote");
      expect([head.status, head.headers.get("allow")]).toEqual([405, "POST"]);
      expect((await api.call("HEAD", "/api/v1/config")).status).toBe(200);
    },
  );

  it("answers 405 on every route the app serves, with that route's method in Allow", async () => {
    now += 1_000_000;
    const routes = api.app.routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/v1"));
    expect(routes.length).toBeGreaterThanOrEqual(18);
    for (const r of routes) {
      const path = r.path.replace(/:[^/]+/g, "USDG");
      // A method this path does not serve (some paths serve both GET and POST).
      const served = new Set(routes.filter((x) => x.path === r.path).map((x) => x.method));
      const wrong = served.has("GET") ? "DELETE" : "GET";
      const res = await api.call(wrong, path, wrong === "GET" ? undefined : {});
      expect([r.method, r.path, res.status, res.json?.error?.code]).toEqual([
        r.method,
        r.path,
        405,
        "METHOD_NOT_ALLOWED",
      ]);
      expect(res.headers.get("allow")!.split(", ")).toContain(r.method);
    }
  });

  it("keeps unknown paths 404 NOT_FOUND without Allow, whatever the method", async () => {
    now += 1_000_000;
    for (const [method, path] of [
      ["GET", "/api/v1/tokens/USDG/extra"],
      ["POST", "/api/v1/nope"],
      ["GET", "/api/v1/live"],
      ["DELETE", "/api/v1/me"],
      ["POST", "/api/v1/tokens/"],
    ] as const) {
      const r = await api.call(method, path, method === "GET" ? undefined : {});
      expect([method, path, r.status, r.json?.error?.code, r.headers.get("allow")]).toEqual([
        method,
        path,
        404,
        "NOT_FOUND",
        null,
      ]);
    }
  });
});
