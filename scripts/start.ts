/**
 * `npm start`: the devnet (unless CHAIN_RPC_URL is set), the Ponder indexer with the API inside it
 * (embedded PGlite unless DATABASE_URL is set). `npm run stack` (API_PROCESSES=N on PostgreSQL): the
 * indexer alone and N API processes behind PORT (scripts/apiProcesses.ts), the production layout.
 * The API answers on PORT; Ponder's own routes (/status, /ready, /metrics) on 127.0.0.1:OPS_PORT; the
 * API's own /metrics on 127.0.0.1:METRICS_PORT (Ponder's page cannot carry them: lib/metrics.ts), each
 * signing process's on a loopback port of its own (named in the start's lines). Ctrl-C or SIGTERM
 * stops every child; the devnet's state is written on the way out so the next start continues the same chain.
 *
 * Built to come back at the first attempt after kill -9 at any moment:
 * - anvil writes its state every second, and a state file cut by the kill is repaired from its
 *   last complete copy (devnet/chainState.ts);
 * - an indexer that saw blocks the restored chain lost is reconciled before Ponder starts
 *   (scripts/indexerCheckpoint.ts): missing unfinalized blocks are mined, lost finalized ones
 *   mean a re-index; on a real chain the start refuses, naming the blocks;
 * - children die with this script (kernel parent-death signal, the indexer's parent watch) and
 *   whatever a killed start left behind is found through DATA_DIR/start.pid and stopped;
 * - the indexer is supervised: restarted when it exits or stalls (scripts/supervisor.ts).
 */
import "../lib/noTelemetry.js";
import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { get as httpGet } from "node:http";
import { join } from "node:path";
import { spawnDyingWithParent, startAnvil, type Anvil } from "../devnet/anvil.js";
import { keepGoodState, repairState } from "../devnet/chainState.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { ConfigError, loadConfig, type Config } from "../lib/config.js";
import { ROOT } from "../lib/root.js";
import { startShieldStandIn } from "../devnet/shieldStandIn.js";
import { startDevnetGateway } from "../devnet/gatewayStandIn.js";
import { dropIndexerBuild, judge, openIndexerDb, readCheckpoint, releaseDeadLock } from "./indexerCheckpoint.js";
import { indexerSchema } from "./indexerSchema.js";
import { buildApiBundle, buildIndexerBundle } from "./apiBundle.js";
import { cleanLeftovers, removePids, writePids, type StackPids } from "./pidFile.js";
import { IndexerSupervisor } from "./supervisor.js";
import { startSigners } from "./signers.js";
import { startApiProcesses, type ApiProcesses } from "./apiProcesses.js";
import { keepMigratedDump } from "../api/ports/store/memory.js";

/** Human lines for the terminal. */
const say = (msg: string) => console.log(`[start] ${msg}`);
/** Structured events (restarts, repairs, re-index) for whoever reads the logs. */
const event = (level: "info" | "warn" | "error", fields: Record<string, unknown>) =>
  console.error(
    JSON.stringify({ level: { info: 30, warn: 40, error: 50 }[level], time: Date.now(), service: "start", ...fields }),
  );

/** Anvil's state is written this often (s): kill -9 loses at most about this much chain. */
const STATE_INTERVAL_S = 1;
/** How often the last complete copy of the state file is refreshed. */
const GOOD_STATE_EVERY_MS = 5_000;

