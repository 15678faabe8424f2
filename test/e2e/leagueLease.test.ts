import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { calendarAt, type season as seasonAt } from "../../lib/league/calendar.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { serveApi, type Api } from "../helpers/api.js";
import type { Db } from "../../api/ports/store/db.js";
import { registerAgent as registerPartner } from "../helpers/league.js";

/**
 * Issue 26, point 4, across instances: two APIs on one PostgreSQL store compute the league's
 * standings once, by the instance holding the standings lease; the other serves the answers the
 * holder wrote. When the holder goes silent past the lease, or stops, the other takes over.
 *
 * Both workers are driven by the test (`cacheMs: 0`: no timer) on one shared clock; a hook per
 * instance counts (and can hold) each computation.
 */
const LEASE_MS = 120_000;
const fresh = () => privateKeyToAccount(generatePrivateKey());

let stack: Stack;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const chainNow = async () => Number((await stack.dn.pub.getBlock()).timestamp);
let season: ReturnType<typeof seasonAt>;
let key: string;
/** Every computation each instance started, by key. */
const computed = { a: [] as string[], b: [] as string[] };
/** While set, each computation waits for it (a pass held open). */
let gate: Promise<void> | null = null;
let a: Api;
let b: Api;

async function warp(ts: number) {
  const { dn } = stack;
  await dn.test.setNextBlockTimestamp({ timestamp: BigInt(ts) });
  await dn.test.mine({ blocks: 1 });
  offsetMs = ts * 1000 - Date.now();
  await stack.ix.waitFor(await dn.pub.getBlockNumber());
}

const registerAgent = (owner: Address, wallet: Address, symbol: string) =>
  registerPartner(stack.dn, owner, wallet, symbol);

/** An API instance on `db` whose standings computations land in `log`. */
const instance = async (db: Db, log: string[]) =>
  serveApi({
    rpcUrl: stack.dn.anvil.rpcUrl,
    db,
    clock,
    indexed: stack.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    league: {
      settleIntervalMs: 0,
      cacheMs: 0,
      leaseMs: LEASE_MS,
      onCompute: async (k: string) => {
        log.push(k);
        await gate;
      },
    },
    hostedScheduler: { intervalMs: 0 },
  });

const count = (log: string[]) => log.filter((k) => k === key).length;
const counts = () => [count(computed.a), count(computed.b)];
const pass = (api: Api) => api.app.services.league.boards.runOnce();
/** `n` standings reads on each instance at once; their statuses and valued_at. */
async function flood(n: number) {
  const rs = await Promise.all(
    [a, b].flatMap((api) => Array.from({ length: n }, () => api.call("GET", "/api/v1/league/standings"))),
  );
  return { statuses: new Set(rs.map((r) => r.status)), valuedAt: new Set(rs.map((r) => r.json.valued_at)) };
}

beforeAll(async () => {
  stack = await startStack({
    store: "postgres",
    clock,
    league: { settleIntervalMs: 0, cacheMs: 0 },
    hostedScheduler: { intervalMs: 0 },
  });
  offsetMs = (await chainNow()) * 1000 - Date.now();
  season = calendarAt(await chainNow()).next;
  key = `prize:${season.number}`;
  a = await instance(stack.store.db, computed.a);
  b = await instance(await stack.store.reopen(), computed.b);
  // Two prize entries, each confirmed by its owner's signed statement; they play the next season.
  for (const n of [1, 2]) {
    const [wallet, owner] = [fresh(), fresh()];
    const id = await registerAgent(owner.address, fresh().address, `L${n}`);
    const k = await stack.agent.signIn(wallet);
    const st = await stack.agent.post("/league/statement", { agent_id: id }, k);
    expect(st.status, st.text).toBe(200);
    const e = await stack.agent.post(
      "/league/enter",
      { agent_id: id, nonce: st.json.nonce, signature: await owner.signMessage({ message: st.json.message }) },
      k,
    );
    expect(e.status, e.text).toBe(201);
  }
  await warp(season.starts + 3_600);
}, 300_000);

afterAll(async () => {
  await a?.close();
  await b?.close().catch(() => {});
  await stack?.stop();
});

describe("league standings on two instances: one computation per key per pass, under a lease", () => {
  it("the holder computes; a flood on both instances starts nothing; the other serves the holder's answer, stale " +
    "while the next is computed", async () => {
    expect(await pass(a)).toBe(1);
    expect(counts()).toEqual([1, 0]);
    const first = await flood(100);
    expect(first.statuses).toEqual(new Set([200]));
    expect(first.valuedAt.size).toBe(1);
    const [answered] = [...first.valuedAt];
    expect(await pass(b)).toBe(0);
    expect(counts()).toEqual([1, 0]);

    // The holder's next pass, held open; the other's pass meanwhile; a flood on both.
    await warp(season.starts + 3_660);
    let release!: () => void;
    gate = new Promise<void>((r) => (release = r));
    const held = pass(a);
    for (let i = 0; i < 200 && count(computed.a) < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await pass(b)).toBe(0);
    const during = await flood(100);
    expect(during.statuses).toEqual(new Set([200]));
    expect(during.valuedAt).toEqual(new Set([answered]));
    expect(counts()).toEqual([2, 0]);
    gate = null;
    release();
    expect(await held).toBe(1);
    // The other's next pass reads the new answer: both serve it.
    expect(await pass(b)).toBe(0);
    const after = await flood(20);
    expect(after.valuedAt.size).toBe(1);
    expect([...after.valuedAt][0]).toBeGreaterThan(answered);
    expect(counts()).toEqual([2, 0]);
  }, 180_000);

  it("a holder gone silent past the lease loses it to the other at its next pass; a holder that stops gives it up at " +
    "once", async () => {
    await warp(season.starts + 3_660 + LEASE_MS / 1000 + 60);
    expect(await pass(b)).toBe(1);
    expect(await pass(a)).toBe(0);
    expect(counts()).toEqual([2, 1]);
    const fromB = await flood(20);
    expect(fromB.valuedAt.size).toBe(1);
    // B stops (a clean stop releases): A computes at its next pass, within the lease's time.
    await b.close();
    expect(await pass(a)).toBe(1);
    expect(counts()).toEqual([3, 1]);
  }, 180_000);
});
