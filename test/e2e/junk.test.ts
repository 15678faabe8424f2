import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;

beforeAll(async () => {
  dn = await startDevnet();
  store = await freshStore();
  api = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, limiter: new RateLimiter(Date.now, 10_000, false) });
  const a = privateKeyToAccount(generatePrivateKey());
  const ch = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
  validKey = (
    await api.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: await a.signMessage({ message: ch.message }),
    })
  ).json.api_key;
});
let validKey = "";
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await dn?.stop();
});

/** Deterministic PRNG so a failure can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const ROUTES = [
  "/api/v1/config",
  "/api/v1/health",
  "/api/v1/stats",
  "/api/v1/auth/challenge",
  "/api/v1/auth/verify",
  "/api/v1/auth/me",
  "/api/v1/auth/revoke",
  "/api/v1/auth/revoke-all",
  "/api/v1/tokens",
  "/api/v1/tokens/stats",
  "/api/v1/tokens/USDG",
  "/api/v1/tokens/PEPE",
  "/api/v1/tokens/0x0000000000000000000000000000000000000001",
  "/api/v1/tokens?q=%00%ff",
  "/api/v1/tokens?limit=-1",
];
const PATHS = [
  ...ROUTES,
  "/api/v1/",
  "/api/v1",
  "/",
  "/api/v2/config",
  "/api/v1/auth/../config",
  "/api/v1/%00",
  "/api/v1/auth/me?x=%ff",
  "/api/v1/" + "a".repeat(5000),
  "/api/v1/tökens",
  "/api/v1/auth//verify",
  "/docs",
  "/llms.txt",
];
/** The front door's pages answer a successful GET with HTML or text; every other answer, refusals too, is JSON. */
const PAGES = new Set(["/", "/docs", "/llms.txt"]);
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];

function junkBody(r: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const values = [
    null,
    true,
    0,
    -1,
    1e308,
    "x".repeat(1000),
    "0x" + "f".repeat(40),
    "0x" + "1".repeat(130),
    [],
    {},
    "\u0000\u202e<script>",
    // biome-ignore lint/correctness/noPrecisionLoss: junk input: a number JSON carries and a double cannot hold
    12345678901234567890,
  ];
  const kind = Math.floor(r() * 8);
  if (kind === 0) return "";
  if (kind === 1) return Buffer.from(Array.from({ length: 200 }, () => Math.floor(r() * 256))).toString("latin1");
  if (kind === 2) return "[".repeat(5000) + "]".repeat(5000);
  if (kind === 3)
    return JSON.stringify({
      address: pick(values),
      signature: pick(values),
      nonce: pick(values),
      purpose: pick(values),
    });
  if (kind === 4)
    return '{"address": "0x' + "a".repeat(40) + '", "signature": ' + '{"a":'.repeat(200) + "1" + "}".repeat(200) + "}";
  if (kind === 5) return JSON.stringify(pick(values));
  if (kind === 6) return "{".repeat(3) + "garbage";
  return JSON.stringify({
    __proto__: { polluted: true },
    constructor: { prototype: { x: 1 } },
    address: "0x" + "0".repeat(40),
  });
}

describe("junk input over every route", () => {
  it("never answers 5xx or non-JSON to random methods, paths, headers and bodies", async () => {
    const r = prng(4663);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
    for (let i = 0; i < 400; i++) {
      const method = pick(METHODS);
      const path = pick(PATHS);
      const headers: Record<string, string> = {};
      if (r() < 0.5)
        headers["content-type"] = pick([
          "application/json",
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/json; charset=utf-16",
          "multipart/form-data; boundary=x",
        ]);
      if (r() < 0.6)
        headers.authorization = pick([
          `Bearer ${validKey}`,
          `Bearer ${validKey}`,
          "Bearer ",
          "Bearer pit_w_" + "A".repeat(43),
          "Basic abc",
          "Bearer " + "x".repeat(500),
          "bearer pit_w_x",
          "Bearer pit_w_../../etc",
        ]);
      if (r() < 0.2) headers.cookie = "a=b";
      if (r() < 0.2) headers.origin = pick(["null", "https://evil.example", `http://127.0.0.1:${api.port}`]);
      if (r() < 0.2) headers["x-pit-client"] = "fuzz";
      if (r() < 0.1) headers["x-request-id"] = pick(["../../x", "a".repeat(300), "ok-1"]);
      const body = ["GET", "HEAD", "OPTIONS"].includes(method) ? undefined : junkBody(r);
      const res = await fetch(`${api.url}${path}`, { method, headers, body });
      const text = await res.text();
      const where =
        `${i}: ${method} ${path.slice(0, 60)} ${JSON.stringify(headers)} ` +
        `body=${JSON.stringify(body?.slice(0, 80))}`;
      expect(res.status, where).toBeLessThan(500);
      if (method === "HEAD") continue;
      if (PAGES.has(path) && res.status < 400) {
        expect(res.headers.get("content-type"), where).toMatch(/^text\/(html|plain)/);
        continue;
      }
      let json: any;
      expect(() => (json = JSON.parse(text)), where).not.toThrow();
      if (res.status >= 400) expect(typeof json.error?.code, where).toBe("string");
      expect(res.headers.get("cache-control"), where).toBe("no-store");
    }
  });

  it("survives malformed HTTP on the socket and keeps serving", async () => {
    const junk = [
      "GET /api/v1/config HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
      "POST /api/v1/auth/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n{",
      "\u0000\u0001\u0002garbage\r\n\r\n",
    ];
    for (const payload of junk) {
      await new Promise<void>((resolve) => {
        const s = connect(api.port, "127.0.0.1", () => s.end(payload));
        s.on("data", () => {});
        s.on("close", () => resolve());
        s.on("error", () => resolve());
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 2000).unref();
      });
    }
    const ok = await api.call("GET", "/api/v1/config");
    expect(ok.status).toBe(200);
  });
});
