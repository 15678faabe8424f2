import { Writable } from "node:stream";
import { Hono } from "hono";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import type { AppEnv } from "./env.js";
import { notFound, onError } from "./errors.js";
import { requestLog } from "./requestLog.js";

/** An app behind the request log, its pino lines captured. */
function logged() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      lines.push(JSON.parse(chunk.toString()));
      cb();
    },
  });
  const app = new Hono<AppEnv>();
  app.use("*", requestLog(pino({ level: "info" }, sink)));
  app.get("/refused", () => {
    throw new Refusal("WALLET_NOT_BOUND", "bind a wallet first");
  });
  app.get("/broken", () => {
    throw new Error("boom");
  });
  app.notFound(notFound);
  app.onError(onError);
  return { app, lines };
}

describe("request_id in every error body (issue 30)", () => {
  it("is the id of the request's log line and of its X-Request-Id header, for refusals, 404s and 500s", async () => {
    const { app, lines } = logged();
    for (const path of ["/refused", "/nowhere", "/broken"]) {
      const r = await app.request(path);
      const body = (await r.json()) as { error: { code: string; message: string; request_id: string } };
      const line = lines.filter((l) => l.msg === "request").at(-1)!;
      expect([path, line.status]).toEqual([path, r.status]);
      expect(body.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.error.request_id).toBe(line.req_id);
      expect(body.error.request_id).toBe(r.headers.get("x-request-id"));
    }
    // Three requests, three ids.
    expect(new Set(lines.filter((l) => l.msg === "request").map((l) => l.req_id)).size).toBe(3);
  });

  it("keeps a sane X-Request-Id the caller sent, in the body, the header and the log", async () => {
    const { app, lines } = logged();
    const r = await app.request("/refused", { headers: { "x-request-id": "agent-7.run-42" } });
    const body = (await r.json()) as { error: Record<string, unknown> };
    expect(body.error).toEqual({
      code: "WALLET_NOT_BOUND",
      message: "bind a wallet first",
      request_id: "agent-7.run-42",
    });
    expect(r.headers.get("x-request-id")).toBe("agent-7.run-42");
    expect(lines.at(-1)).toMatchObject({ req_id: "agent-7.run-42", status: 403, code: "WALLET_NOT_BOUND" });
  });
});
