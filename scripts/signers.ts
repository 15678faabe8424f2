/**
 * The devnet's two signing services under `npm start`: `npm run cosigner` and `npm run executors`
 * (each started from a bundle of its script: scripts/apiBundle.ts) as child processes, each with a
 * bearer secret drawn for this start, its own port and its own PGlite store (DATA_DIR/cosigner,
 * DATA_DIR/executors). Each child's environment holds only its own key material; the API (inside
 * the indexer) gets their URLs and secrets and none of their keys, so the path the devnet runs is
 * the production path. A child that exits is started again (scripts/keepRunning.ts; past five
 * restarts a minute the stack stops). Launched without waiting for them to answer (`ready`), so
 * they start while the indexer does.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { freePort, spawnDyingWithParent } from "../devnet/anvil.js";
import type { Config } from "../lib/config.js";
import { ROOT } from "../lib/root.js";
import { buildBundle } from "./apiBundle.js";
import { keepRunning, type KeptChild } from "./keepRunning.js";

type Kind = "cosigner" | "executors";
/** Variables only one side may see: the other side's key material and secret never enter a child's environment. */
const ONLY: Record<Kind, string[]> = {
  cosigner: ["COSIGNER_KEY", "COSIGNER_TOKEN", "COSIGNER_FROZEN"],
  executors: ["EXECUTOR_KEYS_SECRET", "EXECUTORS_TOKEN"],
};

export async function startSigners(
  config: Config,
  o: { log(e: Record<string, unknown>): void; onGiveUp(reason: string): void },
) {
  const own = {
    cosigner: {
      port: process.env.COSIGNER_PORT ? config.cosignerPort : await freePort(),
      metricsPort: process.env.COSIGNER_METRICS_PORT ? config.cosignerMetricsPort : await freePort(),
      token: randomBytes(24).toString("hex"),
    },
    executors: {
      port: process.env.EXECUTORS_PORT ? config.executorsPort : await freePort(),
      metricsPort: process.env.EXECUTORS_METRICS_PORT ? config.executorsMetricsPort : await freePort(),
      token: randomBytes(24).toString("hex"),
    },
  };
  const baseEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => ![...ONLY.cosigner, ...ONLY.executors].includes(k)),
  );
  const envOf = (k: Kind): NodeJS.ProcessEnv =>
    k === "cosigner"
      ? {
          ...baseEnv,
          ...pick(ONLY.cosigner),
          COSIGNER_TOKEN: own.cosigner.token,
          COSIGNER_PORT: String(own.cosigner.port),
          COSIGNER_METRICS_PORT: String(own.cosigner.metricsPort),
          ANVIL_PORT: String(config.anvilPort),
        }
      : {
          ...baseEnv,
          ...pick(ONLY.executors),
          EXECUTORS_TOKEN: own.executors.token,
          EXECUTORS_PORT: String(own.executors.port),
          EXECUTORS_METRICS_PORT: String(own.executors.metricsPort),
          ANVIL_PORT: String(config.anvilPort),
        };
  const [cosignerBundle, executorsBundle] = await Promise.all(
    (["cosigner", "executors"] as const).map((k) => buildBundle(join("scripts", `${k}.ts`), k)),
  );
  const bundles: Record<Kind, string> = { cosigner: cosignerBundle!, executors: executorsBundle! };
  const launch = (k: Kind) =>
    keepRunning(
      `${k} signing service`,
      () =>
        spawnDyingWithParent(process.execPath, [bundles[k]], {
          cwd: ROOT,
          stdio: ["ignore", "inherit", "inherit"],
          env: envOf(k),
        }),
      o,
    );
  const children: Record<Kind, KeptChild> = { cosigner: launch("cosigner"), executors: launch("executors") };
  const urls = {
    cosigner: `http://127.0.0.1:${own.cosigner.port}`,
    executors: `http://127.0.0.1:${own.executors.port}`,
  };
  // Awaited by the caller, not here: the indexer (the longest start) boots meanwhile; the API only calls
  // the signers when a request needs them.
  const ready = Promise.all([
    answering(urls.cosigner, children.cosigner.current),
    answering(urls.executors, children.executors.current),
  ]).then(() => undefined);
  ready.catch(() => {}); // seen by the caller's await; not an unhandled rejection meanwhile
  return {
    /** Both services answer HTTP (rejects when one exits first or does not answer within a minute). */
    ready,
    /** What the API's process is given: where its signers answer, and their secrets; no key. */
    apiEnv: {
      COSIGNER_URL: urls.cosigner,
      COSIGNER_TOKEN: own.cosigner.token,
      EXECUTORS_URL: urls.executors,
      EXECUTORS_TOKEN: own.executors.token,
    },
    /** Where each signing process answers /metrics (127.0.0.1). */
    metrics: {
      cosigner: `http://127.0.0.1:${own.cosigner.metricsPort}/metrics`,
      executors: `http://127.0.0.1:${own.executors.metricsPort}/metrics`,
    },
    /** Variables the API's process must not inherit. */
    withheld: [...ONLY.cosigner, ...ONLY.executors].filter((k) => !["COSIGNER_TOKEN", "EXECUTORS_TOKEN"].includes(k)),
    pids: () => Object.values(children).map((c) => c.current().pid),
    async stop() {
      await Promise.all(Object.values(children).map((c) => c.stop()));
    },
  };
}

const pick = (keys: string[]) =>
  Object.fromEntries(keys.flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]]])));

/** Until the service answers HTTP at all (401 without its secret is an answer). */
async function answering(url: string, child: () => ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const c = child();
    if (c.exitCode !== null && c.exitCode !== 0)
      throw new Error(`a signing service at ${url} exited with code ${c.exitCode} before it answered`);
    if (
      await fetch(`${url}/v1/usage`, { method: "POST", signal: AbortSignal.timeout(1_000) }).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the signing service at ${url} did not answer within ${timeoutMs / 1000} s`);
}
