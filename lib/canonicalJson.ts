/**
 * Canonical JSON: object keys sorted, no whitespace, arrays in order, only strings, finite
 * numbers, booleans and null (anything else throws rather than hash differently per runtime).
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v === "boolean" || typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("canonical JSON has no NaN or Infinity");
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`;
  }
  throw new Error(`canonical JSON cannot hold a ${typeof v}`);
}

/**
 * canonicalJson with every character from U+007F up written as \uXXXX (lower-case hex, UTF-16
 * units): the treasury's hashed form, equal byte for byte to Python's
 * json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True). DEL (U+007F) is
 * escaped too: Python does, and a helper stopping at U+0080 would hash differently.
 */
export function asciiCanonicalJson(v: unknown): string {
  return canonicalJson(v).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
