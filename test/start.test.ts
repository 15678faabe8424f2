import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPublicClient, http } from "viem";
import { freePort } from "../devnet/anvil.js";
import { ROOT } from "../lib/root.js";

/**
 * `npm start` as a newcomer runs it: the real script, its own anvil, Ponder on PGlite and the API,
 * then SIGTERM. Ports and data directory are private to this test.
 */
type Run = { child: ChildProcess; out: () => string; exited: Promise<number | null> };
const runs: Run[] = [];

function start(env: Record<string, string>): Run {
  const child = spawn(join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/start.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d.toString()));
  child.stderr!.on("data", (d) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const run = { child, out: () => out, exited };
  runs.push(run);
  return run;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, run?: Run): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${run?.out() ?? ""}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const closed = async (port: number) => {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
};

afterAll(async () => {
  for (const r of runs) if (r.child.exitCode === null) r.child.kill("SIGKILL");
});

describe("npm start", () => {
  it("brings up devnet, indexer and API, answers health and config, stops on SIGTERM and continues the chain on restart", async () => {
    const port = await freePort();
    const anvilPort = await freePort();
    const env = { PORT: String(port), ANVIL_PORT: String(anvilPort), DATA_DIR: mkdtempSync(join(tmpdir(), "pit-start-")) };
    const base = `http://localhost:${port}/api/v1`;

    const first = start(env);
    await until("ready line", async () => (first.out().includes("[start] ready") ? true : undefined), 120_000, first);
    expect(first.out()).toContain(`http://localhost:${port}/api/v1`);
    const health = await until(
      "health ok",
      async () => {
        const res = await fetch(`${base}/health`);
        const body = (await res.json()) as any;
        return body.status === "ok" ? body : undefined;
      },
      60_000,
      first,
    );
    expect(health).toMatchObject({ status: "ok", service: "pit-trading-service" });
    const config = (await (await fetch(`${base}/config`)).json()) as any;
    expect(config.chain_id).toBe(4663);
    expect(config.tokens.USDG.decimals).toBe(6);

    const chain = createPublicClient({ transport: http(`http://127.0.0.1:${anvilPort}`) });
    expect(await chain.getChainId()).toBe(4663);
    const blockBefore = await chain.getBlockNumber();

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await closed(port)).toBe(true);
    expect(await closed(anvilPort)).toBe(true);
    expect(existsSync(join(env.DATA_DIR, "devnet", "chain.json"))).toBe(true);

    // Restart: same data directory, so the chain continues where it stopped.
    const second = start(env);
    await until("second ready line", async () => (second.out().includes("[start] ready") ? true : undefined), 120_000, second);
    expect(await chain.getBlockNumber()).toBeGreaterThanOrEqual(blockBefore);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
    expect(await closed(anvilPort)).toBe(true);
  }, 150_000);

  it("fails at once on bad config, naming the variable", async () => {
    const run = start({ PORT: "not-a-port", ANVIL_PORT: String(await freePort()) });
    expect(await run.exited).toBe(2);
    expect(run.out()).toMatch(/PORT: must be a number/);
  });
});
