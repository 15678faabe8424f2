/**
 * The devnet's state file under `npm start` (DATA_DIR/devnet/chain.json). Anvil rewrites it in
 * place every second (--state-interval 1), so a kill -9 during a write can leave it cut short;
 * a complete copy is kept beside it and a cut file is repaired before anvil loads it.
 */
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, readSync, renameSync, statSync } from "node:fs";

/** A state file anvil can load: complete JSON (anvil writes it in place, so kill -9 can cut it). */
export function isCompleteState(file: string): boolean {
  try {
    JSON.parse(readFileSync(file, "utf8"));
    return true;
  } catch {
    return false;
  }
}

/** `${state}.good`: the last copy of the state file known to be complete. */
export function goodStatePath(state: string): string {
  return `${state}.good`;
}

/**
 * How anvil's state file ends. anvil writes it truncated first, so a write cut by kill -9 leaves a
 * prefix, and no proper prefix can end with the top-level key that closes the whole object.
 */
const STATE_TRAILER = /"historical_states":null\}\s*$/;

/** The file's last `n` bytes as text. */
function tailOf(file: string, n: number): string {
  const fd = openSync(file, "r");
  try {
    const size = statSync(file).size;
    const buf = Buffer.alloc(Math.min(n, size));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies `state` to its .good copy when it changed and is complete. Run every few seconds while anvil
 * runs: if kill -9 lands while anvil writes the file, the next start falls back to this copy. Complete
 * is judged by the file's last bytes (anvil's own trailer, checked against the pinned anvil by
 * test/devnet/chainState.test.ts), never by parsing it: the file grows with every block and
 * transaction, and parsing tens of megabytes every 5 s in the start process, which is also
 * `npm run stack`'s balancer, took its heap to 2.5 GB and held every request behind it for seconds
 * in a 10-minute load run (bench/RESULTS.md "Load test"). A file caught mid-write, or copied while
 * anvil rewrote it, is not kept: the next pass tries again. repairState, once at start, parses.
 */
export function keepGoodState(state: string, lastMtimeMs: number): number {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(state).mtimeMs;
    if (mtimeMs === lastMtimeMs || !STATE_TRAILER.test(tailOf(state, 256))) return lastMtimeMs;
  } catch {
    return lastMtimeMs;
  }
  const good = goodStatePath(state);
  copyFileSync(state, `${good}.tmp`);
  if (!STATE_TRAILER.test(tailOf(`${good}.tmp`, 256))) return lastMtimeMs;
  renameSync(`${good}.tmp`, good);
  return mtimeMs;
}

/**
 * Makes `state` loadable before anvil starts: a cut file is replaced by its last complete copy,
 * or by `pristine` when there is none. Returns what was done, for the log (null: nothing).
 */
export function repairState(state: string, pristine: string): string | null {
  if (!existsSync(state)) {
    copyFileSync(pristine, state);
    return null;
  }
  if (isCompleteState(state)) return null;
  const good = goodStatePath(state);
  if (existsSync(good) && isCompleteState(good)) {
    copyFileSync(good, state);
    return `chain state ${state} was cut by a kill during a write; continuing from its last complete copy`;
  }
  copyFileSync(pristine, state);
  return (
    `chain state ${state} was cut by a kill during a write and has no complete copy; starting from the pristine ` +
    `snapshot`
  );
}
