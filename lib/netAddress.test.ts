import { describe, expect, it } from "vitest";
import { clientKeyOf, clientPrefixesOf } from "./netAddress.js";

describe("clientKeyOf", () => {
  it("keys IPv4 as itself, IPv6 by its /64, and tunnels by the IPv4 host they carry", () => {
    expect(clientKeyOf("203.0.113.5")).toBe("203.0.113.5");
    expect(clientKeyOf("::ffff:203.0.113.5")).toBe("203.0.113.5");
    expect(clientKeyOf("2001:db8:aa:1:dead:beef::1")).toBe("2001:db8:aa:1::/64");
    // 6to4: 2002:cb00:714d::/48 is 203.0.113.77, whatever its subnet and interface.
    expect(clientKeyOf("2002:cb00:714d:ffff::1")).toBe("203.0.113.77");
    // Teredo (RFC 4380): the client's IPv4 is the last 32 bits inverted, whatever the server, flags and port.
    expect(clientKeyOf("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toBe("192.0.2.45");
    expect(clientKeyOf("2001:0:aaaa:bbbb:0:1234:3fff:fdd2")).toBe("192.0.2.45");
    expect(clientKeyOf("hosted")).toBe("hosted");
  });
});

describe("clientPrefixesOf", () => {
  it("gives a native IPv6 client's /56 and /48, and nothing for IPv4 or tunnel keys", () => {
    expect(clientPrefixesOf(clientKeyOf("2001:db8:77:1a5::1"))).toEqual([
      { bits: 56, key: "2001:db8:77:100::/56" },
      { bits: 48, key: "2001:db8:77::/48" },
    ]);
    expect(clientPrefixesOf(clientKeyOf("203.0.113.5"))).toEqual([]);
    expect(clientPrefixesOf(clientKeyOf("2002:cb00:714d:1::1"))).toEqual([]);
    expect(clientPrefixesOf("hosted")).toEqual([]);
  });
});
