/**
 * `npm run load -- --minutes 10` (issue 32 point 2): the production layout (`npm run stack`: the
 * devnet, the indexer alone, N API processes behind the balancer, the signing services alone, on
 * PostgreSQL and Redis) under a population of agents for some minutes, with one API process killed
 * with SIGKILL at a random moment and later the indexer; then the audit and the report
 * (bench/out/load-<date>.md and .svg).
 *
 * Defaults (the issue's): 50 REST agents (sign in, quote, prepare, sign, submit, wait for the
 * receipt), 20 session executors trading through sessions their owners granted, 2,000 hosted paper
 * agents and 20 live ones on the rule brain, 10 readers of the league, treasury, stats, tokens,
 * portfolio, trades and hosted logs. `--quick` is a two-minute smoke run with a tenth of each.
 */
import "../../lib/noTelemetry.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import PQueue from "p-queue";
import pg from "pg";
import { Redis } from "ioredis";
import { ensureSnapshot } from "../../devnet/snapshot.js";
import { ROOT } from "../../lib/root.js";
import { clientsFor, npmStart, stackEnv, untilReady, apiProcesses } from "../../test/helpers/npmStart.js";
import { liveOwner, paperOwner, reader, restAgent, sessionExecutor, type Trade, type World } from "./actors.js";
import { audit5xx, auditHostedLive, auditMemory, auditRelays, auditTicks, auditTrades } from "./audit.js";
import { clientFor, loopbackOf, Recorder, type Client } from "./client.js";
import { killApiProcess, killIndexer, sampleMemory, type Fault, type MemorySample } from "./processes.js";
import { chartSvg, reportMarkdown } from "./report.js";
import { arbitrageur } from "./arbitrageur.js";
import { readUniverse } from "../../lib/universe.js";
import { UNIVERSE_FILE } from "../../devnet/snapshot.js";

type Settings = {
  minutes: number;
  agents: number;
  sessions: number;
  paper: number;
  live: number;
  readers: number;
  apiProcesses: number;
  intervalS: number;
  thinkS: [number, number];
  redisUrl: string;
};

