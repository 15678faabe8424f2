import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../lib/root.js";
import { specErrorStatuses } from "../../scripts/specErrors.js";
import { CATALOGUE, refusesTrade, statusOf } from "./catalogue.js";
import { Refusal } from "./refusal.js";

// SPEC.md is the contract; docs/SPEC.md is the copy this repo was built against (CI has only the
// repo), and the shared original, where it sits beside the checkout, must still equal it.
const sharedPath = process.env.SPEC_PATH ?? join(ROOT, "..", "shared", "SPEC.md");
const spec = readFileSync(join(ROOT, "docs", "SPEC.md"), "utf8");

it.skipIf(!existsSync(sharedPath))(`docs/SPEC.md is the shared SPEC.md (${sharedPath})`, () => {
  expect(readFileSync(sharedPath, "utf8") === spec, "SPEC.md changed: update docs/SPEC.md and the catalogue").toBe(
    true,
  );
});

describe("the catalogue against SPEC.md", () => {
  const fromSpec = specErrorStatuses(spec);

  it("holds every code of SPEC.md's error tables with exactly SPEC's statuses", () => {
    expect(fromSpec.size).toBeGreaterThan(150);
    for (const [code, statuses] of fromSpec) {
      const entry = (CATALOGUE as Record<string, { status: number; when?: Record<string, number> }>)[code];
      expect(entry, code).toBeDefined();
      const ours = [...new Set([entry!.status, ...Object.values(entry!.when ?? {})])].sort();
      expect(ours, code).toEqual(statuses);
    }
  });

  it(
    "has no code SPEC.md does not know, but its own INTERNAL, the co-signer's codes and the codes SPEC's text " +
      "refuses with (SPEC gives those no status)",
    () => {
      const table = spec.split("### Co-signer refusals")[1]!.split("\n### ")[0]!;
      const cosignerCodes = new Set(
        [...table.matchAll(/^\| ([A-Z_]+(?:, [A-Z_]+)*) \|/gm)].flatMap((m) => m[1]!.split(", ")),
      );
      // "A practice paper order between seasons is refused as SEASON_CLOSED with why".
      const refusedAs = new Set([...spec.matchAll(/is refused as ([A-Z_]+)/g)].map((m) => m[1]!));
      expect(refusedAs.has("SEASON_CLOSED")).toBe(true);
      const extra = Object.keys(CATALOGUE).filter((c) => !fromSpec.has(c) && c !== "INTERNAL");
      expect(extra.length).toBeGreaterThan(0);
      for (const c of extra) expect(cosignerCodes.has(c) || refusedAs.has(c), c).toBe(true);
    },
  );
});

describe("statusOf and Refusal", () => {
  it("answers a code's one status, and the context's where SPEC gives several", () => {
    expect(statusOf("NO_ROUTE")).toBe(422);
    expect(statusOf("BAD_REQUEST")).toBe(400);
    expect(statusOf("BAD_REQUEST", "too_large")).toBe(413);
    expect(statusOf("BAD_SIGNATURE")).toBe(401);
    expect(statusOf("BAD_SIGNATURE", "typed_data")).toBe(422);
    expect(statusOf("NO_SESSION", "hosted_agent")).toBe(409);
    // An unknown context falls back to the code's default, never to another code's status.
    expect(statusOf("NO_ROUTE", "too_large")).toBe(422);
  });

  it("keeps its cause, its extra fields and its retry hint through with()", () => {
    const cause = new Error("socket hang up");
    const r = new Refusal("SEQUENCER_UNREACHABLE", "no answer", { a: 1 }, { cause, retryAfterS: 2 });
    const r2 = r.with({ sent: ["0xab"] });
    expect(r.cause).toBe(cause);
    expect(r2.status).toBe(502);
    expect(r2.retryAfterS).toBe(2);
    expect(r2.body()).toEqual({ error: { code: "SEQUENCER_UNREACHABLE", message: "no answer", a: 1, sent: ["0xab"] } });
    expect(r2.cause).toBe(r);
  });
});

describe("which refusals are refused trades (kept in me/trades?refused=1)", () => {
  it(
    "is the catalogue's property: every trade refusal is 422 and every 422 refuses the trade, BAD_SIGNATURE only " +
      "for the plan's typed data",
    () => {
      const codes = Object.keys(CATALOGUE) as (keyof typeof CATALOGUE)[];
      const trade = codes.filter((c) => refusesTrade(c));
      expect(trade.length).toBeGreaterThan(50);
      expect(trade.filter((c) => statusOf(c) !== 422)).toEqual([]);
      expect(codes.filter((c) => statusOf(c) === 422 && !refusesTrade(c))).toEqual([]);
      expect([
        refusesTrade("BAD_SIGNATURE"),
        refusesTrade("BAD_SIGNATURE", "malformed"),
        refusesTrade("BAD_SIGNATURE", "typed_data"),
      ]).toEqual([false, false, true]);
      expect(new Refusal("SESSION_MAX_DAY", "x").refusesTrade).toBe(true);
      expect(new Refusal("RPC_UNAVAILABLE", "x").refusesTrade).toBe(false);
    },
  );
});
