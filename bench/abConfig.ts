/**
 * A/B of the edge's own cost: CPU microseconds the service app's process spends per GET /config
 * (bench/httpServer.ts under 32 connections), for each checkout given, alternating A, B, A, B...
 * in one run, so a shared, noisy machine moves both alike. CPU per request is steadier than req/s
 * on such a machine. `node --import tsx bench/abConfig.ts <treeA> <treeB> [...]`; ROUNDS (5) sets
 * the rounds, PROFOUT=<prefix> writes a CPU profile of each measured window. Each tree needs its
 * node_modules and devnet/universe.json.
 */
import { spawn } from "node:child_process";
import autocannon from "autocannon";
import { freePort, startAnvil } from "../devnet/anvil.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";

const REQUESTS = 40_000;
const probe = new URL("./cpuProbe.mjs", import.meta.url).pathname;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cpuPerRequest(tree: string, anvilPort: number): Promise<number> {
  const port = await freePort();
  const args = ["--import", "tsx", "--import", probe, "bench/httpServer.ts", "app", String(port), String(anvilPort)];
  const child = spawn("node", args, { cwd: tree, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d.toString()));
  await new Promise<void>((r) => child.stdout!.on("data", (d) => d.toString().includes("READY") && r()));
  const url = `http://127.0.0.1:${port}/api/v1/config`;
  await autocannon({ url, connections: 32, amount: 10_000 }); // warm-up
  child.kill("SIGUSR2");
  await pause(200);
  const res = await autocannon({ url, connections: 32, amount: REQUESTS });
  child.kill("SIGUSR1");
  await pause(1_500);
  child.kill("SIGINT");
  await new Promise((r) => child.once("exit", r));
  if (res.non2xx || res.errors) throw new Error(`${tree}: ${res.non2xx} non-2xx, ${res.errors} errors`);
  return Number(/CPU (\d+)/.exec(err)![1]) / REQUESTS;
}

const trees = process.argv.slice(2);
await ensureSnapshot();
const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
const runs = new Map<string, number[]>(trees.map((t) => [t, []]));
for (let round = 0; round < Number(process.env.ROUNDS ?? 5); round++)
  for (const t of trees) runs.get(t)!.push(await cpuPerRequest(t, anvil.port));
for (const [t, us] of runs) {
  const sorted = [...us].sort((a, b) => a - b);
  const all = us.map((x) => x.toFixed(0)).join(", ");
  console.log(`${t}: median ${sorted[sorted.length >> 1]!.toFixed(1)} µs CPU per request (${all})`);
}
await anvil.stop();
process.exit(0);
