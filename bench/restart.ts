/**
 * Issue 12's numbers for `npm start` under faults: restart time after kill -9 of the whole stack
 * (the second start's launch to /health ok; PGlite and PostgreSQL), and recovery after the chain
 * node is stopped for 60 s (SIGCONT to the indexer following the chain again). `--only=restart`.
 */
import {
  call,
  clientsFor,
  indexerBlock,
  killStack9,
  npmStart,
  pidsOf,
  stackEnv,
  until,
  untilReady,
  alive,
  type Backend,
  type StackEnv,
} from "../test/helpers/npmStart.js";
import { summarize, type Row } from "./stats.js";

const healthOk = async (env: StackEnv) =>
  (await call(env, "GET", "/api/v1/health")).json?.status === "ok" ? true : undefined;

async function restartAfterKill9(backend: Backend, runs: number): Promise<Row> {
  const { env, cleanup } = await stackEnv(backend);
  const samples: number[] = [];
  let run = npmStart(env);
  try {
    await untilReady(run);
    await until("health ok", () => healthOk(env), 60_000, run);
    for (let i = 0; i < runs; i++) {
      // Let the chain and the indexer move on a little, then kill everything at once.
      await new Promise((r) => setTimeout(r, 3_000 + Math.random() * 2_000));
      const killed = killStack9(run, env);
      await until(
        "stack gone",
        async () => (![killed.start, killed.anvil, killed.indexer].some(alive) ? true : undefined),
        10_000,
      );
      run = npmStart(env);
      await untilReady(run);
      await until("health ok", () => healthOk(env), 60_000, run);
      samples.push(Date.now() - run.startedAt);
    }
  } finally {
    run.child.kill("SIGTERM");
    await run.exited;
    await cleanup();
  }
  return summarize(`npm start after kill -9 -> health ok (${backend})`, samples, "ms");
}

async function recoveryAfterNodeStall(stallMs: number): Promise<Row> {
  const { env, cleanup } = await stackEnv("pglite");
  const run = npmStart(env);
  try {
    await untilReady(run);
    await until("health ok", () => healthOk(env), 60_000, run);
    const { pub } = clientsFor(env);
    const anvil = pidsOf(env)!.anvil!;
    process.kill(anvil, "SIGSTOP");
    await new Promise((r) => setTimeout(r, stallMs));
    process.kill(anvil, "SIGCONT");
    const resumedAt = Date.now();
    const headAtResume = Number(await pub.getBlockNumber());
    const ms = await until(
      "indexer following",
      async () => {
        const block = await indexerBlock(env);
        return block !== null && block >= headAtResume + 3 && block >= Number(await pub.getBlockNumber()) - 1
          ? Date.now() - resumedAt
          : undefined;
      },
      120_000,
      run,
      250,
    );
    return summarize(`indexer following again after a ${stallMs / 1000} s node stall (from SIGCONT)`, [ms], "ms");
  } finally {
    run.child.kill("SIGTERM");
    await run.exited;
    await cleanup();
  }
}

export async function benchRestart(opts: { runs: number; stallMs: number }): Promise<Row[]> {
  return [
    await restartAfterKill9("pglite", opts.runs),
    await restartAfterKill9("postgres", opts.runs),
    await recoveryAfterNodeStall(opts.stallMs),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { table } = await import("./stats.js");
  console.log(
    table(
      await benchRestart({
        runs: Number(process.argv.find((a) => a.startsWith("--runs="))?.slice(7) ?? 3),
        stallMs: 60_000,
      }),
    ),
  );
  process.exit(0);
}
