import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../devnet/ports.js";
import { ROOT } from "../lib/root.js";

function listen(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(null));
    srv.listen(port, "127.0.0.1", () => resolve(srv));
  });
}

describe("freePort", () => {
  it("hands out distinct ports below the kernel's ephemeral range", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) expect(p >= 20_000 && p < 32_768).toBe(true);
  });

  it(
    "gives a worker's ports and those of the processes it starts from two halves of its block: a child never " +
      "draws a port the worker drew",
    async () => {
      const mine = await Promise.all(Array.from({ length: 30 }, () => freePort()));
      const script =
        `import { freePort } from "./devnet/ports.ts"; const p = []; for (let i = 0; i < 30; i++) ` +
        "p.push(await freePort()); console.log(JSON.stringify(p));";
      const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: ROOT,
        env: process.env,
      }).toString();
      const theirs: number[] = JSON.parse(out);
      expect(theirs).toHaveLength(30);
      // The worker's block (vitest's pool id picks it): its lower half for the worker, its upper half for the child.
      const pool = Number(process.env.VITEST_POOL_ID ?? 0);
      const base = 20_000 + ((pool > 0 ? pool : 0) % 5) * 2_500;
      for (const p of mine) expect(p >= base && p < base + 1_250, `worker port ${p}`).toBe(true);
      for (const p of theirs) expect(p >= base + 1_250 && p < base + 2_500, `child port ${p}`).toBe(true);
    },
  );

  it("steps past ports someone else listens on (on any address)", async () => {
    const p = await freePort();
    // The next ten ports it would try are taken by another listener on the loopback address only.
    const held = (await Promise.all(Array.from({ length: 10 }, (_, i) => listen(p + 1 + i)))).filter(
      (s): s is Server => s !== null,
    );
    const heldPorts = held.map((s) => (s.address() as { port: number }).port);
    const got = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    for (const port of heldPorts) expect(got).not.toContain(port);
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  });
});
