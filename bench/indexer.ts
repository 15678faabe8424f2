/**
 * Indexer benchmark. Backfill: tens of thousands of real v4 Swap events (SwapBatcher) plus
 * platform transfers on a private devnet, indexed by the service's Ponder app and by a bare Ponder
 * app with the same sources and empty handlers, one after the other on PostgreSQL; each timed from
 * process start to Ponder's /ready, minus the same app's time on the pristine devnet (startup and
 * the snapshot's own blocks). Realtime: a swap's receipt to its row readable in the views.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseAbi,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
} from "viem";
import pg from "pg";
import { freePort, startAnvil, type Anvil } from "../devnet/anvil.js";
import { devnetChain } from "../devnet/deploy.js";
import { devnetAccount } from "../lib/devnetAccount.js";
import { fixtureBytecode } from "../devnet/artifacts.js";
import { SNAPSHOT_FILE, UNIVERSE_FILE, ensureSnapshot, buildFixtures } from "../devnet/snapshot.js";
import { readUniverse } from "../lib/universe.js";
import { ROOT } from "../lib/root.js";
import { erc20Abi, mintableAbi } from "../abis/erc20.js";
import { swapCalldata } from "../test/helpers/trades.js";
import { summarize, type Row } from "./stats.js";
import { createDatabase, dropDatabase } from "../test/helpers/databases.js";

const batcherAbi = parseAbi([
  "constructor(address poolManager)",
  "function run((address currency0, address currency1, uint24 fee, int24 tickSpacing, address hooks) key, uint256 count, uint256 amount0, uint256 amount1)",
]);

type App = "service" | "bare";

async function seedEvents(
  anvil: Anvil,
  swapsWanted: number,
): Promise<{ swaps: number; transfers: number; blocks: number; fromBlock: number; toBlock: number }> {
  const u = readUniverse(UNIVERSE_FILE);
  const chain = devnetChain(anvil.rpcUrl);
  const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20, cacheTime: 0 });
  const deployer = devnetAccount(0);
  const wallet = createWalletClient({ chain, transport: http(anvil.rpcUrl), account: deployer });
  const pool = u.pools.find((p) => p.symbol0 === "TSLA" || p.symbol1 === "TSLA")!;
  const key = {
    currency0: pool.currency0,
    currency1: pool.currency1,
    fee: pool.fee,
    tickSpacing: pool.tickSpacing,
    hooks: pool.hooks,
  };
  const hash = await wallet.deployContract({
    abi: batcherAbi,
    bytecode: fixtureBytecode("SwapBatcher", "SwapBatcher"),
    args: [u.contracts.poolManager],
  });
  const batcher = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  for (const token of [pool.currency0, pool.currency1]) {
    const amount = token === u.tokens.USDG!.address ? parseUnits("1000000", 6) : parseEther("10000");
    await pub.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: token,
        abi: mintableAbi,
        functionName: "mint",
        args: [batcher, amount],
      }),
    });
  }
  const perTx = 400;
  const txs = Math.ceil(swapsWanted / perTx);
  const perBlock = 3;
  await pub.request({ method: "evm_setAutomine" as never, params: [false] as never });
  let nonce = await pub.getTransactionCount({ address: deployer.address });
  const platform = getAddress(u.devnet!.accounts.platform!);
  let blocks = 0;
  let transfers = 0;
  const gasPrice = 2_000_000_000n;
  const hashes: Hex[] = [];
  const fromBlock = Number(await pub.getBlockNumber());
  for (let i = 0; i < txs; i += perBlock) {
    for (let j = i; j < Math.min(txs, i + perBlock); j++) {
      // Tiny exact-input swaps in alternating directions keep the price where it is.
      const [amount0, amount1] =
        key.currency0 === u.tokens.USDG!.address ? [25_000n, 10n ** 14n] : [10n ** 14n, 25_000n];
      hashes.push(
        await wallet.sendTransaction({
          to: batcher,
          data: encodeFunctionData({
            abi: batcherAbi,
            functionName: "run",
            args: [key, BigInt(perTx), amount0, amount1],
          }),
          nonce: nonce++,
          gas: 9_500_000n,
          gasPrice,
        }),
      );
    }
    await wallet.sendTransaction({
      to: u.tokens.USDG!.address,
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [platform, 1n] }),
      nonce: nonce++,
      gas: 100_000n,
      gasPrice,
    });
    transfers++;
    await pub.request({ method: "evm_mine" as never, params: [] as never });
    blocks++;
  }
  await pub.request({ method: "evm_setAutomine" as never, params: [true] as never });
  const seededTo = Number(await pub.getBlockNumber());
  // Bury the seed under empty blocks so Ponder treats it as finalized history (a backfill), not as
  // realtime blocks after /ready.
  await pub.request({ method: "anvil_mine" as never, params: ["0x100"] as never });
  let swaps = 0;
  for (const hash of hashes) {
    const r = await pub.getTransactionReceipt({ hash });
    if (r.status !== "success") throw new Error(`seed transaction ${hash} reverted`);
    swaps += r.logs.filter((l) => l.address.toLowerCase() === u.contracts.poolManager.toLowerCase()).length;
  }
  return { swaps, transfers, blocks, fromBlock, toBlock: seededTo };
}

async function runApp(app: App, anvilPort: number, toBlock: number) {
  const id = Math.random().toString(36).slice(2, 8);
  const schema = `b_${app}_${id}`;
  const views = `bv_${app}_${id}`;
  const port = await freePort();
  // Its own database: a shared ponder_sync would serve the next run from cache (and chain 4663's
  // cache from an earlier devnet), which is no backfill at all.
  const dbName = `pit_bench_${app}_${id}`;
  const dbUrl = await createDatabase(dbName);
  const args = [
    join(ROOT, "node_modules/ponder/dist/esm/bin/ponder.js"),
    "start",
    "--port",
    String(port),
    "--views-schema",
    views,
    "--log-level",
    "error",
  ];
  if (app === "bare") args.splice(1, 0, "--root", join(ROOT, "bench", "bare"));
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: app === "bare" ? join(ROOT, "bench", "bare") : ROOT,
    env: {
      ...process.env,
      ANVIL_PORT: String(anvilPort),
      DATABASE_URL: dbUrl,
      DATABASE_SCHEMA: schema,
      LOG_LEVEL: "error",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  // Wait until the checkpoint covers the seed (Ponder backfills to the finalized block, then follows
  // the rest in realtime).
  let readyMs = 0;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${app} indexer exited ${child.exitCode}`);
    try {
      const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as Record<
        string,
        { block: { number: number } }
      >;
      const block = Object.values(status)[0]?.block.number ?? 0;
      if (block >= toBlock) {
        readyMs = performance.now() - t0;
        break;
      }
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  for (;;) {
    if ((await fetch(`http://127.0.0.1:${port}/ready`).catch(() => null))?.status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  // Ponder's own clock of its historical phase (RPC sync + indexing; no build or startup). The
  // seed is buried under empty blocks, so it is all inside this phase.
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const gauge = (name: string) =>
    metrics
      .split("\n")
      .filter((l) => l.startsWith(name))
      .map((l) => Number(l.split(" ").pop()));
  const seededS =
    gauge("ponder_historical_end_timestamp_seconds")[0]! - gauge("ponder_historical_start_timestamp_seconds")[0]!;
  return {
    readyMs,
    seededS,
    dbUrl,
    views,
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      await dropDatabase(dbName);
    },
  };
}

async function latency(anvil: Anvil, views: string, dbUrl: string, samples: number): Promise<number[]> {
  const u = readUniverse(UNIVERSE_FILE);
  const chain = devnetChain(anvil.rpcUrl);
  const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 5 });
  const trader = devnetAccount(5);
  const wallet = createWalletClient({ chain, transport: http(anvil.rpcUrl), account: trader });
  const pool = u.pools.find((p) => p.symbol0 === "ETH" && p.symbol1 === "USDG")!;
  const key = {
    currency0: pool.currency0,
    currency1: pool.currency1,
    fee: pool.fee,
    tickSpacing: pool.tickSpacing,
    hooks: pool.hooks,
  };
  const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
  const out: number[] = [];
  // Two warm-up swaps are not counted: the first blocks after /ready also settle the realtime sync.
  for (let i = -2; i < samples; i++) {
    const data = swapCalldata({
      poolKey: key,
      tokenIn: zeroAddress,
      tokenOut: u.tokens.USDG!.address,
      amountIn: parseEther("0.01"),
      minOut: 0n,
      feeBips: 25n,
      feeRecipient: u.devnet!.accounts.platform! as Address,
    });
    const hash: Hex = await wallet.sendTransaction({
      to: u.contracts.universalRouter,
      data,
      value: parseEther("0.01"),
      gas: 400_000n,
    });
    await pub.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    const mined = performance.now();
    for (;;) {
      const r = await db.query(`SELECT 1 FROM "${views}".pool_observation WHERE tx_hash = $1`, [hash]);
      if (r.rowCount) break;
      await new Promise((res) => setTimeout(res, 5));
    }
    if (i >= 0) out.push(performance.now() - mined);
    // Stagger so samples fall at different points of the 100 ms polling cycle.
    await new Promise((res) => setTimeout(res, 37 + ((i * 53) % 100)));
  }
  await db.end();
  return out;
}

export async function benchIndexer(opts: { swaps: number; latencySamples: number; runs: number }): Promise<Row[]> {
  await ensureSnapshot();
  buildFixtures();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const seeded = await seedEvents(anvil, opts.swaps);
  const rates: Record<App, number[]> = { service: [], bare: [] };
  const ready: Record<App, number[]> = { service: [], bare: [] };
  let latencies: number[] = [];
  // Interleaved runs of the two apps over the same seeded chain; each a fresh schema.
  for (let run = 0; run < opts.runs; run++) {
    for (const app of ["bare", "service"] as App[]) {
      const r = await runApp(app, anvil.port, seeded.toBlock);
      rates[app].push((seeded.swaps + seeded.transfers) / r.seededS);
      ready[app].push(r.readyMs);
      if (app === "service") {
        // Count what was indexed: a fast backfill that skipped events would be no result at all.
        const db = new pg.Pool({ connectionString: r.dbUrl, max: 1 });
        const [{ n }] = (
          await db.query(`SELECT count(*)::int AS n FROM "${r.views}".pool_observation WHERE kind = 'swap'`)
        ).rows as [{ n: number }];
        await db.end();
        if (n < seeded.swaps) {
          const d2 = new pg.Pool({ connectionString: r.dbUrl, max: 1 });
          const kinds = (
            await d2.query(`SELECT kind, count(*)::int AS n FROM "${r.views}".pool_observation GROUP BY kind`)
          ).rows;
          const pools = (await d2.query(`SELECT id, swaps, block FROM "${r.views}".pool`)).rows;
          const head = (await d2.query(`SELECT latest_checkpoint FROM "${r.views}"._ponder_checkpoint`)).rows;
          await d2.end();
          throw new Error(
            `the service indexed ${n} of ${seeded.swaps} swaps ${JSON.stringify({ kinds, pools, head })}`,
          );
        }
      }
      if (app === "service" && run === 0) latencies = await latency(anvil, r.views, r.dbUrl, opts.latencySamples);
      await r.stop();
    }
  }
  await anvil.stop();
  const median = (xs: number[]) => summarize("", xs, "").p50;
  const what =
    `${seeded.swaps} swaps + ${seeded.transfers} fee-wallet transfers in ${seeded.blocks} blocks ` +
    "(Ponder's historical phase, which also covers the snapshot's ~150 and 256 empty blocks)";
  return [
    summarize(`backfill, bare Ponder (empty handlers): ${what}`, rates.bare, "events/s"),
    summarize(`backfill, service indexer: ${what}`, rates.service, "events/s"),
    summarize(
      "service / bare backfill throughput (medians)",
      [(median(rates.service) / median(rates.bare)) * 100],
      "%",
    ),
    summarize("process start to /ready, bare", ready.bare, "ms"),
    summarize("process start to /ready, service", ready.service, "ms"),
    summarize("realtime block-to-readable (PostgreSQL views, 100 ms polling)", latencies, "ms"),
  ];
}
