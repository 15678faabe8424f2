import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * `data` as `file`, written beside it first and then renamed over it: a process reading `file` sees the old whole file
 * or the new one, never half of one, and two processes writing at once each write their own part (named by pid). The
 * part is removed when the write fails; the error is the caller's.
 */
export function writeAside(file: string, data: string | Uint8Array): void {
  const part = `${file}.${process.pid}.part`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(part, data);
    renameSync(part, file);
  } catch (err) {
    rmSync(part, { force: true });
    throw err;
  }
}
