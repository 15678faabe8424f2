import { spawn, type ChildProcess } from "node:child_process";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil.js";
import { ROOT } from "../../lib/root.js";
import type { Indexer } from "../helpers/indexer.js";
import { startIndexedDevnet } from "../helpers/stack.js";

/**
 * Issue 12 fault 1: the app store's PostgreSQL backends terminated (pg_terminate_backend) while
 * requests are inside transactions. The process must live, answer 503 ENGINE_UNAVAILABLE (never
 * 500) while it happens, heal its pool, and lose no key.
 */
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let ix: Indexer;
let api: ChildProcess | undefined;
let admin: pg.Pool;
let base: string;
let output = "";

beforeAll(async () => {
  chain = await startIndexedDevnet();
  ix = chain.ix;
  admin = new pg.Pool({ connectionString: ix.databaseUrl!, max: 2 });
  admin.on("error", () => {});
  const port = await freePort();
  base = `http://localhost:${port}`;
  // Node itself, not the tsx wrapper: a SIGKILL of the wrapper would orphan the API process.
  api = spawn(process.execPath, ["--import", "tsx", "scripts/api.ts"], {
    cwd: ROOT,
    // Sign-in is rate limited per client address; every request here comes from 127.0.0.1. The
    // application name marks the API's connections (not the indexer's) for pg_terminate_backend.
    env: {
      ...process.env,
      PORT: String(port),
      OPS_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      ANVIL_PORT: String(chain.dn.anvil.port),
      DATABASE_URL: `${ix.databaseUrl!}?application_name=pit-app-store`,
      INDEXER_SCHEMA: ix.viewsSchema,
      RATE_LIMITS: "off",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  api.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  api.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  for (let i = 0; ; i++) {
    const ok = await fetch(`${base}/api/v1/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (api.exitCode !== null || i > 300) throw new Error(`npm run api did not come up: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);
afterAll(async () => {
  if (api?.exitCode === null) api.kill("SIGKILL");
  await admin?.end();
  await chain?.stop();
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as any };
};

/** Challenge then verify: two transactions in the app store. Returns every answer seen. */
async function signIn(wallet: PrivateKeyAccount) {
  const ch = await post("/api/v1/auth/challenge", { address: wallet.address });
  if (ch.status !== 200) return [ch];
  const key = await post("/api/v1/auth/verify", {
    address: wallet.address,
    signature: await wallet.signMessage({ message: ch.json.message }),
  });
  return [ch, key];
}

describe("the app store's connections terminated mid-transaction", () => {
  it("keeps the process alive, answers 503 ENGINE_UNAVAILABLE meanwhile, heals, and keeps every key", async () => {
    const wallets = Array.from({ length: 4 }, () => privateKeyToAccount(generatePrivateKey()));
    const keys: string[] = [];
    for (const w of wallets) {
      const [, verify] = await signIn(w);
      expect(verify!.status).toBe(200);
      keys.push(verify!.json.api_key);
    }

    // Terminate the store's backends caught working until several were inside a transaction.
    let caughtInTransaction = 0;
    let killing = true;
    const killer = (async () => {
      const deadline = Date.now() + 30_000;
      while (killing && caughtInTransaction < 8 && Date.now() < deadline) {
        const { rows } = await admin.query<{ state: string }>(
          `SELECT state, pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'pit-app-store' AND datname = current_database() AND state IN ('active',
              'idle in transaction')`,
        );
        caughtInTransaction += rows.filter((r) => r.state === "idle in transaction" || r.state === "active").length;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const answers: { status: number; retryAfter: string | null; json: any }[] = [];
    const load = wallets.map(async (w) => {
      while (killing && caughtInTransaction < 8) answers.push(...(await signIn(w)));
    });
    await killer;
    killing = false;
    await Promise.all(load);

    expect(api!.exitCode, output).toBeNull();
    expect(caughtInTransaction).toBeGreaterThanOrEqual(8);
    for (const a of answers) {
      expect([200, 503], JSON.stringify(a.json)).toContain(a.status);
      if (a.status === 503) {
        expect(a.json.error.code).toBe("ENGINE_UNAVAILABLE");
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      }
    }

    // Healed: new sign-ins work, and every key issued before the fault still authenticates.
    const [, again] = await signIn(wallets[0]!);
    expect(again!.status).toBe(200);
    for (const k of [...keys, again!.json.api_key]) {
      const me = await fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${k}` } });
      expect(me.status).toBe(200);
    }
    const health = await fetch(`${base}/api/v1/health`).then((r) => r.json() as any);
    expect(health.checks.database.ok).toBe(true);
  }, 120_000);
});
