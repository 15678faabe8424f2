/**
 * Keeps the indexer (Ponder, with the API inside it) running under `npm start`:
 * - it exits unexpectedly (e.g. its PostgreSQL connection was terminated): start it again, with a
 *   growing delay and at most `maxRestartsPerMinute` restarts a minute (then give up: something
 *   is broken that a restart does not fix);
 * - it stalls (Ponder's /status block does not move for `stallMs` while the chain's head is ahead
 *   of it and answering, e.g. after the node was stopped for a minute): kill it and start again.
 * The chain keeps running throughout. Each restart is logged with its reason.
 */
import type { ChildProcess } from "node:child_process";

export type SupervisorOptions = {
  spawnIndexer(): ChildProcess;
  /** Ponder's own routes, e.g. http://127.0.0.1:42070 (/status, /ready). */
  opsUrl: string;
  /** The chain's head block, or null when the node does not answer. */
  chainHead(): Promise<number | null>;
  /** Runs between an indexer's exit and the next start (e.g. release its lock). */
  beforeRestart?(restartsLastMinute: number, reason: string): Promise<void>;
  log(event: Record<string, unknown>): void;
  /** Called once when restarts are exhausted. */
  onGiveUp(reason: string): void;
  stallMs?: number;
  /** Before the first /ready 200 (backfill), progress may legitimately be slower. */
  startupStallMs?: number;
  pollMs?: number;
  maxRestartsPerMinute?: number;
};

export type IndexerStatus = { block: number | null; ready: boolean };

async function getJson(url: string, timeoutMs: number): Promise<{ status: number; body: unknown } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // /ready answers plain text
    }
    return { status: res.status, body };
  } catch {
    return null;
  }
}

/** Ponder's /status block for our only chain (its latest checkpoint), or null while it does not answer one. */
export async function readIndexerBlock(opsUrl: string, timeoutMs = 2_000): Promise<number | null> {
  const status = await getJson(`${opsUrl}/status`, timeoutMs);
  const chains =
    status?.status === 200 ? Object.values((status.body ?? {}) as Record<string, { block?: { number?: number } }>) : [];
  const block = chains[0]?.block?.number;
  return typeof block === "number" ? block : null;
}

/** Ponder's /status block, and whether /ready says historical indexing is done. */
export async function readIndexerStatus(opsUrl: string, timeoutMs = 2_000): Promise<IndexerStatus> {
  const [block, ready] = await Promise.all([
    readIndexerBlock(opsUrl, timeoutMs),
    getJson(`${opsUrl}/ready`, timeoutMs),
  ]);
  return { block, ready: ready?.status === 200 };
}

/**
 * Tells a stall from progress: the chain answers and is ahead, and the indexer does not move.
 * After a node outage of `stallMs` or more the budget is short: Ponder resumes within a second or
 * two when it resumes at all, and after a long outage it is known to stay stuck for minutes.
 */
export class StallWatch {
  private lastBlock: number | null = null;
  private stuckSince: number | null = null;
  private nodeAwaySince: number | null = null;
  private afterOutage = false;
  ready = false;

  constructor(
    private readonly stallMs: number,
    private readonly startupStallMs: number,
    private readonly afterOutageMs = 3_000,
  ) {}

  /** Feeds one observation; returns a reason when the indexer is stalled. */
  observe(now: number, status: IndexerStatus, head: number | null): string | null {
    if (status.ready) this.ready = true;
    const moved = status.block !== null && status.block !== this.lastBlock;
    if (status.block !== null) this.lastBlock = status.block;
    if (head === null) {
      // No verdict while the node is away: there is nothing to follow.
      this.nodeAwaySince ??= now;
      this.stuckSince = null;
      return null;
    }
    if (this.nodeAwaySince !== null) {
      if (now - this.nodeAwaySince >= this.stallMs) this.afterOutage = true;
      this.nodeAwaySince = null;
    }
    const behind = this.lastBlock === null || head > this.lastBlock;
    if (moved || !behind) {
      this.stuckSince = null;
      if (moved) this.afterOutage = false;
      return null;
    }
    this.stuckSince ??= now;
    const budget = !this.ready ? this.startupStallMs : this.afterOutage ? this.afterOutageMs : this.stallMs;
    if (now - this.stuckSince < budget) return null;
    const stuckS = Math.round((now - this.stuckSince) / 1000);
    return (
      `indexer stalled: block ${this.lastBlock ?? "unknown"} for ${stuckS} s while the chain's head is ${head}` +
      (this.afterOutage ? " (after a node outage)" : "")
    );
  }
}

