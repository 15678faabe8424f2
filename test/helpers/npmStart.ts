/**
 * `npm start` as an operator runs it, for fault tests and the restart bench: the real script in its
 * own process group, private ports and DATA_DIR (and a database of its own on PostgreSQL), the
 * pids it records in DATA_DIR/start.pid, and an agent that signs in and trades over HTTP.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestClient, createWalletClient, http, parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freePort } from "../../devnet/anvil.js";
import { goodStatePath } from "../../devnet/chainState.js";
import { ACCOUNT_ROLES, devnetChain } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { UNIVERSE_FILE } from "../../devnet/snapshot.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { ROOT } from "../../lib/root.js";
import { readUniverse } from "../../lib/universe.js";
import type { StackPids } from "../../scripts/pidFile.js";
import { readIndexerBlock } from "../../scripts/supervisor.js";
import { createDatabase, dropDatabase } from "./databases.js";
import { putAhead } from "./priority.js";
import { publicClient } from "../../lib/chain.js";

export type Backend = "pglite" | "postgres";

export type StackEnv = {
  PORT: string;
  ANVIL_PORT: string;
  OPS_PORT: string;
  METRICS_PORT: string;
  DATA_DIR: string;
  DATABASE_URL?: string;
  /** npm run stack: this many API processes behind PORT, the indexer alone. */
  API_PROCESSES?: string;
};

/** Private ports, data directory and (PostgreSQL) database; `cleanup` removes them. */
export async function stackEnv(backend: Backend): Promise<{ env: StackEnv; cleanup: () => Promise<void> }> {
  const env: StackEnv = {
    PORT: String(await freePort()),
    ANVIL_PORT: String(await freePort()),
    OPS_PORT: String(await freePort()),
    // Drawn like the others: the default (PORT + 2) may be a port this block hands out next.
    METRICS_PORT: String(await freePort()),
    DATA_DIR: mkdtempSync(join(tmpdir(), "pit-fault-")),
  };
  const dbName = `pit_start_${Math.random().toString(36).slice(2, 10)}`;
  if (backend === "postgres") env.DATABASE_URL = await createDatabase(dbName);
  return {
    env,
    cleanup: async () => {
      if (backend === "postgres") await dropDatabase(dbName);
      rmSync(env.DATA_DIR, { recursive: true, force: true });
    },
  };
}

export type NpmStart = { child: ChildProcess; out: () => string; exited: Promise<number | null>; startedAt: number };

/** Runs scripts/start.ts (what `npm start` runs) in its own process group. */
export function npmStart(env: StackEnv): NpmStart {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d.toString()));
  child.stderr!.on("data", (d) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, out: () => out, exited, startedAt: Date.now() };
}

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  run?: NpmStart,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${run?.out().slice(-6000) ?? ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves when the start prints its ready line; throws if it exits first (not the first attempt). */
export async function untilReady(run: NpmStart, timeoutMs = 150_000): Promise<number> {
  let exitCode: number | null | undefined;
  void run.exited.then((c) => (exitCode = c));
  await until(
    "the ready line",
    async () => {
      if (exitCode !== undefined)
        throw new Error(`npm start exited with code ${exitCode} before it was ready\n${run.out().slice(-6000)}`);
      return run.out().includes("[start] ready") ? true : undefined;
    },
    timeoutMs,
    run,
  ).catch((err) => {
    if (exitCode !== undefined)
      throw new Error(`npm start exited with code ${exitCode} before it was ready\n${run.out().slice(-6000)}`);
    throw err;
  });
  return Date.now() - run.startedAt;
}

export function pidsOf(env: StackEnv): StackPids | null {
  const file = join(env.DATA_DIR, "start.pid");
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8")) as StackPids;
}

/**
 * Puts the stack's processes ahead of the test workers beside it (test/helpers/priority.ts; a restarted indexer
 * inherits it from start.ts), so that a bound on the stack's own recovery measures the stack, not the files sharing
 * the machine's two cores. False where this process may not (not root).
 */
export function ahead(env: StackEnv): boolean {
  const p = pidsOf(env);
  const pids = [p?.start, p?.anvil, p?.indexer].filter((pid): pid is number => !!pid);
  return pids.length > 0 && putAhead(pids) !== null;
}

export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    // A zombie (killed, not yet reaped by its dead parent) is as good as gone.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** kill -9 of the whole stack at once: the start script's group, the chain and the indexer. */
export function killStack9(run: NpmStart, env: StackEnv): StackPids {
  const pids = pidsOf(env)!;
  for (const target of [-run.child.pid!, pids.anvil, pids.indexer]) {
    if (!target) continue;
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return pids;
}

export type Reply = { status: number; json: any };

/**
 * One API call on PORT with Host localhost:PORT. A kept-alive connection the server closed while idle
 * can be reset by the request sent on it (RFC 9112 9.3.1: the client may retry then, the server never
 * read it): that one request is sent again on a new connection. Any other failure names the call.
 */
export async function call(
  env: StackEnv,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const send = (port: string, fresh: boolean) =>
    new Promise<Reply>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method,
          ...(fresh ? { agent: false } : {}),
          path,
          timeout: 15_000,
          headers: {
            host: `localhost:${env.PORT}`,
            ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
            ...headers,
          },
        },
        (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => {
            let json: any;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (!fresh && req.reusedSocket && err.code === "ECONNRESET") return void send(port, true).then(resolve, reject);
        reject(new Error(`${method} ${path} on port ${port}: ${err.message}`, { cause: err }));
      });
      req.end(payload);
    });
  return send(env.PORT, false);
}

