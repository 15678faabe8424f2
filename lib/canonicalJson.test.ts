import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { asciiCanonicalJson, canonicalJson } from "./canonicalJson.js";

// Made by Python's json.dumps (see the file's _made_by), not by this code.
const { vectors } = JSON.parse(readFileSync(new URL("./canonicalJson.vectors.json", import.meta.url), "utf8")) as {
  vectors: { input: unknown; canonical: string; sha256: string }[];
};

describe("asciiCanonicalJson", () => {
  it("matches Python's sorted, compact, ensure_ascii JSON and its SHA-256 on every vector", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(5);
    for (const v of vectors) {
      const out = asciiCanonicalJson(v.input);
      expect(out).toBe(v.canonical);
      expect(createHash("sha256").update(out).digest("hex")).toBe(v.sha256);
      expect(/^[\x20-\x7e]*$/.test(out)).toBe(true);
    }
  });

  it("escapes DEL, which plain canonical JSON leaves raw", () => {
    expect(canonicalJson({ s: "a\u007fb" })).toBe('{"s":"a\u007fb"}');
    expect(asciiCanonicalJson({ s: "a\u007fb" })).toBe('{"s":"a\\u007fb"}');
  });

  it("refuses values that have no single JSON form", () => {
    expect(() => asciiCanonicalJson({ x: Number.NaN })).toThrow();
    expect(() => asciiCanonicalJson({ x: 1n })).toThrow();
  });
});
