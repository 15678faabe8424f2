import { serveApp } from "../../api/http/serve.js";
import { openMigratedMemory } from "../../api/ports/store/memory.js";
import pino from "pino";
import { createApp } from "../../api/app.js";
import { sqlIndexedReads, type SqlIndexedReads } from "../../api/ports/indexed.js";
import type { Limiter } from "../../api/http/rateLimit.js";
import type { ShieldProvider } from "../../api/ports/shield.js";
import type { CosignerPort } from "../../api/ports/cosigner.js";
import type { Sequencer } from "../../api/ports/sequencer.js";
import type { PlatformSigner } from "../../api/ports/platformSigner.js";
import type { AppDeps } from "../../api/deps.js";
import type { Mount } from "../../api/http/route.js";
import type { Services } from "../../api/services.js";
import { openPostgres, type Db } from "../../api/ports/store/db.js";
import { migrate } from "../../api/ports/store/migrations.js";
import { createChainClient } from "../../lib/chain.js";
import { loadConfig, type Config } from "../../lib/config.js";
import type { AddressInfo } from "node:net";
import { createMigratedDatabase, dropDatabase, runDatabaseName } from "./databases.js";
import { holdToContract } from "./contract.js";
import { startLocalSigners, type LocalSigners } from "../../cosigner/process.js";

/**
 * The devnet's two signing services behind an app store: their own processes' code (HTTP, bearer
 * secrets, stores of their own) in this process, one pair per app store, on the clock of the first
 * API served over it. A second API on the same store (another instance, a restart, a clock moved
 * ahead) talks to the same pair, as real instances share their signing services.
 */
const signerPairs = new WeakMap<Db, Promise<LocalSigners>>();
/** A reopened handle of a store (another pool on the same database) names the handle it was reopened from. */
const firstHandle = new WeakMap<Db, Db>();
export function localSigners(store: Db, config: Config, clock: () => number): Promise<LocalSigners> {
  const db = firstHandle.get(store) ?? store;
  let p = signerPairs.get(db);
  if (!p) {
    p = startTestSigners(config, clock, db.kind);
    signerPairs.set(db, p);
  }
  return p;
}

/**
 * The pair on stores of the app store's kind: in memory (PGlite) beside a PGlite app store, as npm start runs them;
 * beside a PostgreSQL one, PostgreSQL databases of their own, dropped when the pair is closed (or by the run's
 * teardown). A process's first PGlite open costs about 2.6 CPU-seconds (its WASM compiled and started): a stack
 * file on PostgreSQL pays none.
 */
async function startTestSigners(config: Config, clock: () => number, kind: Db["kind"]): Promise<LocalSigners> {
  const chain = createChainClient(config);
  if (kind === "pglite") return startLocalSigners({ config, chain, clock });
  const names = { cosigner: runDatabaseName("signer"), executors: runDatabaseName("signer") };
  const [cosigner, executors] = await Promise.all([
    createMigratedDatabase(names.cosigner),
    createMigratedDatabase(names.executors),
  ]);
  const signers = await startLocalSigners({ config, chain, clock, storeUrls: { cosigner, executors } });
  let closed: Promise<void> | null = null;
  const close = () =>
    (closed ??= signers.close().then(() => Promise.all(Object.values(names).map(dropDatabase)).then(() => {})));
  return { ...signers, close };
}

/**
 * Which store a test gets when it does not say: PostgreSQL, a database of its own (about 0.2 s, almost all of it
 * in the server). PGlite is what `npm start` embeds, and stays covered where it is the point: the store's own
 * tests (api/ports/store, every store test in the unit project), npm start's tests, and the e2e files that ask
 * for it by name (trading, treasury, secpAttacks, auth).
 */
export type StoreKind = "pglite" | "postgres";

