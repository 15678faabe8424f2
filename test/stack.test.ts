import { afterAll, describe, expect, it } from "vitest";
import {
  alive,
  apiProcesses,
  call,
  clientsFor,
  npmStart,
  pidOnPort,
  pidsOf,
  stackEnv,
  until,
  untilReady,
  type NpmStart,
} from "./helpers/npmStart.js";

/**
 * Issue 32 point 1: `npm run stack` (npm start with API_PROCESSES) is the production layout on one
 * machine: the indexer alone, N API processes behind the public port, the signing services alone,
 * on PostgreSQL. A trade goes through it end to end, the processes share the work, and an API
 * process killed with -9 costs no request that could have gone elsewhere and is started again.
 */
let run: NpmStart | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  try {
    if (run?.child.exitCode === null) process.kill(-run.child.pid!, "SIGKILL");
  } catch {
    // gone
  }
  for (const c of cleanups) await c().catch(() => {});
});

/** Requests a process has answered, from its own /metrics. */
async function answered(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return [...text.matchAll(/^pit_http_request_duration_seconds_count\{[^}]*\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe("npm run stack: the production layout on one machine", () => {
  it("serves a mined trade through two API processes beside the indexer alone; one killed with -9 is replaced " +
    "while the other answers", async () => {
    const { env, cleanup } = await stackEnv("postgres");
    cleanups.push(cleanup);
    run = npmStart({ ...env, API_PROCESSES: "2" });
    await untilReady(run);
    const apis = apiProcesses(run.out());
    expect(apis).toHaveLength(2);
    // The indexer is alone: its process serves no API (the public port is the balancer's).
    expect(await fetch(`http://127.0.0.1:${env.OPS_PORT}/api/v1/health`).then((r) => r.status)).toBe(404);

    const chain = clientsFor(env);
    await chain.freshenFeeds();
    const { key, txHash } = await chain.relayTrade();
    const auth = { authorization: `Bearer ${key}` };
    await until(
      "the trade mined in me/trades",
      async () => {
        const r = await call(env, "GET", "/api/v1/me/trades", undefined, auth);
        return r.json?.trades?.find((t: { tx_hash: string }) => t.tx_hash === txHash)?.status === "mined"
          ? true
          : undefined;
      },
      60_000,
      run,
      500,
    );
    // Both processes took a share of the requests (round-robin), and each answers for the public host.
    const shares = await Promise.all(apis.map((a) => answered(a.metricsPort)));
    expect(shares.every((n) => n > 0)).toBe(true);

    // kill -9 of one API process: every read still answers, and the process is started again on its port.
    const victim = (await pidOnPort(apis[0]!.port))!;
    expect(victim).toBeGreaterThan(0);
    process.kill(victim, "SIGKILL");
    // Every read still answers 200: while the kernel tears the dead process down its port still takes
    // connections, and a read the balancer sent there is sent once to the other process (a request that is
    // not a read answers 503 ENGINE_UNAVAILABLE then: test/balancer.test.ts); once the port refuses, the
    // other process (or the replacement listening there) answers.
    // GET /config: an answer of the process alone (health also reports the chain and stores, which a loaded
    // machine can make slow), so every non-200 here is the balancer's.
    const answers: { status: number; code?: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await call(env, "GET", "/api/v1/config");
      answers.push({ status: r.status, ...(r.json?.error ? { code: r.json.error.code } : {}) });
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(answers).toEqual(answers.map(() => ({ status: 200 })));
    const replaced = await until(
      "the API process started again",
      async () => {
        const pid = await pidOnPort(apis[0]!.port);
        return pid && pid !== victim ? pid : undefined;
      },
      60_000,
      run,
      500,
    );
    expect(alive(replaced)).toBe(true);
    expect(run.out()).toMatch(/"msg":"restarting the API process 1","reason":"the API process 1 exited unexpectedly/);

    const pids = pidsOf(env)!;
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect([alive(pids.anvil), alive(pids.indexer), alive(replaced)]).toEqual([false, false, false]);
  }, 240_000);
});
