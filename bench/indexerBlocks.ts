/**
 * Indexer cost per empty block (issue 11). A devnet from the snapshot, then N empty blocks mined
 * with `anvil_mine` (1 s apart, so block times move forward as on a real chain), then `ponder
 * start` of the service's indexer and of the bare app (bench/bare: log sources only, empty
 * handlers), each on PostgreSQL (a fresh database) and on PGlite (a fresh directory), timed from
 * process start to Ponder's /ready answering 200. One devnet, mined up point by point; the chain is
 * the same for the four runs of one N (nothing is mined while they run). A run that is not ready within the cap is
 * stopped and
 * reported as "> cap", not as a number.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, http, numberToHex } from "viem";
import { CHAIN_ID, freePort } from "../devnet/anvil.js";
import { foundryBin } from "../devnet/foundry.js";
import { devnetChain } from "../devnet/deploy.js";
import { SNAPSHOT_FILE, ensureSnapshot } from "../devnet/snapshot.js";
import { ROOT } from "../lib/root.js";
import { createDatabase, dropDatabase } from "../test/helpers/databases.js";
import type { IndexerBackend } from "../test/helpers/indexer.js";
import { summarize, type Row } from "./stats.js";

type App = "service" | "bare";

type Outcome = { readyMs: number; historicalS: number | null } | { cappedMs: number; log: string };

const log = (s: string) => process.stderr.write(`[indexer-blocks] ${s}\n`);

/** One `ponder start` of `app` on `backend` against the devnet on `anvilPort`, until /ready or the cap. */
async function startToReady(
  app: App,
  backend: IndexerBackend,
  anvilPort: number,
  capMs: number,
  serviceRoot: string,
): Promise<Outcome> {
  const id = Math.random().toString(36).slice(2, 8);
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `pit-bench-blocks-${app}-`));
  // A database of its own (Ponder's ponder_sync cache is keyed by chain id; every devnet is 4663).
  const dbName = `pit_bench_blk_${app}_${id}`;
  const dbUrl = backend === "postgres" ? await createDatabase(dbName) : null;
  const cwd = app === "bare" ? join(ROOT, "bench", "bare") : serviceRoot;
  const args = [
    join(ROOT, "node_modules/ponder/dist/esm/bin/ponder.js"),
    "start",
    "--port",
    String(port),
    "--log-level",
    "error",
  ];
  if (app === "bare") args.splice(1, 0, "--root", cwd);
  if (backend === "postgres") args.push("--views-schema", `bv_${app}_${id}`);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ANVIL_PORT: String(anvilPort),
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_SCHEMA: `b_${app}_${id}`,
    LOG_LEVEL: "error",
  };
  if (dbUrl) env.DATABASE_URL = dbUrl;
  else delete env.DATABASE_URL;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const base = `http://127.0.0.1:${port}`;
  let outcome: Outcome | null = null;
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${app} indexer (${backend}) exited ${child.exitCode} before /ready:\n${out}`);
      const res = await fetch(`${base}/ready`).catch(() => null);
      if (res?.status === 200) {
        const readyMs = performance.now() - t0;
        // Ponder's own clock of its historical phase (RPC sync + indexing, no build or startup).
        let historicalS: number | null = null;
        try {
          const metrics = await (await fetch(`${base}/metrics`)).text();
          const gauge = (name: string) =>
            Number(
              metrics
                .split("\n")
                .find((l) => l.startsWith(name))
                ?.split(" ")
                .pop(),
            );
          historicalS =
            gauge("ponder_historical_end_timestamp_seconds") - gauge("ponder_historical_start_timestamp_seconds");
          if (!Number.isFinite(historicalS)) historicalS = null;
        } catch {
          // metrics are a side note
        }
        outcome = { readyMs, historicalS };
        break;
      }
      if (performance.now() - t0 > capMs) {
        outcome = { cappedMs: capMs, log: out };
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    if (dbUrl) await dropDatabase(dbName);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return outcome!;
}

/**
 * The devnet of devnet/anvil.ts (same flags, snapshot loaded) plus `--prune-history 64`: anvil
 * 1.7's per-block mining cost grows with the chain (it clones and rebuilds whole state per block), so
 * mining 20,000 blocks took 442 s with full history and about half that pruned. Only old states are
 * dropped (no eth_call at old blocks); blocks and logs, all an indexer reads here, stay.
 */
async function startBenchAnvil(): Promise<{ rpcUrl: string; port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const args = [
    "--chain-id",
    String(CHAIN_ID),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--hardfork",
    "prague",
    "--load-state",
    SNAPSHOT_FILE,
    "--prune-history",
    "64",
  ];
  const child = spawn(foundryBin("anvil"), args, { stdio: ["ignore", "ignore", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const pub = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  for (const deadline = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new Error(`anvil exited ${child.exitCode}: ${stderr}`);
    if ((await pub.getChainId().catch(() => 0)) === CHAIN_ID) break;
    if (Date.now() > deadline) throw new Error(`anvil did not answer within 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    rpcUrl,
    port,
    async stop() {
      process.off("exit", killOnExit);
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

export async function benchIndexerBlocks(opts: {
  /** Empty blocks added after the snapshot, one devnet per point. */
  points: number[];
  /** Per-run cap on process start to /ready. */
  capMs: number;
  apps?: App[];
  backends?: IndexerBackend[];
  /** The service checkout to run (default this one): another build's tree, e.g. an export of an older commit. */
  serviceRoot?: string;
}): Promise<Row[]> {
  await ensureSnapshot();
  const apps = opts.apps ?? ["bare", "service"];
  const backends = opts.backends ?? ["postgres", "pglite"];
  const results: { n: number; app: App; backend: IndexerBackend; outcome: Outcome }[] = [];
  // One devnet for the whole curve: points in ascending order, each mined on top of the last (no
  // run mines anything, so every run of a point sees the same chain).
  const points = [...opts.points].sort((a, b) => a - b);
  const anvil = await startBenchAnvil();
  try {
    const pub = createPublicClient({
      chain: devnetChain(anvil.rpcUrl),
      transport: http(anvil.rpcUrl, { timeout: 600_000, retryCount: 0 }),
    });
    const snapshotHead = await pub.getBlockNumber();
    for (const n of points) {
      const tMine = performance.now();
      // anvil_mine(count, interval seconds): empty blocks, each timestamp 1 s after the previous.
      // In chunks, each its own request without retries (a retried anvil_mine would mine twice).
      for (let head = await pub.getBlockNumber(); head - snapshotHead < BigInt(n); head = await pub.getBlockNumber()) {
        const chunk = Math.min(5_000, n - Number(head - snapshotHead));
        await pub.request({ method: "anvil_mine" as never, params: [numberToHex(chunk), numberToHex(1)] as never });
      }
      const head = await pub.getBlockNumber();
      if (head - snapshotHead !== BigInt(n))
        throw new Error(`the devnet is ${head - snapshotHead} blocks past the snapshot, not ${n}`);
      log(
        `N=${n}: head ${head} (snapshot ${snapshotHead}), ` +
          `mined in ${((performance.now() - tMine) / 1000).toFixed(1)} s`,
      );
      for (const backend of backends) {
        for (const app of apps) {
          const outcome = await startToReady(app, backend, anvil.port, opts.capMs, opts.serviceRoot ?? ROOT);
          results.push({ n, app, backend, outcome });
          log(
            `N=${n} ${app} ${backend}: ` +
              ("readyMs" in outcome
                ? `${(outcome.readyMs / 1000).toFixed(1)} s to /ready ` +
                  `(historical phase ${outcome.historicalS?.toFixed(1) ?? "?"} s)`
                : `not ready within ${opts.capMs / 1000} s, stopped; log tail:\n${outcome.log.slice(-600)}`),
          );
        }
      }
    }
  } finally {
    await anvil.stop();
  }
  const rows: Row[] = [];
  const label = (n: number) => n.toLocaleString("en-US");
  for (const backend of backends) {
    for (const app of apps) {
      const mine = results.filter((r) => r.app === app && r.backend === backend);
      for (const r of mine) {
        const name = `start to /ready, ${
          app === "bare" ? "bare Ponder (log sources, empty " + "handlers)" : "service indexer"
        }, ${backend}, ${label(r.n)} empty blocks`;
        if ("readyMs" in r.outcome) {
          rows.push(
            summarize(
              name,
              [r.outcome.readyMs],
              "ms" +
                (r.outcome.historicalS !== null
                  ? ` (historical phase ${(r.outcome.historicalS * 1000).toFixed(0)} ms)`
                  : ""),
            ),
          );
        } else {
          rows.push({
            ...summarize(name, [], "ms"),
            unit: `> cap: not ready within ${r.outcome.cappedMs} ms, stopped`,
          });
        }
      }
      // Cost per empty block: the slope from the 0-block run to each larger point.
      const zero = mine.find((r) => r.n === 0);
      for (const r of mine) {
        if (!zero || r.n === 0 || !("readyMs" in zero.outcome)) continue;
        const name = `added per 1,000 empty blocks, ${app}, ${backend} (${label(r.n)} vs 0)`;
        if ("readyMs" in r.outcome)
          rows.push(summarize(name, [((r.outcome.readyMs - zero.outcome.readyMs) / r.n) * 1000], "ms"));
        else
          rows.push({
            ...summarize(name, [], "ms"),
            unit: `> ${(((r.outcome.cappedMs - zero.outcome.readyMs) / r.n) * 1000).toFixed(0)} ms (capped)`,
          });
      }
    }
  }
  return rows;
}
