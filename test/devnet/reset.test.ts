import { spawnSync } from "node:child_process";
import { mkdirSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../lib/root.js";
import { createDatabase, dropDatabase } from "../helpers/databases.js";

const name = `pit_reset_${Math.random().toString(36).slice(2, 8)}`;
let url: string;
const run = (env: Record<string, string>) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/devnet-reset.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });

beforeAll(async () => {
  url = await createDatabase(name);
});
afterAll(() => dropDatabase(name));

describe("npm run devnet:reset", () => {
  it("wipes the data directory and, with DATABASE_URL, the devnet's schemas, and nothing else", async () => {
    const dataDir = join(tmpdir(), `pit-reset-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "anvil-state.json"), "{}");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const s of ["app", "ponder_sync", "pit", "pit_0123456789ab", "keep_me", "pit_not_a_build"])
      await client.query(`CREATE SCHEMA "${s}"`);
    await client.query("CREATE TABLE app.accounts (id int)");
    const r = run({ DATA_DIR: dataDir, DATABASE_URL: url });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
    const left = (
      await client.query<{ n: string }>(
        "SELECT nspname AS n FROM pg_namespace WHERE nspname IN " +
          "('app','ponder_sync','pit','pit_0123456789ab','keep_me','pit_not_a_build') ORDER BY 1",
      )
    ).rows.map((x) => x.n);
    await client.end();
    expect(left).toEqual(["keep_me", "pit_not_a_build"]);
    expect(r.stdout).toMatch(/dropped schemas app, pit, pit_0123456789ab, ponder_sync/);
  });

  it("refuses to touch anything off the devnet", () => {
    const dataDir = join(tmpdir(), `pit-reset-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dataDir, { recursive: true });
    const r = run({
      DATA_DIR: dataDir,
      CHAIN_RPC_URL: "http://127.0.0.1:1",
      PLATFORM_FEE_RECIPIENT: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    });
    expect(r.status).toBe(2);
    expect(existsSync(dataDir)).toBe(true);
  });
});
