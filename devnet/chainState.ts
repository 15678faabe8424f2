/**
 * The devnet's state file under `npm start` (DATA_DIR/devnet/chain.json). Anvil rewrites it in
 * place every second (--state-interval 1), so a kill -9 during a write can leave it cut short;
 * a complete copy is kept beside it and a cut file is repaired before anvil loads it.
 */
import { copyFileSync, existsSync, readFileSync, renameSync, statSync } from "node:fs";

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
 * Copies `state` to its .good copy when it changed and is complete. Run now and then while anvil
 * runs: if kill -9 lands while anvil writes the file, the next start falls back to this copy.
 */
export function keepGoodState(state: string, lastMtimeMs: number): number {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(state).mtimeMs;
  } catch {
    return lastMtimeMs;
  }
  if (mtimeMs === lastMtimeMs) return lastMtimeMs;
  let text: string;
  try {
    text = readFileSync(state, "utf8");
    JSON.parse(text);
  } catch {
    return lastMtimeMs; // read while anvil was writing it: try again next time
  }
  const good = goodStatePath(state);
  copyFileSync(state, `${good}.tmp`);
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
