import type { ChildProcess } from "node:child_process";
import { terminate } from "./supervisor.js";

export type KeptChild = {
  /** The child running now (a restart replaces it). */
  current(): ChildProcess;
  /** Stops it for good (SIGTERM, then SIGKILL after 5 s); no restart follows. */
  stop(): Promise<void>;
};

/**
 * A child process of npm start kept running: one that exits on its own is started again after
 * 500 ms, at most `perMinute` times in a minute; past that `onGiveUp` is told why (something is
 * broken that a restart does not fix) and no further restart is made. Each restart is logged with
 * the exit that caused it.
 */
export function keepRunning(
  name: string,
  spawn: () => ChildProcess,
  o: { log(e: Record<string, unknown>): void; onGiveUp(reason: string): void; perMinute?: number },
): KeptChild {
  const perMinute = o.perMinute ?? 5;
  const restarts: number[] = [];
  let stopping = false;
  let child: ChildProcess;
  const launch = () => {
    const c = spawn();
    child = c;
    c.once("exit", (code, signal) => {
      if (stopping || child !== c) return;
      const now = Date.now();
      restarts.splice(0, restarts.length, ...restarts.filter((t) => now - t < 60_000), now);
      const reason = `the ${name} exited unexpectedly (code ${code}, signal ${signal})`;
      if (restarts.length > perMinute)
        return o.onGiveUp(`${reason}; ${restarts.length} restarts in the last minute, giving up`);
      o.log({ msg: `restarting the ${name}`, reason });
      setTimeout(() => !stopping && launch(), 500);
    });
  };
  launch();
  return {
    current: () => child,
    async stop() {
      stopping = true;
      await terminate(child, 5_000);
    },
  };
}