/** The chain under the stack, and an agent trading through the stack's API. */
export function clientsFor(env: StackEnv) {
  const rpcUrl = `http://127.0.0.1:${env.ANVIL_PORT}`;
  const chain = devnetChain(rpcUrl);
  const transport = http(rpcUrl, { timeout: 5_000, retryCount: 0 });
  const pub = publicClient({ chain, transport, pollingInterval: 100, cacheTime: 0 });
  const test = createTestClient({ chain, transport, mode: "anvil" });
  const universe = readUniverse(UNIVERSE_FILE);
  const deployer = devnetAccount(ACCOUNT_ROLES.deployer);

  /** Fresh oracle answers, so marks are never stale however old the snapshot is. */
  async function freshenFeeds() {
    const feeds = [...new Set(Object.values(universe.tokens).flatMap((t) => (t.feed ? [t.feed] : [])))];
    const wallet = createWalletClient({ chain, transport, account: deployer });
    for (const feed of feeds) {
      const [, answer] = await pub.readContract({ address: feed, abi: priceFeedAbi, functionName: "latestRoundData" });
      await pub.waitForTransactionReceipt({
        hash: await wallet.writeContract({
          address: feed,
          abi: priceFeedAbi,
          functionName: "setAnswer",
          args: [answer],
        }),
      });
    }
  }

  /**
   * Resolves once anvil's state file and its kept complete copy both hold `address`: a kill -9
   * after that can lose what came later (the trade under test) but not the setup before it.
   */
  async function persisted(address: Hex) {
    const state = join(env.DATA_DIR, "devnet", "chain.json");
    const holds = (file: string) =>
      existsSync(file) && readFileSync(file, "utf8").toLowerCase().includes(address.slice(2).toLowerCase());
    await until(
      "the funded wallet in the chain's state files",
      async () => (holds(state) && holds(goodStatePath(state)) ? true : undefined),
      20_000,
    );
  }

  /** Signs in a fresh funded wallet (its funding persisted), prepares ETH -> USDG, signs it and relays it. */
  async function relayTrade(): Promise<{ key: string; txHash: Hex }> {
    const a = privateKeyToAccount(generatePrivateKey());
    await test.setBalance({ address: a.address, value: parseEther("5") });
    await persisted(a.address);
    const ch = await call(env, "POST", "/api/v1/auth/challenge", { address: a.address });
    if (ch.status !== 200) throw new Error(`challenge: ${ch.status} ${JSON.stringify(ch.json)}`);
    const verified = await call(env, "POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: await a.signMessage({ message: ch.json.message }),
    });
    const key = verified.json.api_key as string;
    const auth = { authorization: `Bearer ${key}` };
    const plan = await call(
      env,
      "POST",
      "/api/v1/live/prepare",
      { wallet: a.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.02").toString() },
      auth,
    );
    if (plan.status !== 200) throw new Error(`prepare: ${plan.status} ${JSON.stringify(plan.json)}`);
    const tx = plan.json.tx as { to: Hex; data: Hex; value: string; chain_id: number };
    const fees = await pub.estimateFeesPerGas();
    const nonce = await pub.getTransactionCount({ address: a.address, blockTag: "pending" });
    const raw = await a.signTransaction({
      chainId: tx.chain_id,
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      nonce,
      gas: 1_000_000n,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const sent = await call(env, "POST", "/api/v1/live/submit", { raw_tx: raw }, auth);
    if (sent.status !== 200) throw new Error(`submit: ${sent.status} ${JSON.stringify(sent.json)}`);
    return { key, txHash: sent.json.tx_hash as Hex };
  }

  return { rpcUrl, pub, test, freshenFeeds, relayTrade };
}

/** Ponder's /status block on the ops port (null while it does not answer). */
export const indexerBlock = (env: StackEnv): Promise<number | null> =>
  readIndexerBlock(`http://127.0.0.1:${env.OPS_PORT}`);

/** The API processes the ready lines name: `127.0.0.1:<port> (metrics <port>)`. */
export function apiProcesses(out: string): { port: number; metricsPort: number }[] {
  const line = out.split("\n").find((l) => l.includes("API processes behind port")) ?? "";
  return [...line.matchAll(/127\.0\.0\.1:(\d+) \(metrics (\d+)\)/g)].map((m) => ({
    port: Number(m[1]),
    metricsPort: Number(m[2]),
  }));
}

/** The pid listening on a loopback port (from /proc: the socket's inode, then the process holding it). */
export async function pidOnPort(port: number): Promise<number | null> {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .filter((l) => l.includes(`:${hex} `) && / 0A /.test(l))
      .map((l) => l.trim().split(/\s+/)[9]),
  );
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`))
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/^socket:\[(\d+)\]$/, "$1"))) return Number(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return null;
}
