import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIENT_CODES, PitError, type ClientCode, type ErrorCode, type ServerCode } from "@pit/sdk";
import { CATALOGUE } from "../../api/errors/catalogue.js";
import { ROOT } from "../../lib/root.js";

/**
 * The SDK's error codes (issue 30): a typed union of the server's catalogue, read from the
 * catalogue itself, and the codes the client raises, held here to SPEC's "Client-side errors".
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Checked by tsc (npm test's typecheck): the union is the catalogue's keys, no more, no fewer.
const serverCodesAreTheCatalogues: Same<ServerCode, keyof typeof CATALOGUE> = true;
const errorCodeIsBoth: Same<ErrorCode, ServerCode | ClientCode | `HTTP_${number}`> = true;

/** The codes of SPEC's "Client-side errors" table: one per row, and the fast-mode row's list. */
function specClientCodes(): string[] {
  const spec = readFileSync(join(ROOT, "docs", "SPEC.md"), "utf8");
  const table = spec.split("### Client-side errors")[1]!.split("\n## ")[0]!;
  return table.split("\n").flatMap((line) => {
    const [, first = "", meaning = ""] = line.split("|").map((c) => c.trim());
    if (/^[A-Z][A-Z0-9_]+$/.test(first)) return [first];
    return first.startsWith("fast mode reasons")
      ? [...meaning.matchAll(/\b[A-Z][A-Z0-9_]{2,}\b/g)].map((m) => m[0])
      : [];
  });
}

describe("the SDK's error codes", () => {
  it("name every client-side code of SPEC's table, as the server's code or the client's own", () => {
    expect([serverCodesAreTheCatalogues, errorCodeIsBoth]).toEqual([true, true]);
    const spec = specClientCodes();
    expect(spec).toEqual(expect.arrayContaining(["VERIFICATION_FAILED", "MARKS_DIFFER", "SIGNING_MISMATCH"]));
    const clientOnly = spec.filter((c) => !(c in CATALOGUE));
    // NO_ANSWER is the SDK's own (docs/sdk-openapi-mcp.md: an answer that never comes); SPEC's table does not name it.
    expect([...CLIENT_CODES].sort()).toEqual([...new Set([...clientOnly, "NO_ANSWER"])].sort());
  });

  it("keeps the client's codes apart from the server's, so a code says who raised it", () => {
    expect(CLIENT_CODES.filter((c) => c in CATALOGUE)).toEqual([]);
  });

  it("types a PitError's code: a catalogue code, a client code or HTTP_<status>", () => {
    const codes: ErrorCode[] = ["NO_ROUTE", "VERIFICATION_FAILED", "HTTP_502"];
    expect(codes.map((c) => new PitError(c, "m").code)).toEqual(codes);
    // @ts-expect-error a code neither side knows does not compile
    expect(new PitError("NOT_A_CODE", "m").code).toBe("NOT_A_CODE");
  });
});
