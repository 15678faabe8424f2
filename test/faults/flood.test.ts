import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PER_ADDRESS_CONNECTIONS } from "../../api/http/serve.js";
import { freePort } from "../../devnet/anvil.js";
import { ROOT } from "../../lib/root.js";
import { startIndexedDevnet } from "../helpers/stack.js";

/**
 * Issue 12 fault 4: ~20,000 idle connections from one client address exhausted the process's file
 * descriptors and left the stores reading as empty. Behind the capped edge the flood holds at most
 * its per-address share; other clients are served and nothing stored is lost.
 */
const FLOOD = 19_500; // the machine's descriptor limit is 20,000 for the flooding process too
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let api: ChildProcess | undefined;
let port = 0;
let output = "";

beforeAll(async () => {
  chain = await startIndexedDevnet();
  port = await freePort();
  api = spawn(process.execPath, ["--import", "tsx", "scripts/api.ts"], {
    cwd: ROOT,
    // Loopback is a trusted proxy by default (no per-address cap); here it is an ordinary client.
    env: {
      ...process.env,
      PORT: String(port),
      ANVIL_PORT: String(chain.dn.anvil.port),
      DATABASE_URL: chain.ix.databaseUrl!,
      INDEXER_SCHEMA: chain.ix.viewsSchema,
      TRUSTED_PROXIES: "10.255.255.1",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  api.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  api.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  for (let i = 0; ; i++) {
    if ((await get("/api/v1/health").catch(() => ({ status: 0 }))).status === 200) break;
    if (api.exitCode !== null || i > 300) throw new Error(`npm run api did not come up: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);
afterAll(async () => {
  if (api?.exitCode === null) api.kill("SIGKILL");
  await chain?.stop();
});

/** A request from 127.0.0.2: another client than the flood's 127.0.0.1. */
function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        localAddress: "127.0.0.2",
        method,
        path,
        timeout: 10_000,
        headers: {
          host: `localhost:${port}`,
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(payload);
  });
}
const get = (path: string, headers?: Record<string, string>) => send("GET", path, undefined, headers);

async function signIn() {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const ch = await send("POST", "/api/v1/auth/challenge", { address: wallet.address });
  const key = await send("POST", "/api/v1/auth/verify", {
    address: wallet.address,
    signature: await wallet.signMessage({ message: ch.json.message }),
  });
  expect(key.status, JSON.stringify(key.json)).toBe(200);
  return key.json.api_key as string;
}

/**
 * The flood, in its own process (its descriptors are its own): opens `n` connections from
 * 127.0.0.1 that never send a byte, reports how many the server closed once it has closed all but the share (or
 * after 60 s), and holds the rest open until told to stop.
 */
function flood(n: number) {
  const script = `
    const net = require("node:net");
    let open = 0, closedByServer = 0, failed = 0;
    const sockets = [];
    (async () => {
      for (let i = 0; i < ${n}; i += 500) {
        await Promise.all(Array.from({ length: Math.min(500, ${n} - i) }, () => new Promise((resolve) => {
          const s = net.connect({ host: "127.0.0.1", port: ${port}, localAddress: "127.0.0.1" });
          s.on("connect", () => { open++; sockets.push(s); resolve(); });
          s.on("close", () => { closedByServer++; });
          s.on("error", () => { failed++; resolve(); });
        })));
      }
      // Until the server has closed every connection past the share, or 60 s: a connect resolves when the kernel
      // completes the handshake, and under load hundreds may still wait in the listen backlog to be closed.
      const deadline = Date.now() + 60_000;
      while (closedByServer < ${n} - ${PER_ADDRESS_CONNECTIONS} && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      process.send({ open, closedByServer, failed });
    })();
    process.on("message", () => { for (const s of sockets) s.destroy(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const report = new Promise<{ open: number; closedByServer: number; failed: number }>((r) =>
    child.once("message", (m) => r(m as never)),
  );
  const ended = new Promise((r) => child.once("exit", r));
  return { report, stop: async () => (child.send("stop"), await ended) };
}

describe("a flood of idle connections from one client", () => {
  it("keeps the flood to its per-address share while other clients are served and every key survives", async () => {
    const keys = [await signIn(), await signIn()];
    const f = flood(FLOOD);
    const seen = await f.report;
    try {
      expect(seen.open + seen.failed).toBe(FLOOD);
      // The server closed every connection past the flood's share.
      expect(seen.closedByServer).toBeGreaterThanOrEqual(FLOOD - PER_ADDRESS_CONNECTIONS - seen.failed);
      expect(api!.exitCode, output).toBeNull();
      expect((await get("/api/v1/health")).json.status).toBe("ok");
      expect((await get("/api/v1/config")).status).toBe(200);
      for (const k of keys) expect((await get("/api/v1/auth/me", { authorization: `Bearer ${k}` })).status).toBe(200);
      keys.push(await signIn());
    } finally {
      await f.stop();
    }
    for (const k of keys) expect((await get("/api/v1/auth/me", { authorization: `Bearer ${k}` })).status).toBe(200);
    expect((await get("/api/v1/health")).json.checks.database.ok).toBe(true);
  }, 180_000);
});
