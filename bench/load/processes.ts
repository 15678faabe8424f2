/**
 * The stack's processes as the load test sees them: each one's role (from its command line), its
 * resident memory sampled over the run, and the two faults of the run: one API process killed with
 * SIGKILL, later the indexer, each at a random moment of its window, with when it was back.
 */
import { readdirSync, readFileSync } from "node:fs";
import { apiProcesses, pidOnPort, pidsOf, type StackEnv } from "../../test/helpers/npmStart.js";
import { readIndexerStatus } from "../../scripts/supervisor.js";

export type MemorySample = { t: number; role: string; pid: number; rssMb: number };
export type Fault = { what: "api" | "indexer"; pid: number; killedAt: number; backAt: number | null };

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
};

/** Every live descendant of `root` (root included), from /proc's parent links. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    const stat = read(`/proc/${d}/stat`);
    const m = stat && /\) \S (\d+)/.exec(stat);
    if (m) parent.set(Number(d), Number(m[1]));
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, pp] of parent) if (pp === out[i]) out.push(pid);
  return out.filter((p) => read(`/proc/${p}/status`) !== null);
}

/** A process's role in the stack, from its command line (API processes by their port). */
function roleOf(pid: number, apiPorts: Map<number, number>, rootPid: number): string | null {
  const cmd = (read(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ");
  if (pid === rootPid) return "start (balancer, stand-ins)";
  if (/anvil/.test(cmd)) return "anvil";
  if (/ponder/.test(cmd)) return "indexer";
  if (/cosigner/.test(cmd)) return "co-signer";
  if (/executors/.test(cmd)) return "executors";
  for (const [port, owner] of apiPorts) if (owner === pid) return `api :${port}`;
  if (/node/.test(cmd) && /api/.test(cmd)) return "api";
  return null;
}

/** Samples the RSS of every process of the stack every `everyMs` until `stopped()`. */
export async function sampleMemory(
  rootPid: number,
  apiPortsOf: () => number[],
  t0: number,
  everyMs: number,
  stopped: () => boolean,
  out: MemorySample[],
): Promise<void> {
  while (!stopped()) {
    const owners = new Map<number, number>();
    for (const port of apiPortsOf()) owners.set(port, (await pidOnPort(port)) ?? -1);
    for (const pid of descendants(rootPid)) {
      const role = roleOf(pid, owners, rootPid);
      const kb = /VmRSS:\s+(\d+)/.exec(read(`/proc/${pid}/status`) ?? "")?.[1];
      if (role && kb) out.push({ t: Date.now() - t0, role, pid, rssMb: Number(kb) / 1024 });
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `check` holds (polling every 250 ms) or `ms` pass: when it held, or null. */
async function whenTrue(check: () => Promise<boolean>, ms: number): Promise<number | null> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return Date.now();
    await sleep(250);
  }
  return null;
}

/** SIGKILL of one API process at `atMs` after t0; back when another process listens on its port. */
export async function killApiProcess(out: string, t0: number, atMs: number): Promise<Fault | null> {
  await sleep(Math.max(0, t0 + atMs - Date.now()));
  const apis = apiProcesses(out);
  const victim = apis[Math.floor(Math.random() * apis.length)];
  const pid = victim ? await pidOnPort(victim.port) : null;
  if (!victim || !pid) return null;
  process.kill(pid, "SIGKILL");
  const killedAt = Date.now() - t0;
  const back = await whenTrue(async () => {
    const now = await pidOnPort(victim.port);
    return now !== null && now !== pid;
  }, 120_000);
  return { what: "api", pid, killedAt, backAt: back === null ? null : back - t0 };
}

/** SIGKILL of the indexer at `atMs`; back when the supervisor's new indexer answers /ready. */
export async function killIndexer(env: StackEnv, t0: number, atMs: number): Promise<Fault | null> {
  await sleep(Math.max(0, t0 + atMs - Date.now()));
  const pid = pidsOf(env)?.indexer;
  if (!pid) return null;
  process.kill(pid, "SIGKILL");
  const killedAt = Date.now() - t0;
  const ops = `http://127.0.0.1:${env.OPS_PORT}`;
  const back = await whenTrue(async () => {
    const now = pidsOf(env)?.indexer;
    return now !== undefined && now !== pid && (await readIndexerStatus(ops)).ready;
  }, 300_000);
  return { what: "indexer", pid, killedAt, backAt: back === null ? null : back - t0 };
}
