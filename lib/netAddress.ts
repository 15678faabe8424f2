import ipaddr from "ipaddr.js";

/**
 * An IP literal (IPv4 in any inet_aton form, or IPv6, brackets and zone allowed), parsed; null for anything else (host
 * names).
 */
function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const h = text.replace(/^\[|\]$/g, "");
  // Loose IPv4 forms too (127.1, 0x7f.0.0.1): inet_aton and so the resolver read them as addresses.
  if (ipaddr.IPv4.isValid(h)) return ipaddr.IPv4.parse(h);
  const [bare] = h.split("%") as [string];
  if (ipaddr.IPv6.isValid(bare)) {
    // ipaddr.js reads any dotted tail (::1.2.3.4, IPv4-compatible) as IPv4-mapped: WHATWG's
    // parser first turns the tail into hex, which it reads right.
    const v6 = ipaddr.IPv6.parse(bare.includes(".") ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
    // ::ffff:a.b.c.d is the IPv4 host a.b.c.d reached over a dual-stack socket.
    return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
  }
  return null;
}

/**
 * Who a client is for per-client limits: an IPv4 address as itself (IPv4-mapped, 6to4 and Teredo
 * IPv6 too), any other IPv6 address as its /64, the smallest block a single subscriber is routinely given (RFC 6177):
 * one host rotating addresses inside it is still one client. Anything else (no address, or a
 * label such as "hosted") is returned as it is.
 */
export function clientKeyOf(addr: string): string {
  const ip = parseIp(addr);
  if (!ip) return addr;
  if (ip.kind() === "ipv4") return ip.toString();
  const all = (ip as ipaddr.IPv6).parts;
  // Tunnels that carry the host's IPv4 address are that host: 6to4 (2002:V4ADDR::/48, whose 65,536
  // /64s one IPv4 address holds) and Teredo (2001:0::/32, the client's IPv4 inverted in the last 32 bits).
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]).toString();
  if (ip.range() === "6to4") return v4(all[1]!, all[2]!);
  if (ip.range() === "teredo") return v4(~all[6]! & 0xffff, ~all[7]! & 0xffff);
  const parts = all.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/**
 * The wider blocks a native IPv6 client key (`x::/64`) sits in, narrowest first: its /56 (what one
 * home line is routinely given, RFC 6177) and its /48 (one site). Per-client limits also count
 * per block, so a subscriber rotating through its own 256 or 65,536 /64s is still bounded.
 * Empty for anything else (an IPv4 address, a tunnel's IPv4, a label).
 */
export function clientPrefixesOf(clientKey: string): { bits: 56 | 48; key: string }[] {
  const m = /^(.*)\/64$/.exec(clientKey);
  if (!m || !ipaddr.IPv6.isValid(m[1]!)) return [];
  const parts = ipaddr.IPv6.parse(m[1]!).parts;
  const block = (bits: 56 | 48) => {
    const p = [parts[0]!, parts[1]!, parts[2]!, bits === 56 ? parts[3]! & 0xff00 : 0, 0, 0, 0, 0];
    return { bits, key: `${new ipaddr.IPv6(p).toString()}/${bits}` };
  };
  return [block(56), block(48)];
}

/** IPv6 global unicast (RFC 4291 2.4): 2000::/3. */
const GLOBAL_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

/**
 * Whether an IP literal is a global unicast address, as an allow-list: ipaddr.js's table of
 * special-purpose ranges (IANA registries) must call it plain `unicast`, and an IPv6 one must
 * also lie in 2000::/3. So private, loopback, link-local, CGNAT, 192.0.0.0/24, the documentation
 * and benchmarking ranges, IPv4-compatible IPv6, NAT64, 6to4, Teredo and ORCHID all fail, and
 * so does any range the table learns later. null when `host` is not an IP literal.
 */
export function isGlobalUnicast(host: string): boolean | null {
  const ip = parseIp(host);
  if (!ip) return null;
  if (ip.kind() === "ipv4") return ip.range() === "unicast";
  return ip.range() === "unicast" && (ip as ipaddr.IPv6).match(GLOBAL_V6);
}
