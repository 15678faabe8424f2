import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closeMetrics, methodLabel, registry, ruleLabel, serveMetrics } from "./metrics.js";
import { ROOT } from "./root.js";

describe("the metrics listener", () => {
  it("answers GET /metrics on 127.0.0.1 only, in Prometheus' text format, and nothing else", async () => {
    const server = await serveMetrics({ port: 0, name: "test" });
    const address = server!.address() as { address: string; port: number };
    try {
      expect(address.address).toBe("127.0.0.1");
      const base = `http://127.0.0.1:${address.port}`;
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(text).toContain("# TYPE pit_refusals_total counter");
      // The process's own CPU and memory, for the operator's per-process view.
      expect(text).toContain("process_resident_memory_bytes");
      expect((await fetch(`${base}/metrics?x=1`)).status).toBe(200);
      for (const [method, path] of [
        ["GET", "/"],
        ["GET", "/status"],
        ["POST", "/metrics"],
      ] as const)
        expect((await fetch(`${base}${path}`, { method })).status, `${method} ${path}`).toBe(404);
    } finally {
      await closeMetrics(server);
    }
  });

  it("a port that cannot be bound is logged and answers null: the process goes on without metrics", async () => {
    const taken = createServer();
    const port = await new Promise<number>((r) => taken.listen(0, "127.0.0.1", () => r((taken.address() as any).port)));
    const errors: string[] = [];
    try {
      const server = await serveMetrics({
        port,
        name: "test",
        log: { info: () => {}, error: (_o, msg) => void errors.push(msg) },
      });
      expect(server).toBeNull();
      expect(errors).toEqual(["test: metrics not served (its port could not be bound)"]);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});

describe("labels", () => {
  it("take a bounded set of values: known methods, upper-case rule and code names, OTHER for the rest", () => {
    expect(["GET", "POST", "HEAD"].map(methodLabel)).toEqual(["GET", "POST", "HEAD"]);
    expect(methodLabel("PROPFIND-0x1234")).toBe("OTHER");
    expect(ruleLabel("SESSION_MAX_TRADE")).toBe("SESSION_MAX_TRADE");
    for (const bad of ["0xabc", "session max", "A".repeat(49), 7, undefined]) expect(ruleLabel(bad)).toBe("OTHER");
  });
});

describe("docs/running.md", () => {
  it("lists every family the registry declares", async () => {
    const doc = readFileSync(join(ROOT, "docs", "running.md"), "utf8");
    const ours = (await registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("pit_"));
    expect(ours.length).toBeGreaterThanOrEqual(12);
    expect(ours.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
