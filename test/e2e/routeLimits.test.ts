import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { RATE_RULES, RateLimiter, type BucketRule, type BucketTake, type Limiter } from "../../api/http/rateLimit.js";
import { agentOf } from "../helpers/agent.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";

/**
 * Issue 26 point 3: every route spends a bucket, /mcp and openapi.json included. Each route is
 * walked with buckets of its own (a fresh limiter on a frozen clock, so nothing refills) and asked
 * until it answers 429 RATE_LIMITED with Retry-After. Unkeyed routes spend theirs (public, auth,
 * mcp) before any work; a keyed route asked without a key spends the address's failed-auth bucket
 * (20, then 429) and with a key the key's bucket (30, then 429), both before the route's own work.
 */

/** A limiter whose buckets the test replaces between routes. */
class FreshBuckets implements Limiter {
  readonly enabled = true;
  inner = new RateLimiter(() => 0);
  fresh() {
    this.inner = new RateLimiter(() => 0);
  }
  spend(b: BucketTake[]) {
    return this.inner.spend(b);
  }
  charge(b: BucketTake[]) {
    return this.inner.charge(b);
  }
  wait(key: string, rule: BucketRule) {
    return this.inner.wait(key, rule);
  }
}

let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
const limiter = new FreshBuckets();
beforeAll(async () => {
  dn = await startDevnet();
  store = await freshStore();
  api = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, limiter });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await dn?.stop();
});

const sample = (path: string) =>
  path.replace(/:address/g, "0x00000000000000000000000000000000000000a1").replace(/:\w+/g, "1");

async function ask(method: string, path: string, headers: Record<string, string> = {}) {
  const body = method === "GET" ? undefined : "{}";
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers },
    body,
  });
  const text = await res.text();
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    code: (() => {
      try {
        return JSON.parse(text).error?.code;
      } catch {
        return undefined;
      }
    })(),
  };
}

/** Asks until 429 (at most `max` times): the statuses seen before it, and the refusal. */
async function untilRefused(method: string, path: string, max: number, headers: Record<string, string> = {}) {
  const before: number[] = [];
  for (let i = 0; i < max; i++) {
    const r = await ask(method, path, headers);
    if (r.status === 429) return { before, refusal: r };
    before.push(r.status);
  }
  return { before, refusal: null };
}

/**
 * Every route the app serves (middleware and the 404/405 fallbacks are method ALL), the auth/revoke routes last: they
 * end the key.
 */
const routes = () => {
  const seen = new Set<string>();
  const list = api.app.routes
    .filter((r) => r.method !== "ALL")
    .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
  return list.sort((a, b) => Number(a.path.endsWith("/auth/revoke")) - Number(b.path.endsWith("/auth/revoke")));
};

describe("every route spends a bucket", () => {
  it("without a key: each route answers 429 RATE_LIMITED with Retry-After once its buckets are spent", async () => {
    const list = routes();
    expect(list.length).toBeGreaterThan(50);
    const unlimited: string[] = [];
    for (const r of list) {
      limiter.fresh();
      const { before, refusal } = await untilRefused(r.method, sample(r.path), RATE_RULES.public.burst + 5);
      if (!refusal || refusal.code !== "RATE_LIMITED" || Number(refusal.retryAfter) < 1)
        unlimited.push(`${r.method} ${r.path} (${before.slice(-3).join(",")})`);
    }
    expect(unlimited).toEqual([]);
  }, 300_000);

  it("with a key: each keyed route answers 429 once the key's bucket is spent, before its own work", async () => {
    limiter.fresh();
    const key = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
    const auth = { authorization: `Bearer ${key}` };
    const unlimited: string[] = [];
    let keyed = 0;
    for (const r of routes()) {
      if (r.path === "/api/v1/auth/revoke") continue;
      limiter.fresh();
      const first = await ask(r.method, sample(r.path), { authorization: "Bearer pit_not-a-key" });
      if (first.status !== 401) continue;
      keyed++;
      limiter.fresh();
      const { before, refusal } = await untilRefused(r.method, sample(r.path), RATE_RULES.key.burst + 5, auth);
      if (!refusal || refusal.code !== "RATE_LIMITED" || Number(refusal.retryAfter) < 1 || before.includes(401))
        unlimited.push(`${r.method} ${r.path} (${before.slice(-3).join(",")})`);
    }
    expect(keyed).toBeGreaterThan(30);
    expect(unlimited).toEqual([]);
  }, 300_000);
});

