import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the stand-in saw: each delivery with whether its Standard Webhooks signature held. */
export type Delivery = { id: string; timestamp: number; verified: boolean; body: any; path: string };
/** Its answer to one delivery: a JSON body (or raw text), a status, or a delay past the caller's timeout. */
export type Reply = { status?: number; json?: unknown; text?: string; delayMs?: number };

/**
 * A webhook brain stand-in speaking Standard Webhooks: it verifies webhook-signature (v1,
 * HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` under the secret's base64 bytes,
 * its own code, not the service's) against the secret registered for the path, refuses a bad one
 * with 401, and answers what the test scripted (default: no orders).
 */
export async function startWebhookStandIn(o: { toleranceS?: number; now?: () => number } = {}) {
  const secrets = new Map<string, string>();
  const scripts = new Map<string, (d: Delivery) => Reply>();
  const deliveries: Delivery[] = [];
  const toleranceS = o.toleranceS ?? 300;

  const verify = (secret: string, id: string, ts: string, body: string, header: string) => {
    const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
    const want = Buffer.from(createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64"));
    return header.split(" ").some((entry) => {
      const [version, sig] = entry.split(",", 2);
      if (version !== "v1" || !sig) return false;
      const got = Buffer.from(sig);
      return got.length === want.length && timingSafeEqual(got, want);
    });
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "/").split("?")[0]!;
    const id = String(req.headers["webhook-id"] ?? "");
    const ts = String(req.headers["webhook-timestamp"] ?? "");
    const secret = secrets.get(path);
    const fresh = Math.abs((o.now?.() ?? Date.now()) / 1000 - Number(ts)) <= toleranceS;
    const verified =
      !!secret && !!id && fresh && verify(secret, id, ts, raw, String(req.headers["webhook-signature"] ?? ""));
    let body: unknown = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    const d: Delivery = { id, timestamp: Number(ts), verified, body, path };
    deliveries.push(d);
    if (!verified) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "bad signature" }));
      return;
    }
    const reply = scripts.get(path)?.(d) ?? { json: { orders: [] } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    res
      .writeHead(reply.status ?? 200, { "content-type": "application/json" })
      .end(reply.text ?? JSON.stringify(reply.json ?? {}));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    deliveries,
    /** The secret the stand-in checks for deliveries to `path`. */
    secret: (path: string, secret: string) => void secrets.set(path, secret),
    script: (path: string, fn: (d: Delivery) => Reply) => void scripts.set(path, fn),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
