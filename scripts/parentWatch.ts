/**
 * Runs inside the indexer's process when `npm start` spawned it (src/api/index.ts calls
 * `followParent()` first). Two jobs, both about living under scripts/start.ts:
 *
 * 1. The API's port. Ponder 0.16 binds `process.env.PORT` in preference to `--port`, so start.ts
 *    gives Ponder PORT = the ops port (its own /metrics, /status, /ready on 127.0.0.1) and passes
 *    the public port as PIT_API_PORT. Ponder has read its options by the time the API file is
 *    loaded, so PORT is set back to the public port here, before the API's loadConfig() runs.
 * 2. Dying with the parent. start.ts runs the indexer and anvil in their own process groups (so a
 *    terminal's Ctrl-C reaches start.ts alone, which stops them in order). If start.ts is killed
 *    with -9 nobody would stop them: this watch notices the parent is gone (our ppid changed), asks
 *    anvil to stop (SIGTERM: it writes its state on the way out) and exits.
 *
 * Outside `npm start` (tests, `ponder dev`) the variables are absent and this does nothing.
 */

import { alive } from "./pidFile.js";

const PARENT_ENV = "PIT_PARENT_PID";
const ANVIL_ENV = "PIT_ANVIL_PID";
const API_PORT_ENV = "PIT_API_PORT";

/** How often the parent is looked for: "within a few seconds" with negligible cost. */
const CHECK_MS = 500;

export function restorePublicPort(env: NodeJS.ProcessEnv = process.env): void {
  const apiPort = env[API_PORT_ENV];
  if (apiPort) env.PORT = apiPort;
}

/** Orphaned: start.ts is gone. Stop the chain cleanly (it writes its state), then ourselves. */
function onOrphaned(parentPid: number): void {
  const anvilPid = Number(process.env[ANVIL_ENV] ?? 0);
  console.error(
    JSON.stringify({
      level: 50,
      msg: "parent process is gone; stopping the indexer and the devnet",
      parentPid,
      anvilPid: anvilPid || null,
    }),
  );
  if (anvilPid && alive(anvilPid)) {
    try {
      process.kill(anvilPid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  // SIGTERM to ourselves lets Ponder release its lock and close its database; a hard exit
  // follows if that takes too long.
  setTimeout(() => process.exit(1), 5_000).unref();
  process.kill(process.pid, "SIGTERM");
}

let watching = false;

/** Start watching the parent named in PIT_PARENT_PID (once per process). */
export function watchParent(): void {
  const parentPid = Number(process.env[PARENT_ENV] ?? 0);
  if (!parentPid || watching) return;
  watching = true;
  const check = () => {
    // ppid changes to 1 (or a subreaper) when the parent dies; the parent may also be gone before
    // we got here, hence the comparison with the pid we were given.
    if (process.ppid !== parentPid || !alive(parentPid)) {
      clearInterval(timer);
      onOrphaned(parentPid);
    }
  };
  const timer = setInterval(check, CHECK_MS);
  timer.unref();
  check();
}

/** Everything the indexer's process does for start.ts; call before the API reads its config. */
export function followParent(): void {
  restorePublicPort();
  watchParent();
}
