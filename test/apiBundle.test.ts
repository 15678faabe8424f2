import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildApiBundle } from "../scripts/apiBundle.js";

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
    const { ROOT } = await import("../lib/root.js");
    expect(mod.ROOT).toBe(ROOT);
    expect(existsSync(`${ROOT}/package.json`) && existsSync(`${ROOT}/api/embedded.ts`)).toBe(true);
  });
});
