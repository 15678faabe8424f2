/**
 * Processes put ahead of the test files running beside them on the machine's two cores, for a test whose bound is the
 * stack's own (a recovery's time, a bystander's latency against its own): in production the stack has its CPUs to
 * itself. Linux keeps a nice value per thread, and setpriority on a pid reaches only its first thread, so every thread
 * of the process is moved (anvil's runtime, Node's thread pool); threads made later inherit it from their maker.
 */
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** The nice value the processes are given. */
const AHEAD = -10;

/** Each thread of `pid` (its ids in /proc); none where it is gone. */
const threadsOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
};

/**
 * Every thread of `pids` at nice -10; the returned function puts back each value it changed (threads gone since are
 * passed over). Null where this process may not raise a priority (not root): the caller says so in its log.
 */
export function putAhead(pids: readonly number[]): (() => void) | null {
  const was = new Map<number, number>();
  try {
    for (const tid of pids.flatMap(threadsOf)) {
      was.set(tid, getPriority(tid));
      setPriority(tid, AHEAD);
    }
  } catch {
    restore(was);
    return null;
  }
  return () => restore(was);
}

function restore(was: Map<number, number>) {
  for (const [tid, nice] of was) {
    try {
      setPriority(tid, nice);
    } catch {
      // the thread is gone
    }
  }
}