/** GET with an explicit Host header (the API's host guard refuses other hosts with 421). */
function statusOf(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers: { host }, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

/** Waits until the API answers health 200 on its own port (served by src/api/index.ts). */
async function waitHealthy(config: Config, gaveUp: () => string | null, timeoutMs = 180_000): Promise<void> {
  const url = `http://127.0.0.1:${config.port}/api/v1/health`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const reason = gaveUp();
    if (reason) throw new Error(reason);
    if ((await statusOf(url, `localhost:${config.port}`).catch(() => 0)) === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no healthy answer on port ${config.port} within ${timeoutMs / 1000} s`);
}

async function rpc<T>(url: string, method: string, params: unknown[] = [], timeoutMs = 2_000): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Set once children may be running: a failed start stops them the orderly way. */
let stopStack: ((code: number) => Promise<void>) | null = null;

const chainHead = (url: string) => rpc<string>(url, "eth_blockNumber").then(Number);

/** Starts the devnet on the data directory's chain file, repaired first if a kill cut it. */
async function startDevnet(config: Config): Promise<{ anvil: Anvil; stateFile: string }> {
  const chainDir = join(config.dataDir, "devnet");
  mkdirSync(chainDir, { recursive: true });
  const stateFile = join(chainDir, "chain.json");
  const repaired = repairState(stateFile, SNAPSHOT_FILE);
  if (repaired) event("warn", { msg: repaired });
  const anvil = await startAnvil({
    port: config.anvilPort,
    state: stateFile,
    blockTime: 1,
    stateInterval: STATE_INTERVAL_S,
    dieWithParent: true,
  });
  await requireSnapshotContracts(config, anvil, stateFile);
  return { anvil, stateFile };
}

/**
 * A chain file continued from an older snapshot may lack the contracts universe.json names now (they
 * moved, e.g. to chain 4663's addresses): refuse with the way out rather than serve a chain whose
 * contracts are elsewhere. The chain is the developer's: never wiped here.
 */
async function requireSnapshotContracts(config: Config, anvil: Anvil, stateFile: string): Promise<void> {
  const { poolManager, universalRouter } = config.contracts;
  for (const at of [poolManager, universalRouter]) {
    if ((await rpc<string>(anvil.rpcUrl, "eth_getCode", [at, "latest"])) !== "0x") continue;
    await anvil.stop();
    throw new Error(
      `the devnet chain in ${stateFile} was built from an older snapshot: it has no contract at ${at}, where ` +
        "devnet/universe.json places one. `npm run devnet:reset` starts the devnet over from the current snapshot " +
        "(it wipes this data directory's chain and stores).",
    );
  }
}

/**
 * Makes the indexer's saved progress fit the chain before Ponder starts (see
 * indexerCheckpoint.ts), and releases the lock of our previous indexer when it is known dead.
 */
async function reconcileIndexer(config: Config, schema: string, deadIndexerSchema: string | null): Promise<void> {
  const db = await openIndexerDb(config);
  if (!db) return;
  let verdict: Awaited<ReturnType<typeof judge>>;
  try {
    if (deadIndexerSchema === schema && (await releaseDeadLock(db, schema)))
      event("info", { msg: "released the lock of the previous indexer (it is dead)", schema });
    const cp = await readCheckpoint(db, schema, config.chainId);
    if (!cp) return;
    const head = await chainHead(config.rpcUrl);
    const timestampAt = async (n: number) => {
      const block = await rpc<{ timestamp: string } | null>(config.rpcUrl, "eth_getBlockByNumber", [
        `0x${n.toString(16)}`,
        false,
      ]);
      return block ? Number(block.timestamp) : null;
    };
    verdict = await judge(cp, { head, timestampAt }, config.devnet);
  } finally {
    await db.close();
  }
  switch (verdict.action) {
    case "none":
      return;
    case "mine":
      event("warn", {
        msg: "the devnet came back behind the indexer; mining the missing blocks (Ponder treats them as a reorg)",
        reason: verdict.reason,
        blocks: verdict.blocks,
      });
      await rpc(config.rpcUrl, "anvil_mine", [`0x${verdict.blocks.toString(16)}`]);
      return;
    case "reindex":
      event("warn", {
        msg:
          `re-indexing from scratch: ${verdict.reason}; dropping the indexer's build ${schema} (the app store is ` +
          `kept)`,
      });
      await dropIndexerBuild(config, schema);
      return;
    case "refuse":
      throw new Error(
        `the indexer's saved progress does not fit the chain: ${verdict.reason}. Point CHAIN_RPC_URL at a node that ` +
          `has these blocks, or drop schema ${schema} to re-index`,
      );
  }
}

function ponderArgs(config: Config, ponderBin: string): string[] {
  // Ponder's own routes (/metrics, /status, /ready) on 127.0.0.1:OPS_PORT only; the API has its own
  // server on PORT. Ponder prefers env PORT over --port, so its env says the ops port and the public
  // port travels as PIT_API_PORT (scripts/parentWatch.ts puts it back before the API reads config).
  const args = [
    ponderBin,
    "start",
    "--port",
    String(config.opsPort),
    "--hostname",
    "127.0.0.1",
    "--log-format",
    "json",
    "--log-level",
    process.env.PONDER_LOG_LEVEL ?? "warn",
  ];
  // On PostgreSQL the tables are also published as views, for separate API processes (npm run api).
  if (config.databaseUrl) args.push("--views-schema", config.indexerSchema ?? "pit");
  return args;
}

