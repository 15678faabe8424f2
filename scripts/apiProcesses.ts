/**
 * The API as separate processes under `npm run stack` (npm start with API_PROCESSES=N): N children
 * running scripts/api.ts (from its bundle) on PostgreSQL (the app store in DATABASE_URL, the
 * indexed tables through the views the indexer publishes), each on a loopback port and metrics port
 * of its own, kept running (scripts/keepRunning.ts), behind one public port (scripts/balancer.ts).
 * They share what must be shared through PostgreSQL (leases for the relay watcher, the week closer,
 * the league worker; SKIP LOCKED for the hosted scheduler) and Redis when REDIS_URL is set.
 */
import { join } from "node:path";
import { freePort, spawnDyingWithParent } from "../devnet/anvil.js";
import type { Config } from "../lib/config.js";
import { ROOT } from "../lib/root.js";
import { buildBundle } from "./apiBundle.js";
import { FORWARDED_FOR, startBalancer, type Balancer } from "./balancer.js";
import { keepRunning, type KeptChild } from "./keepRunning.js";

export type ApiProcesses = {
  balancer: Balancer;
  /** Each process's own port and metrics port (127.0.0.1). */
  processes: { port: number; metricsPort: number }[];
  pids(): (number | undefined)[];
  stop(): Promise<void>;
};

/**
 * Starts `config.apiProcesses` API processes and the balancer on config.port. `env` is what each
 * process gets besides its ports (the signers' URLs and secrets, the Shield and gateway stand-ins).
 */
export async function startApiProcesses(
  config: Config,
  env: NodeJS.ProcessEnv,
  o: { log(e: Record<string, unknown>): void; onGiveUp(reason: string): void },
): Promise<ApiProcesses> {
  const processes: { port: number; metricsPort: number }[] = [];
  for (let i = 0; i < config.apiProcesses; i++)
    processes.push({ port: await freePort(), metricsPort: await freePort() });
  // Each process answers for the public port: its sign-in domain and allowed hosts are the
  // balancer's, and it believes the client address the balancer appends (from loopback only).
  const shared: NodeJS.ProcessEnv = {
    ...env,
    AUTH_DOMAIN: env.AUTH_DOMAIN ?? (config.devnet ? `localhost:${config.port}` : undefined),
    ALLOWED_HOSTS: env.ALLOWED_HOSTS ?? config.allowedHosts.join(","),
    TRUSTED_PROXY_HEADER: env.TRUSTED_PROXY_HEADER ?? FORWARDED_FOR,
    INDEXER_SCHEMA: config.indexerSchema ?? "pit",
    ANVIL_PORT: String(config.anvilPort),
    HOST: "127.0.0.1",
  };
  const bundle = await buildBundle(join("scripts", "api.ts"), "api");
  const kept: KeptChild[] = processes.map((p, i) =>
    keepRunning(
      `API process ${i + 1}`,
      () =>
        spawnDyingWithParent(process.execPath, [bundle], {
          cwd: ROOT,
          stdio: ["ignore", "inherit", "inherit"],
          env: { ...shared, PORT: String(p.port), METRICS_PORT: String(p.metricsPort) },
        }),
      o,
    ),
  );
  const balancer = await startBalancer({
    port: config.port,
    host: process.env.HOST ?? "0.0.0.0",
    backends: () => processes.map((p) => p.port),
  });
  return {
    balancer,
    processes,
    pids: () => kept.map((k) => k.current().pid),
    async stop() {
      await balancer.close();
      await Promise.all(kept.map((k) => k.stop()));
    },
  };
}
