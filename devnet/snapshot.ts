/**
 * The pristine devnet: fixtures built, contracts deployed, chain state dumped to
 * devnet/snapshot.json and addresses to devnet/universe.json. Rebuilt only when its inputs change
 * (fixture sources, deploy code, contract package versions), so later starts load it in ~0.5 s.
 */
import "../lib/noTelemetry.js";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./artifacts.js";
import { startAnvil } from "./anvil.js";
import { foundryBin } from "./foundry.js";

export const SNAPSHOT_FILE = join(ROOT, "devnet", "snapshot.json");
export const UNIVERSE_FILE = join(ROOT, "devnet", "universe.json");
const META_FILE = join(ROOT, "devnet", "snapshot.meta.json");

function inputsHash(): string {
  const h = createHash("sha256");
  const files = [
    ...readdirSync(join(ROOT, "contracts", "src"))
      .sort()
      .map((f) => join(ROOT, "contracts", "src", f)),
    ...["deploy.ts", "place.ts", "snapshot.ts", "artifacts.ts", "anvil.ts", "multicall3.runtime.hex"].map((f) =>
      join(ROOT, "devnet", f),
    ),
    join(ROOT, "lib", "v4.ts"),
    join(ROOT, "lib", "addressBook.ts"),
    join(ROOT, "foundry.toml"),
  ];
  for (const f of files) h.update(f.slice(ROOT.length)).update(readFileSync(f));
  for (const pkg of [
    "@uniswap/v4-core",
    "@uniswap/v4-periphery",
    "@uniswap/universal-router",
    "@metamask/delegation-abis",
    "@metamask/delegation-deployments",
    "@metamask/smart-accounts-kit",
    "@foundry-rs/anvil",
    "solc",
  ]) {
    h.update(pkg).update(JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version);
  }
  return h.digest("hex");
}

export function snapshotIsFresh(): boolean {
  if (!existsSync(SNAPSHOT_FILE) || !existsSync(UNIVERSE_FILE) || !existsSync(META_FILE)) return false;
  try {
    return JSON.parse(readFileSync(META_FILE, "utf8")).inputs === inputsHash();
  } catch {
    return false;
  }
}

export function buildFixtures(): void {
  execFileSync(foundryBin("forge"), ["build", "--offline", "--root", ROOT], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

export type SnapshotTimings = { buildMs: number; deployMs: number; dumpMs: number; totalMs: number };

/**
 * Builds the snapshot from scratch: forge build, fresh anvil, deploy, dump. `out` redirects the
 * files (benchmarks); by default it writes the pristine snapshot everything else starts from.
 */
export async function buildSnapshot(
  out: { snapshot: string; universe: string; meta: string | null } = {
    snapshot: SNAPSHOT_FILE,
    universe: UNIVERSE_FILE,
    meta: META_FILE,
  },
): Promise<SnapshotTimings> {
  const t0 = Date.now();
  buildFixtures();
  const t1 = Date.now();
  const tmp = `${out.snapshot}.tmp`;
  rmSync(tmp, { force: true });
  const anvil = await startAnvil({ dumpState: tmp });
  let deployMs = 0;
  try {
    // Imported late: deploy.ts reads contract artifacts that forge build just wrote.
    const { deployUniverse } = await import("./deploy.js");
    const t2 = Date.now();
    const universe = await deployUniverse(anvil.rpcUrl);
    deployMs = Date.now() - t2;
    writeFileSync(`${out.universe}.tmp`, JSON.stringify(universe, null, 2) + "\n");
  } finally {
    await anvil.stop();
  }
  const t3 = Date.now();
  if (!existsSync(tmp)) throw new Error("anvil did not write the state dump");
  renameSync(tmp, out.snapshot);
  renameSync(`${out.universe}.tmp`, out.universe);
  if (out.meta)
    writeFileSync(out.meta, JSON.stringify({ inputs: inputsHash(), builtAt: new Date().toISOString() }) + "\n");
  return { buildMs: t1 - t0, deployMs, dumpMs: Date.now() - t3, totalMs: Date.now() - t0 };
}

/**
 * Makes sure a fresh snapshot exists; builds it once if not. `builtSince` (ms): a snapshot written before it counts
 * as stale too (the tests' run keeps its chain's history in the current week).
 */
export async function ensureSnapshot(
  log: (msg: string) => void = () => {},
  opts: { builtSince?: number } = {},
): Promise<void> {
  const built = statSync(SNAPSHOT_FILE, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const recent = opts.builtSince === undefined || built >= opts.builtSince;
  if (snapshotIsFresh() && recent) return;
  log("devnet: building the pristine snapshot (forge build + deploy: first run, new inputs, or a new week for tests)");
  const t = await buildSnapshot();
  log(`devnet: snapshot ready in ${(t.totalMs / 1000).toFixed(1)} s (build ${t.buildMs} ms, deploy ${t.deployMs} ms)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const force = process.argv.includes("--force");
  if (force || !snapshotIsFresh()) {
    const t = await buildSnapshot();
    console.log(JSON.stringify(t));
  } else {
    console.log("snapshot is fresh");
  }
}