describe("POST /api/v1/live/fast", () => {
  it(
    "spends its liveFast bucket only when it simulates: a relaying call with simulate false spends only the key's " +
      "bucket",
    async () => {
      limiter.fresh();
      const key = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
      const auth = { authorization: `Bearer ${key}` };
      const statuses = async (body: Record<string, unknown>, n: number) => {
        const seen: number[] = [];
        for (let i = 0; i < n; i++)
          seen.push(
            (
              await fetch(`${api.url}/api/v1/live/fast`, {
                method: "POST",
                headers: { "content-type": "application/json", ...auth },
                body: JSON.stringify(body),
              })
            ).status,
          );
        return seen;
      };
      // Past liveFast's burst but under the key's: only the liveFast bucket can refuse.
      const n = RATE_RULES.liveFast.burst + 2;
      expect(RATE_RULES.key.burst).toBeGreaterThan(n);
      limiter.fresh();
      expect(await statuses({ simulate: false }, n)).not.toContain(429);
      for (const body of [{}, { simulate: true }, { simulate: false, check_only: true }]) {
        limiter.fresh();
        const seen = await statuses(body, n);
        expect(seen.indexOf(429), JSON.stringify(body)).toBe(RATE_RULES.liveFast.burst);
      }
    },
  );
});

describe("POST /mcp and GET /api/v1/openapi.json", () => {
  it("/mcp answers 429 past its bucket (60 per client address), whatever the JSON-RPC says", async () => {
    limiter.fresh();
    const call = (body: unknown) =>
      fetch(`${api.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
    const statuses: number[] = [];
    for (let i = 0; i < RATE_RULES.mcp.burst; i++)
      statuses.push((await call(i % 2 ? { jsonrpc: "2.0", id: i, method: "tools/list" } : { nonsense: true })).status);
    expect(statuses).not.toContain(429);
    const refused = await call({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as any).error.code).toBe("RATE_LIMITED");
  });

  it(
    "openapi.json answers 429 past its bucket; gzip when asked, the same bytes; a strong ETag answered " + "304",
    async () => {
      limiter.fresh();
      const get = (headers: Record<string, string>) => fetch(`${api.url}/api/v1/openapi.json`, { headers });
      const plain = await get({ "accept-encoding": "identity" });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-encoding")).toBeNull();
      const plainText = await plain.text();
      const doc = JSON.parse(plainText);
      expect(doc.openapi).toBe("3.1.0");
      const etag = plain.headers.get("etag")!;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(plain.headers.get("cache-control")).toBe("no-store");

      // Node's fetch would inflate on its own: read the bytes as they came over a raw request.
      const zipped = await rawGet("/api/v1/openapi.json", { "accept-encoding": "br;q=1, gzip;q=0.8" });
      expect(zipped.status).toBe(200);
      expect(zipped.headers["content-encoding"]).toBe("gzip");
      expect(zipped.headers.vary).toMatch(/accept-encoding/i);
      expect(zipped.body.length).toBeLessThan(Buffer.byteLength(plainText) / 3);
      expect(gunzipSync(zipped.body).toString()).toBe(plainText);
      expect(zipped.headers.etag).not.toBe(etag);
      const refusedGzip = await rawGet("/api/v1/openapi.json", { "accept-encoding": "gzip;q=0" });
      expect(refusedGzip.headers["content-encoding"]).toBeUndefined();

      for (const tag of [etag, zipped.headers.etag as string]) {
        const again = await get({ "if-none-match": tag });
        expect(again.status).toBe(304);
        expect(await again.text()).toBe("");
      }
      expect((await get({ "if-none-match": '"something-else"' })).status).toBe(200);

      let refused: Response | null = null;
      for (let i = 0; i < RATE_RULES.public.burst + 5 && !refused; i++) {
        const r = await get({ "if-none-match": etag });
        if (r.status === 429) refused = r;
        else await r.arrayBuffer();
      }
      expect(refused?.status).toBe(429);
      expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await refused!.json()) as any).error.code).toBe("RATE_LIMITED");
    },
  );
});

/** A GET over node:http, which leaves Content-Encoding to the caller. */
async function rawGet(path: string, headers: Record<string, string>) {
  const http = await import("node:http");
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      http
        .get(`${api.url}${path}`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on("error", reject);
    },
  );
}
