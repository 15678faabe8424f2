import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../lib/root.js";
import { PONDER_BIN, buildApiBundle, buildIndexerBundle } from "../scripts/apiBundle.js";

const run = promisify(execFile);

describe("the API bundle Ponder mounts", () => {
  it("is one module named by its bytes, built once per run and handed to every worker", async () => {
    const file = await buildApiBundle();
    expect(file).toMatch(/node_modules\/\.cache\/pit-api\/embedded-[0-9a-f]{16}\.mjs$/);
    // The same sources give the same file (a second build writes nothing new).
    expect(await buildApiBundle()).toBe(file);
    // test/globalSetup.ts built one before the workers started (their indexers load it): the same file unless a
    // source changed since.
    expect(process.env.PIT_API_BUNDLE).toMatch(/node_modules\/\.cache\/pit-api\/embedded-[0-9a-f]{16}\.mjs$/);
    expect(existsSync(process.env.PIT_API_BUNDLE!)).toBe(true);
  });

  it("exports the embedded API and finds the repository's root from where it lies", async () => {
    const mod = (await import(/* @vite-ignore */ await buildApiBundle())) as Record<string, unknown>;
    expect(typeof mod.startEmbedded).toBe("function");
    expect(mod.ROOT).toBe(ROOT);
    expect(existsSync(`${ROOT}/package.json`) && existsSync(`${ROOT}/api/embedded.ts`)).toBe(true);
  });
});

describe("the indexer's bundle (Ponder's CLI in one module)", () => {
  it("is built once per install beside Ponder's CLI, runs as it, and publishes Ponder's package first", async () => {
    const file = await buildIndexerBundle();
    expect(file).toMatch(/node_modules\/ponder\/dist\/esm\/bin\/pit-[0-9a-f]{16}\.ponder\.js$/);
    expect(await buildIndexerBundle()).toBe(file);
    // test/globalSetup.ts handed the same file to the run's indexers.
    expect(process.env.PIT_INDEXER_BIN).toBe(file);
    const version = JSON.parse(readFileSync(join(ROOT, "node_modules", "ponder", "package.json"), "utf8")).version;
    // Before the CLI exits (--version), Ponder's package is there for lib/ponderNative.ts.
    const probe =
      "process.on('exit', () => console.log(typeof globalThis[Symbol.for('pit.ponder')]?.onchainTable));" +
      `process.argv.push('--version'); await import(${JSON.stringify(pathToFileURL(file).href)});`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", probe], { cwd: ROOT });
    expect(stdout.trim().split("\n")).toEqual([version, "function"]);
  }, 60_000);

  it("leaves hono, @hono/node-server and pg to Node: the embedded API and Ponder's server share one copy", async () => {
    const text = readFileSync(await buildIndexerBundle(), "utf8");
    // esbuild names each bundled file in a comment; a package left to Node is an import instead.
    for (const pkg of ["hono", "@hono/node-server", "pg"]) {
      expect(text).toContain(`from "${pkg}"`);
      expect(text).not.toContain(`// node_modules/${pkg}/`);
    }
    expect(text).toContain("// node_modules/viem/");
  });

  it("is Ponder's own CLI where no bundle can be built", async () => {
    const warnings: string[] = [];
    expect(await buildIndexerBundle((m) => warnings.push(m), join(ROOT, "no-such-lockfile.json"))).toBe(PONDER_BIN);
    expect(warnings).toEqual([expect.stringContaining("module by module")]);
  });
});
