/**
 * DATA_DIR/start.pid: which processes `npm start` runs on this data directory. The next start reads
 * it to find leftovers of a start that was killed with -9 (an anvil or indexer still holding the
 * chain file, the ports or Ponder's lock) and stops them - only after checking, from
 * /proc/<pid>/cmdline and environ, that the pid still is that process and not a recycled one.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeAside } from "../lib/writeAside.js";

export type StackPids = {
  start: number;
  anvil?: number;
  indexer?: number;
  /** Indexer schema the indexer ran with: its lock may be released once the indexer is dead. */
  schema?: string;
};

export function pidFilePath(dataDir: string): string {
  return join(dataDir, "start.pid");
}

export function writePids(dataDir: string, pids: StackPids): void {
  const file = pidFilePath(dataDir);
  writeAside(file, JSON.stringify(pids) + "\n");
}

export function removePids(dataDir: string): void {
  rmSync(pidFilePath(dataDir), { force: true });
}

function readPids(dataDir: string): StackPids | null {
  const file = pidFilePath(dataDir);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as StackPids;
  } catch {
    return null; // half-written by a killed start: nothing to trust in it
  }
}

function readProc(pid: number, what: "cmdline" | "environ"): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/${what}`, "utf8").split("\0");
  } catch {
    return null; // gone (or not ours to read)
  }
}

/** Whether a process exists (EPERM: it does, owned by someone else). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The start script itself: node running scripts/start.ts. */
function isStartScript(pid: number): boolean {
  return readProc(pid, "cmdline")?.some((a) => a.endsWith("scripts/start.ts")) ?? false;
}

/** Our devnet: anvil with this data directory's chain file. */
function isOurAnvil(pid: number, dataDir: string): boolean {
  const args = readProc(pid, "cmdline");
  if (!args) return false;
  return /anvil$/.test(args[0] ?? "") && args.includes(join(dataDir, "devnet", "chain.json"));
}

/** Our indexer: ponder started by the start script whose pid it was given. */
function isOurIndexer(pid: number, startPid: number): boolean {
  const args = readProc(pid, "cmdline");
  if (!args?.some((a) => a.endsWith("ponder.js"))) return false;
  return readProc(pid, "environ")?.includes(`PIT_PARENT_PID=${startPid}`) ?? false;
}

async function stopProcess(pid: number, graceMs: number): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited between the check and the kill
    }
    while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
  }
}

export type Leftovers = {
  /** The previous start's indexer is known dead now: its lock on `schema` can be released. */
  deadIndexerSchema: string | null;
};

/**
 * Stops what a previous start on `dataDir` left running. Throws when that start is itself still
 * running: two starts on one data directory would share the chain file and the indexer's store.
 */
export async function cleanLeftovers(
  dataDir: string,
  log: (event: Record<string, unknown>) => void,
): Promise<Leftovers> {
  const prev = readPids(dataDir);
  if (!prev) return { deadIndexerSchema: null };
  if (prev.start !== process.pid && alive(prev.start) && isStartScript(prev.start)) {
    throw new Error(`another npm start (pid ${prev.start}) is running on ${dataDir}; stop it first`);
  }
  // Indexer first (it may still be writing), then the chain (SIGTERM: it writes its state).
  if (prev.indexer && alive(prev.indexer) && isOurIndexer(prev.indexer, prev.start)) {
    log({ msg: "stopping the indexer a killed start left running", pid: prev.indexer });
    await stopProcess(prev.indexer, 5_000);
  }
  if (prev.anvil && alive(prev.anvil) && isOurAnvil(prev.anvil, dataDir)) {
    log({ msg: "stopping the devnet a killed start left running", pid: prev.anvil });
    await stopProcess(prev.anvil, 10_000);
  }
  const indexerDead = !prev.indexer || !alive(prev.indexer) || !isOurIndexer(prev.indexer, prev.start);
  return { deadIndexerSchema: indexerDead && prev.schema ? prev.schema : null };
}
