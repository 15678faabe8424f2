/**
 * HTTP benchmark on loopback: GET /api/v1/config through the service app and through plain Hono
 * answering the same JSON (measured in the same run), then the full sign-in (challenge + verify,
 * the client signing each message with a viem account). Server in its own process; load from
 * this one (autocannon for config, a worker pool for sign-in).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import autocannon from "autocannon";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freePort, startAnvil } from "../devnet/anvil.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { ROOT } from "../lib/root.js";
import { summarize, type Row } from "./stats.js";

/** bench/httpServer.ts in its own process, resolved once it listens. */
export async function server(
  mode: "app" | "plain",
  anvilPort: number,
  env: Record<string, string> = {},
): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    join(ROOT, "node_modules", ".bin", "tsx"),
    [
      // BENCH_CPU_PROF=<dir>: a CPU profile of each server process, written there when it exits.
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      "bench/httpServer.ts",
      mode,
      String(port),
      String(anvilPort),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => d.toString().includes("READY") && resolve());
    child.once("exit", (code) => reject(new Error(`${mode} server exited ${code}`)));
  });
  return { port, child };
}

/** An agent's calls to a bench server: JSON posts with an optional key, and sign-in with a local account. */
export function apiClient(port: number) {
  const base = `http://127.0.0.1:${port}/api/v1`;
  const post = async (path: string, body: unknown, key?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const signIn = async (a: ReturnType<typeof privateKeyToAccount>): Promise<string> => {
    const ch = await post("/auth/challenge", { address: a.address });
    return (
      await post("/auth/verify", { address: a.address, signature: await a.signMessage({ message: ch.json.message }) })
    ).json.api_key;
  };
  const get = async (path: string, key?: string) => {
    const res = await fetch(`${base}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, json: (await res.json()) as any };
  };
  return { post, get, signIn };
}

async function cannon(url: string, seconds: number) {
  const result = await autocannon({ url, connections: 32, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

export async function benchHttp(opts: { seconds: number; signIns: number }): Promise<Row[]> {
  await ensureSnapshot();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const rows: Row[] = [];
  const stop = (c: ChildProcess) => new Promise((r) => (c.once("exit", r), c.kill("SIGTERM")));
  try {
    const results: Record<string, autocannon.Result> = {};
    for (const mode of ["plain", "app"] as const) {
      const s = await server(mode, anvil.port);
      await cannon(`http://127.0.0.1:${s.port}/api/v1/config`, 2); // warm-up
      results[mode] = await cannon(`http://127.0.0.1:${s.port}/api/v1/config`, opts.seconds);
      await stop(s.child);
    }
    for (const mode of ["plain", "app"] as const) {
      const r = results[mode]!;
      const name = mode === "plain" ? "GET /config, plain Hono (anchor)" : "GET /config, service app";
      rows.push({
        name: `${name}: requests/s`,
        unit: "req/s",
        n: r.requests.sent,
        p50: r.requests.average,
        p99: r.requests.p1,
        min: r.requests.min,
        max: r.requests.max,
        mean: r.requests.average,
      });
      rows.push({
        name: `${name}: latency`,
        unit: "ms",
        n: r.requests.sent,
        p50: r.latency.p50,
        p99: r.latency.p99,
        min: r.latency.min,
        max: r.latency.max,
        mean: r.latency.average,
      });
    }
    rows.push(
      summarize(
        "service / plain Hono, GET /config requests/s",
        [(results.app!.requests.average / results.plain!.requests.average) * 100],
        "%",
      ),
    );

    // Full sign-in: challenge, sign, verify; 8 wallets at a time.
    const s = await server("app", anvil.port);
    const base = `http://127.0.0.1:${s.port}/api/v1/auth`;
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const latencies: number[] = [];
    const accounts = Array.from({ length: opts.signIns }, () => privateKeyToAccount(generatePrivateKey()));
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < accounts.length) {
          const a = accounts[next++]!;
          const t = performance.now();
          const ch = (await (await post("/challenge", { address: a.address })).json()) as { message: string };
          const signature = await a.signMessage({ message: ch.message });
          const res = await post("/verify", { address: a.address, signature });
          if (res.status !== 200) throw new Error(`verify ${res.status}`);
          await res.arrayBuffer();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    rows.push(summarize(`full sign-in (challenge + client signature + verify), 8 concurrent`, latencies, "ms"));
    rows.push(summarize("full sign-ins per second", [accounts.length / secs], "sign-ins/s"));
    await stop(s.child);
  } finally {
    await anvil.stop();
  }
  return rows;
}
