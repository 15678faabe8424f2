import { describe, expect, it } from "vitest";
import { privateHost, resolvesPrivate, webhookSignature, webhookVerifies } from "./brains.js";

describe("webhook brain helpers", () => {
  it("signs like the Standard Webhooks reference (v1, base64 HMAC-SHA256 of id.timestamp.body)", () => {
    // Vector from the Standard Webhooks spec's JavaScript library tests.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const sig = webhookSignature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(
      webhookVerifies(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}', `v1,bogus ${sig}`),
    ).toBe(true);
    expect(webhookVerifies(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265331, '{"test": 2432232314}', sig)).toBe(
      false,
    );
  });

  it("refuses loopback, private, link-local and unresolvable hosts", async () => {
    for (const h of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "[::1]",
      "localhost",
      "fd00::1",
      "::ffff:127.0.0.1",
      "0.0.0.0",
    ])
      expect(privateHost(h), h).toBe(true);
    for (const h of ["8.8.8.8", "172.32.0.1", "example.com"]) expect(privateHost(h), h).toBe(false);
    expect(await resolvesPrivate("localhost")).toBe(true);
    expect(await resolvesPrivate("[::1.2.3.4]")).toBe(true);
    expect(await resolvesPrivate("no-such-host.invalid")).toBe(true);
    expect(await resolvesPrivate("1.1.1.1")).toBe(false);
  });
});

describe("webhook brain: which hosts are private", () => {
  it("allows only global unicast IP literals: special-purpose ranges of both families are refused", () => {
    const refused = [
      "0.1.2.3",
      "100.64.0.1",
      "127.1",
      "0x7f.0.0.1",
      "169.254.169.254",
      "192.0.0.8",
      "192.0.0.170",
      "192.0.2.10",
      "192.88.99.1",
      "198.18.0.1",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "[::]",
      "[::1.2.3.4]",
      "[::8.8.8.8]",
      "[::ffff:10.0.0.1]",
      "[::ffff:169.254.169.254]",
      "[64:ff9b::a00:1]",
      "[64:ff9b:1::1]",
      "[100::1]",
      "[2001::1]",
      "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
      "[2001:2::1]",
      "[2001:10::1]",
      "[2001:20::1]",
      "[2001:db8::1]",
      "[2002:a00:1::1]",
      "[2002:c0a8:101::1]",
      "[3fff::1]",
      "[5f00::1]",
      "[fc00::1]",
      "[fe80::1%25eth0]",
      "[fec0::1]",
      "[ff02::1]",
    ];
    for (const h of refused) expect(privateHost(h), h).toBe(true);
    for (const h of [
      "1.1.1.1",
      "8.8.8.8",
      "172.32.0.1",
      "[2606:4700:4700::1111]",
      "[2a00:1450:4001:80b::200e]",
      "[::ffff:8.8.8.8]",
      "hooks.example.com",
    ])
      expect(privateHost(h), h).toBe(false);
  });
});

describe("webhook delivery off the devnet", () => {
  it("checks the address the socket connects to: a loopback name is refused, nothing reaches the server", async () => {
    const { createServer } = await import("node:http");
    const { webhookBrain } = await import("./brains.js");
    let hits = 0;
    const server = createServer((_q, r) => (hits++, r.end('{"orders":[]}'))).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as { port: number }).port;
    const agent = {
      id: "ha_t",
      params: { url: `http://brain.example.com:${port}/hook` },
      webhookSecret: `whsec_${Buffer.alloc(32, 1).toString("base64")}`,
    } as any;
    const state = { tick: 1, at: Date.now() } as any;
    // A public-looking name whose DNS (a rebinding server here) answers loopback at connect time.
    const rebinding = ((_h: string, o: { all?: boolean }, cb: (e: Error | null, a: unknown, f?: number) => void) =>
      o.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4)) as any;
    const refused = await webhookBrain(agent, state, { allowPrivate: false, timeoutMs: 2_000, lookup: rebinding });
    expect(refused).toMatchObject({ refused: "PARTNER_REJECTED" });
    expect(hits).toBe(0);
    // On the devnet the stand-in on loopback is allowed.
    expect(await webhookBrain(agent, state, { allowPrivate: true, timeoutMs: 2_000, lookup: rebinding })).toEqual({
      orders: [],
    });
    expect(hits).toBe(1);
    server.close();
  });
});
