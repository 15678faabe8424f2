import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../devnet/ports.js";

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