/** A fresh app store: in-memory PGlite, or a PostgreSQL database of its own (dropped by drop()). */
export async function freshStore(
  kind: StoreKind = "postgres",
): Promise<{ db: Db; reopen: () => Promise<Db>; drop: () => Promise<void> }> {
  if (kind === "pglite") {
    const db = await openMigratedMemory();
    // In-memory PGlite dies with its handle: "reopen" hands back the same live store.
    return { db, reopen: async () => db, drop: async () => (await closeSigners(db), await db.close()) };
  }
  const name = runDatabaseName("test");
  const url = await createMigratedDatabase(name);
  const open = async () => {
    const db = await openPostgres(url, 4);
    await migrate(db);
    return db;
  };
  const db = await open();
  const opened: Db[] = [db];
  return {
    db,
    reopen: async () => {
      const d = await open();
      firstHandle.set(d, db);
      opened.push(d);
      return d;
    },
    drop: async () => {
      await closeSigners(db);
      for (const d of opened) await d.close().catch(() => {});
      await dropDatabase(name);
    },
  };
}

/** Closes the signing services served over `db`'s store, if any were. */
async function closeSigners(db: Db): Promise<void> {
  const pair = signerPairs.get(db);
  if (pair) await (await pair).close();
}

/** The real app on a real HTTP port, against a devnet and a store. */
export async function serveApi(opts: {
  rpcUrl: string;
  db: Db;
  config?: Partial<Config>;
  clock?: () => number;
  limiter?: Limiter;
  indexed?: SqlIndexedReads;
  shield?: ShieldProvider | null;
  sequencer?: Sequencer;
  cosigner?: CosignerPort | null;
  screenBudget?: Limiter;
  screen?: AppDeps["screen"];
  signInCaps?: AppDeps["signInCaps"];
  platformSigner?: PlatformSigner | null;
  treasury?: AppDeps["treasury"];
  hostedScheduler?: AppDeps["hostedScheduler"];
  executors?: AppDeps["executors"];
  league?: AppDeps["league"];
  stats?: AppDeps["stats"];
  mounts?: readonly Mount<Services>[];
}) {
  // The server listens first, on a port the kernel picks at bind time (a port picked first and
  // bound later can be taken in between: EADDRINUSE); the app, which needs its port for its
  // allowed hosts, is built after and answers through it.
  let appFetch: ((request: Request, env: unknown) => Response | Promise<Response>) | null = null;
  const trustedProxies =
    opts.config?.trustedProxies ?? loadConfig({ ANVIL_PORT: new URL(opts.rpcUrl).port }).trustedProxies;
  // The same capped edge as npm start and npm run api.
  const server = await serveApp(
    { fetch: (request: Request, env: unknown) => appFetch!(request, env) },
    { port: 0, hostname: "127.0.0.1", trustedProxies },
  );
  const port = (server.address() as AddressInfo).port;
  const base = loadConfig({ ANVIL_PORT: new URL(opts.rpcUrl).port, PORT: String(port) });
  const config: Config = { ...base, allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`], ...opts.config };
  const clock = opts.clock ?? Date.now;
  const signers =
    opts.cosigner === undefined || opts.executors === undefined ? await localSigners(opts.db, config, clock) : null;
  const app = createApp(
    {
      config,
      logger: pino({ level: process.env.TEST_LOG ?? "silent" }),
      chain: createChainClient(config),
      // No indexer given: one that has indexed nothing yet (every read finds no rows).
      indexed: opts.indexed ?? sqlIndexedReads(async () => []),
      db: opts.db,
      clock: opts.clock,
      limiter: opts.limiter,
      shield: opts.shield ?? null,
      sequencer: opts.sequencer,
      cosigner: opts.cosigner !== undefined ? opts.cosigner : signers!.cosigner,
      ...(opts.screenBudget ? { screenBudget: opts.screenBudget } : {}),
      screen: opts.screen,
      signInCaps: opts.signInCaps,
      ...(opts.platformSigner !== undefined ? { platformSigner: opts.platformSigner } : {}),
      treasury: opts.treasury,
      hostedScheduler: opts.hostedScheduler,
      league: opts.league,
      stats: opts.stats,
      executors: opts.executors !== undefined ? opts.executors : signers!.executors,
      pingDatabase: async () => void (await opts.db.query("SELECT 1")),
    },
    opts.mounts,
  );
  appFetch = (request, env) => app.fetch(request, env);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    config,
    app,
    /** The signing services this API talks to (null when the test gave its own ports). */
    signers,
    async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      holdToContract(method, path, res.status, json);
      return { status: res.status, headers: res.headers, json, text };
    },
    close: async () => {
      await app.stop();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export type Api = Awaited<ReturnType<typeof serveApi>>;
