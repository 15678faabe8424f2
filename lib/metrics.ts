import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import client from "prom-client";

/**
 * The service's Prometheus metrics (issue 32 point 3, docs/running.md "Metrics"): one registry per
 * process, every family declared here once, each moved by the module that owns what it counts
 * (the request log, the refusal path, the relay watcher, the co-signer, the hosted scheduler, the
 * AI spend ledger, the treasury closer and the league settler). Labels take a bounded set of
 * values only: a route's declared pattern, a status, a catalogue code, a rule's name, an outcome;
 * never an address, a key, a hash or an id, so a caller cannot grow the series.
 *
 * Where it is read: each process that counts serves this registry on its own listener bound to
 * 127.0.0.1 (serveMetrics), never on the public API port. Under `npm start` the API lives inside
 * Ponder's process, whose own /metrics (on 127.0.0.1:OPS_PORT) answers from a registry Ponder
 * keeps private (node_modules/ponder/dist/esm/internal/metrics.js: `new prometheus.Registry()` on
 * an object `ponder:api` does not export), and its server answers GET /metrics before any route of
 * ours (server/index.ts registers it ahead of the mounted API app). So our families cannot join
 * Ponder's page: the API serves them on a second loopback port, METRICS_PORT, in every layout
 * alike (embedded or `npm run api`), and the co-signer and the executor signing service on theirs.
 */
export const registry = new client.Registry();

/** A counter family in the registry, with its fixed label names. */
function counter<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  return new client.Counter<L>({ name, help, labelNames, registers: [registry] });
}

