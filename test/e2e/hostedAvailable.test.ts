import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { httpExecutors } from "../../api/ports/executors.js";
import { AVAILABILITY_BUDGET_MS, AVAILABILITY_CACHE_MS } from "../../api/ports/hostedAvailability.js";

/**
 * me/sessions `hosted_available` over HTTP, from the service's state: true with the executor
 * signing service answering; false without one, with live hosted trading switched off, when the
 * service takes the request and never answers (me/sessions still answers within its budget), and
 * once the service is gone.
 */
let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let silent: Server;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const apis: Api[] = [];
const owner = privateKeyToAccount(generatePrivateKey());

/** An API on the shared devnet and store (no scheduler timer), with what the test gives it. */
async function api(o: Partial<Parameters<typeof serveApi>[0]> = {}) {
  const a = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: store.db,
    clock,
    limiter: new RateLimiter(clock, 10_000, false),
    hostedScheduler: { intervalMs: 0 },
    ...o,
  });
  apis.push(a);
  return a;
}

/** GET me/sessions with a fresh key of the owner: its hosted_available and how long the answer took. */
async function availableOn(a: Api) {
  const key = await agentOf(a, dn).signIn(owner);
  const t0 = performance.now();
  const r = await a.call("GET", "/api/v1/me/sessions", undefined, { authorization: `Bearer ${key}` });
  expect(r.status, r.text).toBe(200);
  return { available: r.json.hosted_available, ms: performance.now() - t0 };
}

beforeAll(async () => {
  dn = await startDevnet();
  store = await freshStore();
  // Takes every request and never answers: a signing service that hangs.
  silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
}, 120_000);
afterAll(async () => {
  for (const a of apis) await a.close();
  silent?.closeAllConnections();
  await new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
  await store?.drop();
  await dn?.stop();
});

describe("me/sessions hosted_available", () => {
  it("is false when the app has no executor signing service", async () => {
    expect((await availableOn(await api({ cosigner: null, executors: null }))).available).toBe(false);
  });

  it("is false when the signing service does not answer, and me/sessions answers within the budget", async () => {
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const a = await api({ cosigner: null, executors: httpExecutors(url, "s".repeat(40)) });
    const { available, ms } = await availableOn(a);
    expect(available).toBe(false);
    expect(ms).toBeLessThan(AVAILABILITY_BUDGET_MS + 2_000);
  });

  it("is true with a live signing service; false when live trading is off, and once it is gone", async () => {
    const live = await api();
    expect((await availableOn(live)).available).toBe(true);
    // The same answering service, but the server holds live hosted agents.
    const executors = httpExecutors(live.signers!.urls.executors, live.signers!.tokens.executors);
    for (const config of [{ hostedKillSwitch: true }, { hostedLive: false }])
      expect((await availableOn(await api({ cosigner: null, executors, config }))).available).toBe(false);
    await live.signers!.close();
    // The last answer is kept a few seconds, then the service's absence shows.
    offsetMs += AVAILABILITY_CACHE_MS;
    expect((await availableOn(live)).available).toBe(false);
  });
});
