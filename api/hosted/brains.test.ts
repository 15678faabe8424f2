import { describe, expect, it } from "vitest";
import { privateHost, resolvesPrivate, webhookSignature, webhookVerifies } from "./brains.js";

describe("webhook brain helpers", () => {
  it("signs like the Standard Webhooks reference (v1, base64 HMAC-SHA256 of id.timestamp.body under the secret's bytes)", () => {
    // Vector from the Standard Webhooks spec's JavaScript library tests.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const sig = webhookSignature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(webhookVerifies(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}', `v1,bogus ${sig}`)).toBe(true);
    expect(webhookVerifies(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265331, '{"test": 2432232314}', sig)).toBe(false);
  });

  it("refuses loopback, private, link-local and unresolvable hosts", async () => {
    for (const h of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "[::1]", "localhost", "fd00::1", "::ffff:127.0.0.1", "0.0.0.0"]) expect(privateHost(h), h).toBe(true);
    for (const h of ["8.8.8.8", "172.32.0.1", "example.com"]) expect(privateHost(h), h).toBe(false);
    expect(await resolvesPrivate("localhost")).toBe(true);
    expect(await resolvesPrivate("no-such-host.invalid")).toBe(true);
    expect(await resolvesPrivate("1.1.1.1")).toBe(false);
  });
});
