import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { foundryBin } from "./foundry.js";
import { freePort } from "./ports.js";

export { freePort };

export const CHAIN_ID = 4663;

export type AnvilOptions = {
  port?: number;
  /** Load this state file at start (a pristine snapshot). */
  loadState?: string;
  /** Load and keep writing this state file (the user's persistent devnet). */
  state?: string;
  /** Write state here at exit. */
  dumpState?: string;
  /** Seconds between blocks; omitted = automine (one block per transaction). */
  blockTime?: number;
  forkUrl?: string;
  /** Print anvil's own output (port clashes only show there). */
  inheritStdio?: boolean;
  /** Seconds between state writes to `state` (anvil's default is 60). */
  stateInterval?: number;
  /** SIGTERM anvil when the process that started it dies, even by kill -9 (Linux). */
  dieWithParent?: boolean;
};

const SETPRIV = "/usr/bin/setpriv";

/**
 * Spawns `cmd` so the kernel sends it SIGTERM when this process dies, however it dies
 * (PR_SET_PDEATHSIG through util-linux's setpriv, which then execs `cmd`: same pid). Where setpriv
 * is missing the child is spawned plainly and other means apply (the indexer's parent watch, the
 * pid file the next start checks).
 */
export function spawnDyingWithParent(
  cmd: string,
  args: string[],
  opts: SpawnOptions,
  signal: "SIGTERM" | "SIGKILL" = "SIGTERM",
): ChildProcess {
  const child =
    process.platform === "linux" && existsSync(SETPRIV)
      ? spawn(SETPRIV, ["--pdeathsig", signal, "--", cmd, ...args], opts)
      : spawn(cmd, args, opts);
  liveChildren.add(child);
  child.once("exit", () => liveChildren.delete(child));
  return child;
}

/**
 * The children spawnDyingWithParent started that are still running. A test process outlives its files (one module
 * graph per fork), so a file that failed before stopping its chain or indexer would leave them loading the files
 * after it: test/setup/leftovers.ts stops what a file left.
 */
export const liveChildren = new Set<ChildProcess>();

export type Anvil = {
  rpcUrl: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
};

async function rpcReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    const body = (await res.json()) as { result?: string };
    return Number(body.result) === CHAIN_ID;
  } catch {
    return false;
  }
}

/** Starts anvil for chain 4663 and resolves once it answers eth_chainId. */
export async function startAnvil(opts: AnvilOptions = {}): Promise<Anvil> {
  const port = opts.port ?? (await freePort());
  const args = ["--chain-id", String(CHAIN_ID), "--port", String(port), "--host", "127.0.0.1", "--hardfork", "prague"];
  if (opts.state) args.push("--state", opts.state);
  else if (opts.loadState) args.push("--load-state", opts.loadState);
  if (opts.dumpState) args.push("--dump-state", opts.dumpState);
  if (opts.blockTime) args.push("--block-time", String(opts.blockTime));
  if (opts.stateInterval) args.push("--state-interval", String(opts.stateInterval));
  if (opts.forkUrl) args.push("--fork-url", opts.forkUrl);
  const spawnOpts: SpawnOptions = {
    stdio: opts.inheritStdio ? "inherit" : ["ignore", "ignore", "pipe"],
    // Own process group: Ctrl-C must not stop the chain before the indexer has shut down.
    detached: true,
  };
  const child = opts.dieWithParent
    ? spawnDyingWithParent(foundryBin("anvil"), args, spawnOpts)
    : spawn(foundryBin("anvil"), args, spawnOpts);
  // Never outlive the process that started it.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited with code ${child.exitCode}: ${stderr.trim()}`);
    if (await rpcReady(rpcUrl)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`anvil did not answer on ${rpcUrl} within 30 s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    rpcUrl,
    port,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGTERM lets anvil write --state / --dump-state before it exits.
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
