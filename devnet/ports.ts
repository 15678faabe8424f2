import { createServer } from "node:net";

/**
 * Ports for the processes we start (anvil, the indexer, the API) come from below the kernel's
 * ephemeral range (Linux 32768-60999). A port the kernel hands out for `listen(0)` is closed again
 * before our child binds it, and in that gap any outgoing connection may take it as its own local
 * port: the child then fails with EADDRINUSE (seen in CI). Below 32768 only explicit listeners bind,
 * and each vitest worker draws from its own block, so two workers never race for one port.
 *
 * Within a block, the worker draws from the lower half and the processes it starts (npm start's script drawing
 * its signing services' ports) from the upper half: a test that kills a stack and starts it again on the same
 * ports leaves them free for a few seconds, and the new start's script, drawing its own, once took the API's port
 * in that gap (EADDRINUSE at the restart, seen in CI).
 */
const LOW = 20_000;
const BLOCK = 2_500;
const BLOCKS = 5;
const HALF = BLOCK / 2;

let next = -1;

/** True in a vitest worker itself (its own global), false in a process it started (which inherits its pool id). */
const inTestWorker = (): boolean => "__vitest_worker__" in globalThis;

function blockStart(): number {
  const pool = Number(process.env.VITEST_POOL_ID ?? 0);
  const start = LOW + ((Number.isInteger(pool) && pool > 0 ? pool : 0) % BLOCKS) * BLOCK;
  return start + (process.env.VITEST_POOL_ID !== undefined && !inTestWorker() ? HALF : 0);
}

/** True when nothing listens on `port` on any address (the wildcard bind clashes with every one). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "0.0.0.0", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port nothing listens on, from this process's block; never the same one twice in a process. */
export async function freePort(): Promise<number> {
  const start = blockStart();
  // A random start in the block keeps a worker's children (which share its pool id) apart from it.
  if (next < 0) next = Math.floor(Math.random() * HALF);
  for (let tries = 0; tries < HALF; tries++) {
    const port = start + (next++ % HALF);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${start}-${start + HALF - 1}`);
}
