import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The shape of the source (issue 27): no line wider than the formatter's 120 columns anywhere
 * (Biome wraps code but never a comment or a string), and no function longer than 80 lines outside
 * devnet tooling, tests and benchmarks (a factory that returns an object of methods is one function).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WIDTH = 120;
const FUNCTION_LINES = 80;
/** Where a long function is allowed: tooling that builds fixtures, tests and benchmarks. */
const TOOLING = /^(devnet|test|bench|scripts|sdk\/test)\/|\.test\.ts$/;

const tracked = (): string[] =>
  execFileSync("git", ["ls-files", "*.ts", "*.mjs", "*.mts"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f && !f.startsWith("generated/") && !f.includes("/generated/"));

/**
 * A line that is one human-readable ABI signature: viem's parseAbi reads each as a literal type, so
 * it cannot be split with + (the typed ABI would be lost); it may be as wide as the signature.
 */
const ABI_SIGNATURE = /^\s*["`](function|event|error|constructor|struct|receive|fallback)\b[^"`]*["`],?$/;

/** Lines of `text` wider than WIDTH, as `file:line`. */
function wideLines(file: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((l, i) => (l.length > WIDTH && !ABI_SIGNATURE.test(l) ? [`${file}:${i + 1} (${l.length})`] : []));
}

/** Functions of `text` longer than FUNCTION_LINES lines, as `file:line name (n lines)`. */
function longFunctions(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const nameOf = (n: ts.Node): string => {
    const named = (n as { name?: ts.Node }).name;
    if (named) return named.getText(src);
    const p = n.parent;
    if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p))) return p.name.getText(src);
    return "<anonymous>";
  };
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const first = src.getLineAndCharacterOfPosition(n.getStart(src)).line;
      const last = src.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (last - first + 1 > FUNCTION_LINES) out.push(`${file}:${first + 1} ${nameOf(n)} (${last - first + 1} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

describe("the shape of the source", () => {
  const files = tracked().map((f) => ({ f, text: readFileSync(resolve(ROOT, f), "utf8") }));

  it(`has no line over ${WIDTH} columns`, () => {
    expect(files.flatMap(({ f, text }) => wideLines(f, text))).toEqual([]);
  });

  it(`has no function over ${FUNCTION_LINES} lines outside devnet tooling, tests and benchmarks`, () => {
    const src = files.filter(({ f }) => f.endsWith(".ts") && !TOOLING.test(f));
    expect(src.flatMap(({ f, text }) => longFunctions(f, text))).toEqual([]);
  });

  it("finds what it looks for (made-up files)", () => {
    expect(wideLines("a.ts", `const a = 1;\n// ${"x".repeat(WIDTH)}\n`)).toEqual([`a.ts:2 (${WIDTH + 3})`]);
    // An ABI signature alone on its line is allowed; the same text in any other line is not.
    const signature = `"function f(${"uint256 a, ".repeat(12)}uint256 b)"`;
    expect(wideLines("d.ts", `  ${signature},\n  const s = ${signature};\n`)).toEqual([
      `d.ts:2 (${signature.length + 13})`,
    ]);
    const body = Array.from({ length: FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join("\n");
    expect(longFunctions("b.ts", `export function long() {\n${body}\n}\nconst short = () => 1;\n`)).toEqual([
      `b.ts:1 long (${FUNCTION_LINES + 2} lines)`,
    ]);
    expect(longFunctions("c.ts", `const make = () => ({\n${body}\n});\n`)).toEqual([
      `c.ts:1 make (${FUNCTION_LINES + 2} lines)`,
    ]);
  });
});
