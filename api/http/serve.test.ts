import { connect, type Socket } from "node:net";
import type { Server } from "node:http";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { blockListOf, isTrusted, PER_ADDRESS_CONNECTIONS, serveApp } from "./serve.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

const app = new Hono().get("/", (c) => c.json({ ok: true }));
const port = () => (server!.address() as { port: number }).port;

/** Raw bytes in, the raw answer out (what Node itself would have answered). */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port(), "127.0.0.1", () => s.write(bytes));
    let out = "";
    s.on("data", (d) => (out += d));
    s.on("close", () => resolve(out));
    s.on("error", reject);
  });
}
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

describe("serveApp", () => {
  it(
    "answers what Node cannot parse in our JSON error shape: 400 for a broken request line, 431 for oversized " +
      "headers",
    async () => {
      server = await serveApp(app, { port: 0, hostname: "127.0.0.1" });
      const broken = await raw("NOT HTTP AT ALL\r\n\r\n");
      expect(broken).toMatch(/^HTTP\/1\.1 400 /);
      expect(broken).toMatch(/content-type: application\/json/i);
      expect(broken).toMatch(/cache-control: no-store/i);
      expect(bodyOf(broken).error.code).toBe("BAD_REQUEST");
      const huge = await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`);
      expect(huge).toMatch(/^HTTP\/1\.1 431 /);
      expect(bodyOf(huge).error).toMatchObject({ code: "BAD_REQUEST", message: "request headers too large" });
    },
  );

  it(
    "answers a request no URL can be made of (a Host with userinfo, OPTIONS *) in the JSON shape, not a bare " + "400",
    async () => {
      server = await serveApp(app, { port: 0, hostname: "127.0.0.1" });
      for (const bytes of [
        "GET / HTTP/1.1\r\nHost: localhost:1@evil.example\r\nConnection: close\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      ]) {
        const answer = await raw(bytes);
        expect(answer, bytes).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toMatch(/content-type: application\/json/i);
        expect(bodyOf(answer).error).toMatchObject({
          code: "BAD_REQUEST",
          message: expect.stringMatching(/^malformed/),
        });
      }
      // The app itself is untouched.
      expect(await raw("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")).toContain('{"ok":true}');
    },
  );

  it("closes one peer's sockets past its share, but not a trusted proxy's", async () => {
    // Opens n sockets at once and counts those the server closes: until `expected` have closed
    // (a loaded machine takes its time), or for 300 ms when none should.
    const open = async (n: number, expected: number) => {
      const sockets: Socket[] = [];
      let closed = 0;
      await Promise.all(
        Array.from(
          { length: n },
          () =>
            new Promise<void>((r) => {
              const s = connect(port(), "127.0.0.1", () => r());
              s.on("close", () => closed++);
              s.on("error", () => r());
              sockets.push(s);
            }),
        ),
      );
      const deadline = Date.now() + (expected > 0 ? 10_000 : 300);
      while (Date.now() < deadline && (expected === 0 || closed < expected))
        await new Promise((r) => setTimeout(r, 20));
      if (expected > 0) await new Promise((r) => setTimeout(r, 100)); // none beyond the share closes late
      for (const s of sockets) s.destroy();
      return closed;
    };
    server = await serveApp(app, { port: 0, hostname: "127.0.0.1", trustedProxies: [] });
    expect(await open(PER_ADDRESS_CONNECTIONS + 20, 20)).toBe(20);
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
    server = await serveApp(app, { port: 0, hostname: "127.0.0.1", trustedProxies: ["127.0.0.0/8"] });
    expect(await open(PER_ADDRESS_CONNECTIONS + 20, 0)).toBe(0);
  });

  it("matches trusted proxies by address and CIDR, IPv4-mapped IPv6 as IPv4", () => {
    const list = blockListOf(["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8"]);
    expect(isTrusted(list, "10.2.3.4")).toBe(true);
    expect(isTrusted(list, "::ffff:10.2.3.4")).toBe(true);
    expect(isTrusted(list, "192.168.1.7")).toBe(true);
    expect(isTrusted(list, "192.168.1.8")).toBe(false);
    expect(isTrusted(list, "::1")).toBe(true);
    expect(isTrusted(list, "fd12::5")).toBe(true);
    expect(isTrusted(list, "2001:db8::1")).toBe(false);
    expect(isTrusted(list, "")).toBe(false);
  });
});
