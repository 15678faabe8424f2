import { inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { packJson, unpackJson } from "./packedJson.js";

/** A standings-like body: repeated rows with numbers that differ, and characters of two to four bytes. */
const body = (rows: number) => ({
  rows: Array.from({ length: rows }, (_, i) => ({
    rank: i + 1,
    entry_id: `le_${i}`,
    label: `Agent ${i} é ✓ 🦊`,
    profit_usd: i % 7 === 0 ? null : Math.sin(i) * 1e3,
    eligibility: { rules: [{ rule: "CONFIRMED", status: "pass", reviewed: false }] },
  })),
  outcome: { pays: true, why: "ten clusters" },
});

describe("packed JSON", () => {
  it("deflates parts side by side into one raw stream that inflates at once to the same text", async () => {
    const v = body(3_000);
    const text = JSON.stringify(v);
    // Parts of 1,001 bytes: many cuts fall inside a character of two to four bytes.
    for (const part of [1_001, 64 * 1024, Buffer.byteLength(text), 10 * Buffer.byteLength(text)]) {
      const packed = await packJson(v, part);
      expect(inflateRawSync(packed).toString()).toBe(text);
      expect(await unpackJson(packed)).toEqual(JSON.parse(text));
    }
    expect((await packJson(v)).length).toBeLessThan(text.length / 5);
    expect(await unpackJson(await packJson({ a: 1 }))).toEqual({ a: 1 });
    expect(await unpackJson(await packJson("x"))).toBe("x");
  });

  it("refuses a value without JSON text, as JSON.stringify does", async () => {
    await expect(packJson(undefined)).rejects.toThrow(TypeError);
    await expect(packJson({ n: 1n })).rejects.toThrow(TypeError);
  });
});
