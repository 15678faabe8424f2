/**
 * The load test's HTTP side: every actor talks to the balancer from a loopback address of its own
 * (127.0.0.2 and up: Linux routes all of 127/8 to lo), so the API counts each as its own client, as a
 * population on the internet would be, and every request is recorded (route, status, code, ms, when).
 */
import { Agent, request } from "node:http";

export type Sample = { t: number; route: string; status: number; code: string | null; ms: number };

/** All samples of one run, times relative to its start. */
export class Recorder {
  readonly samples: Sample[] = [];
  constructor(readonly t0 = Date.now()) {}
  add(route: string, status: number, code: string | null, ms: number, at = Date.now()): void {
    this.samples.push({ t: at - this.t0, route, status, code, ms });
  }
}

export type Answer = { status: number; json: any };
export type Client = {
  call(method: "GET" | "POST", path: string, route: string, body?: unknown, key?: string): Promise<Answer>;
  close(): void;
};

/** The nth actor's loopback address: 127.1.0.2, 127.1.0.3, ... (never 127.0.0.1, the balancer's own peer). */
export function loopbackOf(n: number): string {
  return `127.${1 + Math.floor(n / 250)}.0.${(n % 250) + 2}`;
}

const TIMEOUT_MS = 30_000;

export function clientFor(baseUrl: string, localAddress: string, rec: Recorder): Client {
  // Idle sockets are dropped after 4 s, before the server's 5-s keep-alive ends them: a request sent on a socket
  // the server is closing at that moment would be lost in the race (as undici's 4-s default avoids).
  const agent = new Agent({ keepAlive: true, maxSockets: 4, timeout: 4_000, localAddress } as ConstructorParameters<
    typeof Agent
  >[0]);
  const base = new URL(baseUrl);
  const call: Client["call"] = (method, path, route, body, key) =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const done = (status: number, json: any) => {
        const code = status >= 400 || status === 0 ? (json?.error?.code ?? null) : null;
        rec.add(route, status, code, performance.now() - t0);
        resolve({ status, json });
      };
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `/api/v1${path}`,
          timeout: TIMEOUT_MS,
          headers: {
            host: base.host,
            ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
            ...(key ? { authorization: `Bearer ${key}` } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            let json: any = null;
            try {
              json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
              json = null;
            }
            done(res.statusCode ?? 0, json);
          });
          res.on("error", () => done(0, { error: { code: "CONNECTION" } }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (err) => done(0, { error: { code: /timeout/.test(err.message) ? "TIMEOUT" : "CONNECTION" } }));
      if (payload) req.write(payload);
      req.end();
    });
  return { call, close: () => agent.destroy() };
}
