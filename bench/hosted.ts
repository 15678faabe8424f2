/**
 * Hosted agents benchmark (issue 16):
 * - paper ticks per second with the rule brain (marks, a fill at the tick's block, the tick's commit) on a devnet
 *   with the real indexer, 16 at a time: fills computed from the pool book (issue 31 point 2), and from one V4Quoter
 *   call each (LOCAL_QUOTES off, the baseline), in the same run;
 * - scheduler lag (ran_at - due, wall ms) with 1,000 and 10,000 agents due across a 60 s interval
 *   on PostgreSQL, a tick that only commits its slot, the clock at 6x the wall;
 * - memory: the scheduler keeps no per-agent state in memory (rows in the store); heap growth
 *   over a 10,000-agent run, per agent.
 */
import { getAddress } from "viem";
import { RateLimiter } from "../api/http/rateLimit.js";
import { createScheduler } from "../api/hosted/scheduler.js";
import { openPostgres, type Db } from "../api/ports/store/db.js";
import { migrate } from "../api/ports/store/migrations.js";
import { freshStore, serveApi } from "../test/helpers/api.js";
import { createDatabase, dropDatabase } from "../test/helpers/databases.js";
import { recordTick, virtualClock } from "../test/helpers/schedulerChild.js";
import { freshenMarket, startIndexedDevnet } from "../test/helpers/stack.js";
import { summarize, type Row } from "./stats.js";

/** Paper ticks per second of `agents` rule-brain agents, filled from the indexer's pool book or by the V4Quoter. */
async function paperTicks(agents: number, localQuotes: boolean): Promise<number> {
  const chain = await startIndexedDevnet({ before: freshenMarket });
  // BENCH_STORE=postgres: the app store in PostgreSQL (production's store); PGlite otherwise, as every earlier figure.
  const store = await freshStore(process.env.BENCH_STORE === "postgres" ? "postgres" : "pglite");
  const api = await serveApi({
    rpcUrl: chain.dn.anvil.rpcUrl,
    db: store.db,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(Date.now, 10_000, false),
    hostedScheduler: { intervalMs: 0, concurrency: 16 },
    config: { localQuotes },
  });
  try {
    const hosted = api.app.services.hosted;
    for (let i = 0; i < agents; i++) {
      const wallet = getAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`);
      await hosted.create(
        {
          brain: "rule",
          mode: "paper",
          params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 10 },
          interval_s: 60,
          pairs: ["ETH/USDG"],
          limits: { max_trade_usd: 100, max_day_usd: 10_000, max_position_usd: 100_000 },
        },
        { wallet, keyId: 1 },
      );
    }
    const t0 = performance.now();
    const ran = await hosted.scheduler.runDue();
    const s = (performance.now() - t0) / 1000;
    const [n] = await store.db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM app.hosted_logs WHERE kind = 'trade'",
    );
    if (ran !== agents || Number(n!.n) !== agents) throw new Error(`ran ${ran}, ${n!.n} trades`);
    return agents / s;
  } finally {
    await api.close();
    await store.drop();
    await chain.stop();
  }
}

async function schedulerLag(agents: number): Promise<Row[]> {
  const name = `pit_bench_sched_${Math.random().toString(36).slice(2, 8)}`;
  const url = await createDatabase(name);
  const db: Db = await openPostgres(url, 8);
  const rate = 6;
  try {
    await migrate(db);
    const start = Date.now();
    const clock = virtualClock(start, rate);
    await db.query(
      `INSERT INTO app.hosted_agents (id, wallet, key_id, name, brain, params, interval_s, pairs, limits, mode,
             status, terms, created_at, updated_at)
       SELECT 'ha_b' || i, '0x' || lpad(to_hex(i), 40, '0'), 1, 'b', 'rule', '{}', 60, '[]', '{}', 'paper', 'active',
         '{}', 0, 0 FROM generate_series(1, $1) AS i`,
      [agents],
    );
    // Due times spread over the first interval, as agents created over time are.
    await db.query(
      "INSERT INTO app.hosted_schedule (agent_id, next_tick_ms) SELECT 'ha_b' || i, $1::bigint + (i * 60000::bigint " +
        "/ $2) FROM generate_series(1, $2) AS i",
      [start, agents],
    );
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const s = createScheduler({
      db,
      clock,
      instance: "bench",
      leaseMs: 30_000,
      concurrency: 32,
      intervalMs: 50,
      runTick: (c, instance) => recordTick(db, c, instance, 0, clock),
    });
    s.start();
    // Two intervals of virtual time: 20 s of wall.
    while (clock() < start + 120_000) await new Promise((r) => setTimeout(r, 200));
    await s.stop();
    global.gc?.();
    const heap1 = process.memoryUsage().heapUsed;
    const lags = (
      await db.query<{ lag: string }>("SELECT (ran_at_ms - due_ms)::text AS lag FROM app.hosted_ticks")
    ).map((r) => Number(r.lag) / rate);
    return [
      summarize(`hosted: scheduler lag, ${agents} agents at 60 s (ticks ${lags.length}), wall`, lags, "ms"),
      summarize(
        `hosted: heap growth per agent over the run, ${agents} agents`,
        [Math.max(0, heap1 - heap0) / agents],
        "bytes",
      ),
    ];
  } finally {
    await db.close();
    await dropDatabase(name);
  }
}

export async function benchHosted(opts: { paperAgents: number; sizes: number[] }): Promise<Row[]> {
  const n = opts.paperAgents;
  const quoter = await paperTicks(n, false);
  const local = await paperTicks(n, true);
  const label = `hosted: paper ticks/s, rule brain, ${n} agents, 16 at a time`;
  const rows = [
    summarize(`${label}, fills from the V4Quoter (local quotes off)`, [quoter], "ticks/s"),
    summarize(`${label}, fills from the pool book (local quotes on)`, [local], "ticks/s"),
    summarize(`${label}: on / off (goal >= 5)`, [local / quoter], "x"),
  ];
  for (const n of opts.sizes) rows.push(...(await schedulerLag(n)));
  return rows;
}