export const httpRequestDuration = new client.Histogram({
  name: "pit_http_request_duration_seconds",
  help: "API requests by method, declared route pattern and status, in seconds (the request log's timing)",
  labelNames: ["method", "route", "status"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const refusals = counter("pit_refusals_total", "Refusals answered ({error:{code}}), by catalogue code", [
  "code",
] as const);

export const RELAY_OUTCOMES = ["mined", "reverted", "dropped", "resent"] as const;
export const relayOutcomes = counter(
  "pit_relay_outcomes_total",
  "Relayed trades as the relay watcher saw them: a receipt recorded mined or reverted, a trade past the hour " +
    "without one (dropped), signed bytes the node lost sent again (resent)",
  ["outcome"] as const,
);

export const cosignerDecisions = counter(
  "pit_cosigner_decisions_total",
  "Co-signings by decision (signed, refused) and the rule that decided (all: every rule passed)",
  ["decision", "rule"] as const,
);

export const hostedTickLag = new client.Histogram({
  name: "pit_hosted_tick_lag_seconds",
  help: "How late the hosted scheduler claimed a tick after its slot was due, in seconds",
  buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
  registers: [registry],
});

export const TICK_OUTCOMES = ["committed", "skipped", "failed", "timed_out"] as const;
export const hostedTicks = counter(
  "pit_hosted_ticks_total",
  "Hosted ticks by outcome: committed, skipped (agent not active, or the slot already ran or was taken), " +
    "failed, timed_out",
  ["outcome"] as const,
);

export const AI_FUNDING = ["service", "own"] as const;
export const aiSpendUsd = counter(
  "pit_ai_spend_usd_total",
  "AI brain spend settled, in USD, by funding (service: the pool; own: the owner's key)",
  ["funding"] as const,
);
export const aiCalls = counter(
  "pit_ai_calls_total",
  "AI brain calls settled, by funding and spend status (ok, invalid, error)",
  ["funding", "status"] as const,
);

export const WORKERS = ["relay_watcher", "treasury_closer", "league_settler"] as const;
export type Worker = (typeof WORKERS)[number];
/** ran: a pass done; waiting: done, but a week or season is not ready; not_held: another instance holds the lease. */
export const PASS_OUTCOMES = ["ran", "waiting", "not_held", "failed"] as const;
export type PassOutcome = (typeof PASS_OUTCOMES)[number];
export const workerPasses = counter(
  "pit_worker_passes_total",
  "Background worker passes by worker and outcome (ran, waiting, not_held, failed)",
  ["worker", "outcome"] as const,
);
export const workerLastPass = new client.Gauge({
  name: "pit_worker_last_pass_timestamp_seconds",
  help: "When each worker last ended a pass with each outcome (Unix seconds)",
  labelNames: ["worker", "outcome"] as const,
  registers: [registry],
});

/** One worker pass ended: counted, and its time kept. */
export function workerPass(worker: Worker, outcome: PassOutcome): void {
  workerPasses.inc({ worker, outcome });
  workerLastPass.set({ worker, outcome }, Date.now() / 1000);
}

export const treasuryWeeksClosed = counter(
  "pit_treasury_weeks_closed_total",
  "Treasury weeks recorded, by status (moved, booked) and reconciliation (agrees, accepted)",
  ["status", "reconciliation"] as const,
);

/** Read at each scrape from the newest live app (a process runs one; tests may hold several). */
const lagProbes: (() => Promise<number | null>)[] = [];
export const viewsLag = new client.Gauge({
  name: "pit_views_lag_blocks",
  help: "How many blocks the indexed views trail the chain's head, read at scrape (absent when either is unread)",
  registers: [registry],
  async collect() {
    this.reset();
    const lag = await lagProbes
      .at(-1)?.()
      .catch(() => null);
    if (lag !== null && lag !== undefined) this.set(lag);
  },
});

/** Makes `read` the views-lag probe until the returned function is called. */
export function probeViewsLag(read: () => Promise<number | null>): () => void {
  lagProbes.push(read);
  return () => {
    const at = lagProbes.lastIndexOf(read);
    if (at >= 0) lagProbes.splice(at, 1);
  };
}

// Outcomes known in advance answer 0 from the start, so a rate over them exists before the first event.
for (const outcome of RELAY_OUTCOMES) relayOutcomes.inc({ outcome }, 0);
for (const outcome of TICK_OUTCOMES) hostedTicks.inc({ outcome }, 0);
for (const funding of AI_FUNDING) aiSpendUsd.inc({ funding }, 0);
for (const worker of WORKERS) for (const outcome of PASS_OUTCOMES) workerPasses.inc({ worker, outcome }, 0);

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** A request's method as a label: any other word a client sends is OTHER. */
export const methodLabel = (method: string) => (METHODS.has(method) ? method : "OTHER");
/** A rule's or code's name as a label: the catalogue's and the rules' upper-case words, anything else OTHER. */
export const ruleLabel = (name: unknown) =>
  typeof name === "string" && /^[A-Z][A-Z0-9_]{0,47}$/.test(name) ? name : "OTHER";

let defaultsOn = false;
type Log = { info(o: object, msg: string): void; error(o: object, msg: string): void };

/**
 * The process's metrics listener: GET /metrics on 127.0.0.1:`port` (0: the kernel picks), nothing
 * else; the address is not configurable, so metrics never leave the machine unproxied. A port
 * that cannot be bound is logged and the process goes on serving (metrics must not take trading
 * down; a scrape target that is down is what the operator sees): answers null then.
 */
export async function serveMetrics(o: { port: number; name: string; log?: Log }): Promise<Server | null> {
  if (!defaultsOn) client.collectDefaultMetrics({ register: registry });
  defaultsOn = true;
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err) => res.writeHead(500, { "content-type": "text/plain" }).end(`${(err as Error).message}\n`),
    );
  });
  return new Promise((resolve) => {
    server.once("error", (err) => {
      o.log?.error({ err, port: o.port }, `${o.name}: metrics not served (its port could not be bound)`);
      resolve(null);
    });
    server.listen(o.port, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      o.log?.info({ port }, `${o.name}: metrics on http://127.0.0.1:${port}/metrics`);
      server.unref();
      resolve(server);
    });
  });
}

/** Closes a metrics listener (null: none was bound). */
export const closeMetrics = (server: Server | null) =>
  new Promise<void>((r) => (server ? (server.close(() => r()), server.closeAllConnections()) : r()));