function parseArgs(argv: string[]): Settings {
  const quick = argv.includes("--quick");
  const num = (name: string, dflt: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  const scale = quick ? 0.1 : 1;
  return {
    minutes: num("minutes", quick ? 2 : 10),
    agents: num("agents", Math.round(50 * scale)),
    sessions: num("sessions", Math.round(20 * scale)),
    paper: num("paper", Math.round(2_000 * scale)),
    live: num("live", Math.round(20 * scale)),
    readers: num("readers", Math.max(2, Math.round(10 * scale))),
    apiProcesses: num("api-processes", 2),
    intervalS: num("interval", 60),
    thinkS: [num("think-min", 5), num("think-max", 15)],
    // A Redis database of its own (9), emptied at the start: limits of earlier runs do not carry over.
    redisUrl: process.env.LOAD_REDIS_URL ?? "redis://127.0.0.1:6379/9",
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `f` for 0..n-1, at most `concurrency` at once. */
async function many<T>(n: number, concurrency: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const q = new PQueue({ concurrency });
  return Promise.all(Array.from({ length: n }, (_, i) => q.add(() => f(i)) as Promise<T>));
}

async function main() {
  const s = parseArgs(process.argv.slice(2));
  console.log(`[load] ${JSON.stringify(s)}`);
  await ensureSnapshot((m) => console.log(`[load] ${m}`));
  const redis = new Redis(s.redisUrl);
  await redis.flushdb();
  redis.disconnect();
  const { env, cleanup } = await stackEnv("postgres");
  const setup: Record<string, number> = {};
  const t = Date.now();
  const run = npmStart({ ...env, API_PROCESSES: String(s.apiProcesses), REDIS_URL: s.redisUrl } as typeof env);
  try {
    await untilReady(run, 300_000);
    setup["stack ready"] = Date.now() - t;
    await drive(s, env, run, setup);
  } finally {
    run.child.kill("SIGTERM");
    await Promise.race([run.exited, sleep(30_000)]);
    await cleanup().catch(() => {});
  }
}

async function drive(
  s: Settings,
  env: Awaited<ReturnType<typeof stackEnv>>["env"],
  run: ReturnType<typeof npmStart>,
  setup: Record<string, number>,
) {
  const chain = clientsFor(env);
  await chain.freshenFeeds();
  const rec = new Recorder();
  let stopped = false;
  const wakers = new Set<() => void>();
  const world: World = {
    pub: chain.pub,
    rpcUrl: chain.rpcUrl,
    chain: chain.pub.chain!,
    fund: (address, eth) => chain.test.setBalance({ address, value: eth }),
    stopped: () => stopped,
    pause: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), wakers.delete(done), resolve());
        const timer = setTimeout(done, ms);
        wakers.add(done);
      }),
  };
  let next = 0;
  const base = `http://127.0.0.1:${env.PORT}`;
  const clients: Client[] = [];
  const newClient = () => {
    const c = clientFor(base, loopbackOf(next++), rec);
    clients.push(c);
    return c;
  };
  const trades: Trade[] = [];
  const arb = await arbitrageur({ ...world, universe: readUniverse(UNIVERSE_FILE) });

  let t = Date.now();
  const rest = await many(s.agents, 8, () => restAgent(world, newClient(), trades, s.thinkS));
  const sessions = await many(s.sessions, 4, () => sessionExecutor(world, newClient(), trades, s.thinkS));
  setup[`${s.agents} REST agents and ${s.sessions} sessions`] = Date.now() - t;
  t = Date.now();
  const owners = Math.ceil(s.paper / 20);
  const paper = await many(owners, 8, (i) =>
    paperOwner(world, newClient(), Math.min(20, s.paper - i * 20), s.intervalS),
  );
  setup[`${s.paper} hosted paper agents`] = Date.now() - t;
  t = Date.now();
  const live = await many(s.live, 4, () => liveOwner(world, newClient(), s.intervalS));
  setup[`${s.live} hosted live agents`] = Date.now() - t;
  const someOwner = paper[0];
  const readers = await many(s.readers, 4, () =>
    reader(world, newClient(), someOwner?.ids ?? [], someOwner?.owner.key ?? ""),
  );

  // The run: the clock starts here; setup's requests are not counted.
  rec.samples.length = 0;
  const t0 = Date.now();
  (rec as { t0: number }).t0 = t0;
  const runMs = s.minutes * 60_000;
  const memory: MemorySample[] = [];
  const apiPorts = apiProcesses(run.out()).map((a) => a.port);
  const sampling = sampleMemory(
    run.child.pid!,
    () => apiPorts,
    t0,
    5_000,
    () => stopped,
    memory,
  );
  const loops = [...rest, ...sessions, ...readers, arb.loop].map((loop) =>
    loop().catch((e) => console.error(`[load] ${e}`)),
  );
  const faults = Promise.all([
    killApiProcess(run.out(), t0, runMs * (0.25 + Math.random() * 0.2)),
    killIndexer(env, t0, runMs * (0.6 + Math.random() * 0.15)),
  ]);
  const ticker = setInterval(
    () =>
      console.log(
        `[load] ${((Date.now() - t0) / 1000).toFixed(0)} s: ${rec.samples.length} requests, ${trades.length} trades`,
      ),
    30_000,
  );
  await sleep(runMs);
  stopped = true;
  for (const wake of wakers) wake();
  clearInterval(ticker);
  await Promise.all(loops);
  await sampling;
  const done = (await faults).filter((f): f is Fault => f !== null);
  const samples = [...rec.samples];
  const finalRunMs = Date.now() - t0;

  // Let the relay watcher and the indexer catch up with the last blocks before the audit reads them.
  await sleep(20_000);
  const auditClient = clientFor(base, "127.0.0.1", new Recorder());
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  const audit = [
    await auditTrades(auditClient, chain.pub, trades),
    await auditHostedLive(auditClient, chain.pub, live),
    await auditRelays(db, trades),
    await auditTicks(db),
    audit5xx(samples, done),
    auditMemory(memory, finalRunMs, 60_000, ["anvil"]),
  ];
  await db.end();
  for (const c of [...clients, auditClient]) c.close();
  const market = `${arb.stats.swaps} swaps buying ETH with $${arb.stats.usdIn.toLocaleString("en-US")} of USDG`;
  writeReport(s, setup, finalRunMs, samples, trades, done, audit, memory, paper.length, live.length, market);
}

function writeReport(
  s: Settings,
  setup: Record<string, number>,
  runMs: number,
  samples: Recorder["samples"],
  trades: Trade[],
  faults: Fault[],
  audit: Awaited<ReturnType<typeof auditTrades>>[],
  memory: MemorySample[],
  paperOwners: number,
  liveOwners: number,
  market: string,
) {
  const stamp = new Date().toISOString().replace(/[:]/g, "-").slice(0, 16);
  const dir = join(ROOT, "bench", "out");
  mkdirSync(dir, { recursive: true });
  const chartFile = `load-${stamp}.svg`;
  writeFileSync(join(dir, chartFile), chartSvg(samples, memory, faults, runMs));
  const md = reportMarkdown({
    title: `Load test, ${new Date().toISOString().slice(0, 16)} UTC (\`npm run load -- --minutes ${s.minutes}\`)`,
    settings: {
      "API processes": s.apiProcesses,
      "REST agents": s.agents,
      "session executors": s.sessions,
      "hosted paper agents": `${s.paper} (${paperOwners} owners), every ${s.intervalS} s`,
      "hosted live agents": `${s.live} (${liveOwners} owners), every ${s.intervalS} s`,
      readers: s.readers,
      "arbitrageur (outside the service, keeps ETH/USDG at the feed)": market,
      "think time between trades": `${s.thinkS[0]}-${s.thinkS[1]} s`,
      machine: "2 cores, 24 GiB, Node 20; devnet blocks every second",
    },
    setup,
    runMs,
    samples,
    trades,
    faults,
    audit,
    memory,
    chartFile,
  });
  writeFileSync(join(dir, `load-${stamp}.md`), md);
  writeFileSync(join(dir, `load-${stamp}.json`), JSON.stringify({ settings: s, samples, memory, faults, trades }));
  console.log(md);
  console.log(`[load] report: bench/out/load-${stamp}.md`);
  if (audit.some((a) => !a.ok)) process.exitCode = 1;
}

await main();
