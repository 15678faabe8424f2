// Preload for bench/abConfig.ts: the server process's CPU time over a window the driver opens
// with SIGUSR2 and closes with SIGUSR1 (printed as `CPU <µs>` on stderr); a CPU profile of that
// window too when PROFOUT is set. SIGINT exits normally.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const session = new Session();
session.connect();
let base = process.cpuUsage();
process.on("SIGUSR2", async () => {
  base = process.cpuUsage();
  if (process.env.PROFOUT) await session.post("Profiler.enable").then(() => session.post("Profiler.start"));
});
process.on("SIGUSR1", async () => {
  const u = process.cpuUsage(base);
  console.error(`CPU ${u.user + u.system}`);
  if (!process.env.PROFOUT) return;
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(`${process.env.PROFOUT}.${process.pid}.cpuprofile`, JSON.stringify(profile));
});
process.on("SIGINT", () => process.exit(0));
