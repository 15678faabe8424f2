import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpExecutors } from "./executors.js";
import { hostedAvailability } from "./hostedAvailability.js";

const TOKEN = "t".repeat(40);
/**
 * A stand-in of the executor signing service's state route over real HTTP: it answers `{result: null}`
 * to its bearer secret, or (silent) takes the request and never answers.
 */
let server: Server;
let url: string;
let silent = false;
let asked = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    asked++;
    if (silent) return;
    if (req.url !== "/v1/executors/state") return res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"code":"UNAUTHORIZED"}}');
    res.writeHead(200, { "content-type": "application/json" }).end('{"result":null}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  silent = false;
  asked = 0;
});

/** Roomy for a loaded test host; the silent case still shows it is the bound. */
const BUDGET_MS = 1_000;
const on = { hostedKillSwitch: false, hostedLive: true };
let now = 1_000_000;
const clock = () => now;
const availability = (o: { token?: string; config?: typeof on } = {}) =>
  hostedAvailability({
    config: o.config ?? on,
    executors: httpExecutors(url, o.token ?? TOKEN),
    clock,
    budgetMs: BUDGET_MS,
    cacheMs: 5_000,
  });

describe("hosted availability (me/sessions hosted_available)", () => {
  it("is true while the signing service answers, and one probe serves the cache window", async () => {
    const available = availability();
    expect(await available()).toBe(true);
    now += 4_000;
    expect(await Promise.all([available(), available(), available()])).toEqual([true, true, true]);
    expect(asked).toBe(1);
  });

  it("turns false within the budget once the service stops answering, and true when it is back", async () => {
    const available = availability();
    expect(await available()).toBe(true);
    silent = true;
    now += 5_000;
    const t0 = performance.now();
    // Concurrent reads share the one silent probe.
    expect(await Promise.all([available(), available()])).toEqual([false, false]);
    const ms = performance.now() - t0;
    // It waited for the budget, and no longer (the port's own 5 s limit is not what ended it).
    expect(ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(ms).toBeLessThan(BUDGET_MS + 1_500);
    expect(asked).toBe(2);
    // The false answer is kept too: a silent service does not cost every read the budget.
    expect(await available()).toBe(false);
    expect(asked).toBe(2);
    silent = false;
    now += 5_000;
    expect(await available()).toBe(true);
  });

  it("is false without asking when live trading is off or no signing service is configured", async () => {
    expect(await availability({ config: { hostedKillSwitch: true, hostedLive: true } })()).toBe(false);
    expect(await availability({ config: { hostedKillSwitch: false, hostedLive: false } })()).toBe(false);
    expect(await hostedAvailability({ config: on, executors: null, clock })()).toBe(false);
    expect(asked).toBe(0);
  });

  it("is false when the service refuses the API's secret or nothing listens", async () => {
    expect(await availability({ token: "w".repeat(40) })()).toBe(false);
    const gone = hostedAvailability({ config: on, executors: httpExecutors("http://127.0.0.1:9", TOKEN), clock });
    expect(await gone()).toBe(false);
  });

  it("reads a clock moved back as stale", async () => {
    const available = availability();
    expect(await available()).toBe(true);
    now -= 60_000;
    silent = true;
    expect(await available()).toBe(false);
  });
});
