import { Hono } from "hono";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import { httpRequestDuration, refusals } from "../../lib/metrics.js";
import type { AppEnv } from "./env.js";
import { notFound, onError } from "./errors.js";
import { requestLog } from "./requestLog.js";

const count = async (labels: Record<string, string>) =>
  (await httpRequestDuration.get()).values.find(
    (v) =>
      v.metricName === "pit_http_request_duration_seconds_count" &&
      Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  )?.value ?? 0;
const refused = async (code: string) => (await refusals.get()).values.find((v) => v.labels.code === code)?.value ?? 0;

describe("the request log's timing (pit_http_request_duration_seconds)", () => {
  it("labels a request by its route's declared pattern and status, never the raw path; refusals by code", async () => {
    const app = new Hono<AppEnv>();
    app.use("*", requestLog(pino({ level: "silent" })));
    const v1 = new Hono<AppEnv>();
    v1.get("/tokens/:address", (c) => c.json({ ok: true }));
    v1.get("/refuse/:id", () => {
      throw new Refusal("FORBIDDEN", "no");
    });
    app.route("/api/v1", v1);
    app.all("*", notFound);
    app.onError(onError);

    const route = "/api/v1/tokens/:address";
    const before = await count({ route, status: "200", method: "GET" });
    const forbidden = await refused("FORBIDDEN");
    const unknown = await count({ route: "/*", status: "404", method: "OTHER" });
    for (const a of ["0x00000000000000000000000000000000000000aa", "0x00000000000000000000000000000000000000bb"])
      expect((await app.request(`/api/v1/tokens/${a}`)).status).toBe(200);
    expect((await app.request("/api/v1/refuse/123")).status).toBe(403);
    expect((await app.request("/no/such/0xabc", { method: "PROPFIND" })).status).toBe(404);

    expect((await count({ route, status: "200", method: "GET" })) - before).toBe(2);
    expect(await count({ route: "/api/v1/refuse/:id", status: "403" })).toBeGreaterThan(0);
    expect((await refused("FORBIDDEN")) - forbidden).toBe(1);
    expect((await count({ route: "/*", status: "404", method: "OTHER" })) - unknown).toBe(1);
    const series = (await httpRequestDuration.get()).values.map((v) => JSON.stringify(v.labels));
    expect(series.filter((l) => /0x|123/.test(l))).toEqual([]);
  });

  it("logs a call made in process (MCP's tools) marked via, and counts it only in the outer request", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const app = new Hono<AppEnv>();
    app.use("*", requestLog(logger));
    app.get("/api/v1/inner/:id", (c) => c.json({ ok: true }));
    const route = "/api/v1/inner/:id";
    const before = await count({ route });
    expect((await app.request("/api/v1/inner/1", {}, { via: "mcp" })).status).toBe(200);
    expect(await count({ route })).toBe(before);
    expect(lines.at(-1)).toMatchObject({ route, status: 200, via: "mcp" });
    expect((await app.request("/api/v1/inner/2")).status).toBe(200);
    expect(await count({ route })).toBe(before + 1);
    expect(lines.at(-1)!.via).toBeUndefined();
  });
});
