/**
 * Reads the status of every error code from SPEC.md's error tables ("## Errors" up to "## Limits"):
 * rows `| CODE[, CODE] | status[, status] | cause |`. Where a row names as many codes as statuses
 * they pair up in order; otherwise every code of the row may answer every status. Tables without
 * statuses (co-signer refusals, client-side errors) are skipped.
 */
export function specErrorStatuses(spec: string): Map<string, number[]> {
  const start = spec.indexOf("## Errors");
  const end = spec.indexOf("## Limits", start);
  if (start < 0 || end < 0) throw new Error("SPEC.md has no ## Errors ... ## Limits part");
  const out = new Map<string, number[]>();
  for (const line of spec.slice(start, end).split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || !/^[A-Z][A-Z0-9_]+(, [A-Z][A-Z0-9_]+)*$/.test(cells[1]!)) continue;
    const statuses = [...cells[2]!.matchAll(/\b([1-5]\d\d)\b/g)].map((m) => Number(m[1]));
    if (statuses.length === 0) continue;
    const codes = cells[1]!.split(", ");
    codes.forEach((code, i) => {
      const mine = codes.length === statuses.length && statuses.length > 1 ? [statuses[i]!] : statuses;
      out.set(code, [...new Set([...(out.get(code) ?? []), ...mine])].sort());
    });
  }
  return out;
}