type Signers = Awaited<ReturnType<typeof startSigners>>;

function spawnPonder(
  bundles: { api: string; indexer: string },
  config: Config,
  schema: string,
  anvil: Anvil | null,
  shieldUrl: string | null,
  signers: Signers | null,
  aiEnv: Record<string, string>,
): ChildProcess {
  return spawnDyingWithParent(process.execPath, ponderArgs(config, bundles.indexer), {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    // Own process group: a terminal's Ctrl-C reaches only this script, which then stops the
    // indexer once and waits for it (a second signal would make Ponder skip releasing its lock).
    detached: true,
    env: {
      ...apiEnv(signers, shieldUrl, aiEnv),
      ANVIL_PORT: String(config.anvilPort),
      PORT: String(config.opsPort),
      OPS_PORT: String(config.opsPort),
      METRICS_PORT: String(config.metricsPort),
      PIT_API_PORT: String(config.port),
      PIT_PARENT_PID: String(process.pid),
      ...(anvil?.process.pid ? { PIT_ANVIL_PID: String(anvil.process.pid) } : {}),
      DATABASE_SCHEMA: schema,
      PIT_API_BUNDLE: bundles.api,
      // npm run stack: the indexer alone; the API runs as processes of its own behind PORT.
      ...(config.apiProcesses > 0 ? { PIT_INDEXER_ONLY: "1" } : {}),
    },
  });
}

/** An API process's environment besides its ports: ours less the signers' keys; their URLs, secrets; stand-ins. */
function apiEnv(signers: Signers | null, shieldUrl: string | null, aiEnv: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !signers?.withheld.includes(k)));
  return { ...inherited, ...signers?.apiEnv, ...(shieldUrl ? { SHIELD_URL: shieldUrl } : {}), ...aiEnv };
}

/**
 * The migrated store dump the PGlite stores of this start open from when their directory is new (the app's without
 * DATABASE_URL, the devnet's signing services'): one initdb for all three, once per migration set, kept with the
 * install's other caches unless PGLITE_TEMPLATE_DIR names a place. Made beside the devnet's start; a dump that cannot
 * be made or kept leaves each store to its own initdb, as before.
 */
