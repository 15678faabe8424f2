import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import { PG_URL } from "../helpers/databases.js";
import type { Indexer } from "../helpers/indexer.js";
import { startIndexedDevnet } from "../helpers/stack.js";
import { freePort } from "../../devnet/anvil.js";
import { ROOT } from "../../lib/root.js";

let dn: Devnet;
let ix: Indexer;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });

beforeAll(async () => {
  chain = await startIndexedDevnet();
  ({ dn, ix } = chain);
}, 120_000);
afterAll(async () => {
  await chain?.stop();
  await admin.end();
});

const children: import("node:child_process").ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

function startApi(port: number) {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/api.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      ANVIL_PORT: String(dn.anvil.port),
      DATABASE_URL: ix.databaseUrl!,
      INDEXER_SCHEMA: ix.viewsSchema,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  return { child, out: () => out, exited };
}

describe("npm run api (separate API processes over PostgreSQL)", () => {
  it("serves from the indexer's views and a shared app store; two instances share keys", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const a = startApi(p1);
    const b = startApi(p2);
    const wait = async (port: number, run: ReturnType<typeof startApi>) => {
      for (let i = 0; i < 200; i++) {
        try {
          const r = await fetch(`http://localhost:${port}/api/v1/health`);
          if (r.status === 200) return (await r.json()) as any;
        } catch {
          // starting
        }
        if (run.child.exitCode !== null) throw new Error(run.out());
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no answer on ${port}: ${run.out()}`);
    };
    const health = await wait(p1, a);
    await wait(p2, b);
    if (typeof health.checks.indexer.block !== "number") throw new Error(JSON.stringify(health) + a.out());
    expect(health.checks.indexer.block).toBeGreaterThan(0);
    expect(health.checks.database.ok).toBe(true);

    const wallet = privateKeyToAccount(generatePrivateKey());
    const post = (port: number, path: string, body: unknown) =>
      fetch(`http://localhost:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json() as any);
    const ch = await post(p1, "/api/v1/auth/challenge", { address: wallet.address });
    expect(ch.domain).toBe(`localhost:${p1}`);
    // The challenge was issued by instance 1; instance 2 verifies it from the shared store.
    const key = await post(p2, "/api/v1/auth/verify", {
      address: wallet.address,
      signature: await wallet.signMessage({ message: ch.message }),
    });
    expect(key.api_key).toMatch(/^pit_w_/);
    const me = await fetch(`http://localhost:${p1}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${key.api_key}` },
    });
    expect(me.status).toBe(200);

    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  });
});

describe("app store migrations", () => {
  it("migrates once when several instances start together", async () => {
    const { openPostgres } = await import("../../api/ports/store/db.js");
    const { migrate, MIGRATIONS } = await import("../../api/ports/store/migrations.js");
    const versions = MIGRATIONS.map((m) => m.version);
    await admin.query("DROP SCHEMA IF EXISTS app CASCADE");
    const dbs = await Promise.all(Array.from({ length: 4 }, () => openPostgres(PG_URL, 2)));
    const applied = await Promise.all(dbs.map((d) => migrate(d)));
    expect(applied.flat()).toEqual(versions);
    const rows = await dbs[0]!.query<{ version: number }>("SELECT version FROM app.schema_migrations");
    expect(rows.map((r) => Number(r.version)).sort((a, b) => a - b)).toEqual(versions);
    await Promise.all(dbs.map((d) => d.close()));
    await admin.query("DROP SCHEMA IF EXISTS app CASCADE");
  });
});
