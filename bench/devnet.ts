/**
 * Devnet benchmark: cold deploy (forge build + deploy of the whole contract set + state dump) and
 * start from the snapshot (anvil process start -> first eth_chainId answer with state loaded).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createPublicClient, http } from "viem";
import { foundryBin } from "../devnet/foundry.js";
import { ROOT } from "../lib/root.js";
import { startAnvil } from "../devnet/anvil.js";
import { buildSnapshot, ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { summarize, type Row } from "./stats.js";

export async function benchDevnet(opts: { coldRuns: number; startRuns: number }): Promise<Row[]> {
  await ensureSnapshot();
  const dir = mkdtempSync(join(tmpdir(), "pit-bench-devnet-"));
  const cold: number[] = [];
  const deployOnly: number[] = [];
  for (let i = 0; i < opts.coldRuns; i++) {
    const t = await buildSnapshot({
      snapshot: join(dir, `snap${i}.json`),
      universe: join(dir, `universe${i}.json`),
      meta: null,
    });
    cold.push(t.totalMs);
    deployOnly.push(t.deployMs);
  }
  const compile: number[] = [];
  for (let i = 0; i < opts.coldRuns; i++) {
    const t0 = performance.now();
    execFileSync(foundryBin("forge"), ["build", "--force", "--offline", "--root", ROOT], {
      cwd: ROOT,
      stdio: "ignore",
    });
    compile.push(performance.now() - t0);
  }
  const starts: number[] = [];
  let head = 0n;
  for (let i = 0; i < opts.startRuns; i++) {
    const t0 = performance.now();
    const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
    starts.push(performance.now() - t0);
    head = await createPublicClient({ transport: http(anvil.rpcUrl) }).getBlockNumber();
    await anvil.stop();
  }
  rmSync(dir, { recursive: true, force: true });
  const sizeMb = statSync(SNAPSHOT_FILE).size / 1e6;
  return [
    summarize("fixtures compile from scratch (forge build --force, npm solc)", compile, "ms"),
    summarize("devnet cold deploy (forge build + deploy + dump)", cold, "ms"),
    summarize("devnet deploy only (all contracts, pools, balances)", deployOnly, "ms"),
    summarize(`devnet start from snapshot (${sizeMb.toFixed(1)} MB, ${head} blocks)`, starts, "ms"),
  ];
}
