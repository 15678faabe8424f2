/**
 * `npm start`: the devnet (unless CHAIN_RPC_URL is set), the Ponder indexer with the API mounted
 * in it (embedded PGlite unless DATABASE_URL is set), on PORT. Ctrl-C or SIGTERM stops every
 * child; the devnet's state is written on the way out so the next start continues the same chain.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAnvil, type Anvil } from "../devnet/anvil.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { ConfigError, loadConfig, type Config } from "../lib/config.js";
import { ROOT } from "../lib/root.js";
import { indexerSchema } from "./indexerSchema.js";
import { startShieldStandIn } from "../devnet/shieldStandIn.js";

const say = (msg: string) => console.log(`[start] ${msg}`);

async function waitHealthy(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the indexer exited with code ${child.exitCode} before answering`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no healthy answer from ${url} within ${timeoutMs / 1000} s`);
}

async function main() {
  // Config is checked before anything starts, so a bad variable fails at once with its name.
  // The universe file may not exist yet on a first devnet start: build it, then load config.
  if (!process.env.CHAIN_RPC_URL) await ensureSnapshot(say);
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }

  let anvil: Anvil | null = null;
  let ponder: ChildProcess | null = null;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping...");
    if (ponder && ponder.exitCode === null && ponder.signalCode === null) {
      const exited = new Promise((r) => ponder!.once("exit", r));
      ponder.kill("SIGTERM");
      const t = setTimeout(() => ponder?.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
    await anvil?.stop();
    say("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  if (config.devnet) {
    const chainDir = join(config.dataDir, "devnet");
    mkdirSync(chainDir, { recursive: true });
    const stateFile = join(chainDir, "chain.json");
    if (!existsSync(stateFile)) copyFileSync(SNAPSHOT_FILE, stateFile);
    anvil = await startAnvil({ port: config.anvilPort, state: stateFile, blockTime: 1 });
    anvil.process.once("exit", (code) => {
      if (!stopping) {
        console.error(`[start] anvil exited unexpectedly (code ${code})`);
        void stop(1);
      }
    });
    say(`devnet: chain 4663 on ${anvil.rpcUrl} (state ${stateFile})`);
  } else {
    say(`chain: ${config.rpcUrl}`);
  }

  // The devnet has no real Shield provider: a local stand-in speaks its protocol.
  let shieldUrl = config.shieldUrl;
  if (config.devnet && !shieldUrl) {
    const standIn = await startShieldStandIn();
    shieldUrl = standIn.url;
    say(`devnet: Shield stand-in on ${shieldUrl}`);
  }
  const schema = indexerSchema(config);
  const ponderBin = join(ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");
  const args = [ponderBin, "start", "--port", String(config.port), "--log-format", "json", "--log-level", process.env.PONDER_LOG_LEVEL ?? "warn"];
  // On PostgreSQL the tables are also published as views, for separate API processes (npm run api).
  if (config.databaseUrl) args.push("--views-schema", config.indexerSchema ?? "pit");
  ponder = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    // Own process group: a terminal's Ctrl-C reaches only this script, which then stops the
    // indexer once and waits for it (a second signal would make Ponder skip releasing its lock).
    detached: true,
    env: { ...process.env, ANVIL_PORT: String(config.anvilPort), PORT: String(config.port), DATABASE_SCHEMA: schema, ...(shieldUrl ? { SHIELD_URL: shieldUrl } : {}) },
  });
  ponder.once("exit", (code) => {
    if (!stopping) {
      console.error(`[start] the indexer exited unexpectedly (code ${code})`);
      void stop(1);
    }
  });
  const base = `http://localhost:${config.port}`;
  await waitHealthy(`${base}/api/v1/health`, ponder);
  say(`ready: ${base}/api/v1 (indexer schema ${schema}, ${config.databaseUrl ? "PostgreSQL" : "embedded PGlite"})`);
}

main().catch((err) => {
  console.error(`[start] ${(err as Error).message}`);
  process.exit(1);
});