async function keepStoreDump(config: Config): Promise<void> {
  if (config.databaseUrl && !config.devnet) return;
  process.env.PGLITE_TEMPLATE_DIR ??= join(ROOT, "node_modules", ".cache", "pit-store");
  await keepMigratedDump().catch((err) => event("warn", { msg: "no store dump kept", error: String(err) }));
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

async function main() {
  // Config is checked before anything starts, so a bad variable fails at once with its name.
  // The universe file may not exist yet on a first devnet start: build it, then load config.
  if (!process.env.CHAIN_RPC_URL) await ensureSnapshot(say);
  const config = loadConfigOrExit();
  mkdirSync(config.dataDir, { recursive: true });
  const storeDump = keepStoreDump(config);
  // Built beside the devnet's start (esbuild is a process of its own), once per install.
  const indexerBundle = buildIndexerBundle((msg) => event("warn", { msg }));

  // A start killed with -9 may have left its chain or indexer running: stop them first.
  const leftovers = await cleanLeftovers(config.dataDir, (e) => event("warn", e));
  const pids: StackPids = { start: process.pid };
  writePids(config.dataDir, pids);

  let anvil: Anvil | null = null;
  let supervisor: IndexerSupervisor | null = null;
  let signers: Signers | null = null;
  let apis: ApiProcesses | null = null;
  let goodStateTimer: NodeJS.Timeout | null = null;
  let gaveUp: string | null = null;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping...");
    if (goodStateTimer) clearInterval(goodStateTimer);
    await apis?.stop();
    await supervisor?.stop();
    await signers?.stop();
    await anvil?.stop();
    removePids(config.dataDir);
    say("stopped");
    process.exit(code);
  };
  stopStack = stop;
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  if (config.devnet) {
    const devnet = await startDevnet(config);
    anvil = devnet.anvil;
    pids.anvil = anvil.process.pid;
    writePids(config.dataDir, pids);
    anvil.process.once("exit", (code) => {
      if (!stopping) {
        event("error", { msg: "anvil exited unexpectedly", code });
        void stop(1);
      }
    });
    let goodMtime = 0;
    goodStateTimer = setInterval(() => (goodMtime = keepGoodState(devnet.stateFile, goodMtime)), GOOD_STATE_EVERY_MS);
    say(`devnet: chain 4663 on ${anvil.rpcUrl} (state ${devnet.stateFile}, written every ${STATE_INTERVAL_S} s)`);
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

  // Nor an AI-model gateway, unless AI_GATEWAY_URL names one: a local stand-in answers in its place,
  // so the AI brain runs too (GET /hosted/ai marks its models as stand-ins).
  const gateway = await startDevnetGateway(config);
  if (gateway)
    say(`devnet: AI gateway stand-in on ${gateway.url} (models ${gateway.models.join(", ")}, no model behind)`);

  await storeDump;
  // The devnet's co-signer and executor signing service: two child processes the API reaches over
  // HTTP (off the devnet the operator runs them, and the API is given COSIGNER_URL and EXECUTORS_URL).
  if (config.devnet && !config.cosignerUrl && !config.executorsUrl) {
    signers = await startSigners(config, {
      log: (e) => event("warn", e),
      onGiveUp: (reason) => (event("error", { msg: "giving up on a signing service", reason }), void stop(1)),
    });
  }

  const schema = indexerSchema(config);
  const bundles = { api: await buildApiBundle(), indexer: await indexerBundle };
  await reconcileIndexer(config, schema, leftovers.deadIndexerSchema);
  pids.schema = schema;

  supervisor = new IndexerSupervisor({
    spawnIndexer: () => {
      const child = spawnPonder(bundles, config, schema, anvil, shieldUrl, signers, gateway?.apiEnv ?? {});
      pids.indexer = child.pid;
      writePids(config.dataDir, pids);
      return child;
    },
    opsUrl: `http://127.0.0.1:${config.opsPort}`,
    chainHead: () => chainHead(config.rpcUrl).catch(() => null),
    // The indexer is dead here (exited or killed): its lock would only make the next one wait.
    beforeRestart: async (restarts, reason) => {
      // Embedded PGlite killed mid-write can keep rows past its checkpoint, and then fails the
      // same way at every start: the second restart in a minute re-indexes from scratch (the
      // indexed tables come back from the chain; the app store is another directory, kept).
      if (!config.databaseUrl && restarts >= 2 && /exited unexpectedly \(code [1-9]/.test(reason)) {
        event("warn", {
          msg: "the embedded indexer failed again after a restart; re-indexing from scratch (the app store is kept)",
          restarts,
        });
        await dropIndexerBuild(config, schema);
        return;
      }
      const db = await openIndexerDb(config);
      if (!db) return;
      try {
        await releaseDeadLock(db, schema);
      } finally {
        await db.close();
      }
    },
    log: (e) => event("warn", e),
    onGiveUp: (reason) => {
      gaveUp = reason;
      event("error", { msg: "giving up on the indexer", reason });
      void stop(1);
    },
  });
  supervisor.start();
  if (config.apiProcesses > 0)
    apis = await startApiProcesses(config, apiEnv(signers, shieldUrl, gateway?.apiEnv ?? {}), {
      log: (e) => event("warn", e),
      onGiveUp: (reason) => (event("error", { msg: "giving up on an API process", reason }), void stop(1)),
    });

  const base = `http://localhost:${config.port}`;
  await Promise.all([waitHealthy(config, () => gaveUp), signers?.ready]);
  if (signers)
    say(
      `devnet: co-signer on ${signers.apiEnv.COSIGNER_URL}, executor signing service on ` +
        `${signers.apiEnv.EXECUTORS_URL} (each its own process, secret and store; metrics on ` +
        `${signers.metrics.cosigner} and ${signers.metrics.executors})`,
    );
  say(`ready: ${base}/api/v1 (indexer schema ${schema}, ${config.databaseUrl ? "PostgreSQL" : "embedded PGlite"})`);
  if (apis)
    say(
      `${apis.processes.length} API processes behind port ${config.port} (the indexer runs alone): ` +
        apis.processes.map((p) => `127.0.0.1:${p.port} (metrics ${p.metricsPort})`).join(", "),
    );
  say(
    `ops (127.0.0.1 only): the indexer's /metrics, /status, /ready on port ${config.opsPort}` +
      (apis ? "" : `; the API's /metrics on http://127.0.0.1:${config.metricsPort}/metrics`),
  );
}

main().catch(async (err) => {
  console.error(`[start] ${(err as Error).message}`);
  if (stopStack) await stopStack(1);
  process.exit(1);
});