export class IndexerSupervisor {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restarts: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private watch: StallWatch;
  private polling = false;
  private readonly o: Required<Omit<SupervisorOptions, "beforeRestart">> & Pick<SupervisorOptions, "beforeRestart">;

  constructor(opts: SupervisorOptions) {
    this.o = { stallMs: 10_000, startupStallMs: 120_000, pollMs: 1_000, maxRestartsPerMinute: 5, ...opts };
    this.watch = new StallWatch(this.o.stallMs, this.o.startupStallMs);
  }

  get current(): ChildProcess | null {
    return this.child;
  }

  start(): void {
    this.launch();
    this.timer = setInterval(() => void this.poll(), this.o.pollMs);
  }

  private launch(): void {
    this.watch = new StallWatch(this.o.stallMs, this.o.startupStallMs);
    const child = this.o.spawnIndexer();
    this.child = child;
    child.once("exit", (code, signal) => void this.onExit(child, code, signal));
  }

  private async onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    if (this.stopping || child !== this.child) return;
    this.child = null;
    await this.restart(`indexer exited unexpectedly (code ${code}, signal ${signal})`);
  }

  private async restart(reason: string, firstDelayMs = 500): Promise<void> {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    if (this.restarts.length >= this.o.maxRestartsPerMinute) {
      this.o.log({ msg: "indexer restarts exhausted", reason, restarts_last_minute: this.restarts.length });
      this.o.onGiveUp(`${reason}; ${this.restarts.length} restarts in the last minute, giving up`);
      return;
    }
    this.restarts.push(now);
    // 0.5 s, 1 s, 2 s, 4 s...: a crash loop slows down instead of spinning.
    const delayMs = this.restarts.length === 1 ? firstDelayMs : Math.min(500 * 2 ** (this.restarts.length - 1), 8_000);
    this.o.log({ msg: "restarting the indexer", reason, delay_ms: delayMs, restart: this.restarts.length });
    await new Promise((r) => setTimeout(r, delayMs));
    if (this.stopping) return;
    await this.o
      .beforeRestart?.(this.restarts.length, reason)
      .catch((err) => this.o.log({ msg: "before-restart step failed", error: (err as Error).message }));
    if (this.stopping) return;
    this.launch();
  }

  private async poll(): Promise<void> {
    const child = this.child;
    if (this.polling || this.stopping || !child || child.exitCode !== null || child.signalCode !== null) return;
    this.polling = true;
    try {
      const [status, head] = await Promise.all([readIndexerStatus(this.o.opsUrl), this.o.chainHead()]);
      if (child !== this.child || this.stopping) return;
      const stalled = this.watch.observe(Date.now(), status, head);
      if (stalled) await this.kill(child, stalled);
    } finally {
      this.polling = false;
    }
  }

  /** Stops a stalled indexer; its exit handler then restarts it (with the stall as the reason). */
  private async kill(child: ChildProcess, reason: string): Promise<void> {
    this.child = null;
    this.o.log({ msg: "stopping a stalled indexer", reason, pid: child.pid });
    // A stalled Ponder may not get through its own shutdown; its lock is released before the next.
    await terminate(child, 1_000);
    await this.restart(reason, 0);
  }

  /** Stops the indexer for good (a clean stop of the stack). */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.child) await terminate(this.child, graceMs);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(t);
}
