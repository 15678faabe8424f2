import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import { ROOT } from "../../lib/root.js";
import { freshenMarket, startStack, type Stack } from "../../test/helpers/stack.js";

/**
 * @pit/sdk as a package a user adds (issue 30): packed by `npm pack` in sdk/ (which builds it
 * first), installed from the tarball into an empty project beside viem, type-checked there against
 * its own declarations, and the README's example run there by plain node against a devnet stack.
 * The install takes the npm cache first (the repo's install left viem there) and asks the registry
 * only for what the cache lacks.
 */
let stack: Stack;
let dir: string;
let proj: string;
const installed = () => join(proj, "node_modules", "@pit", "sdk");
const repoVersion = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

type Run = { status: number | null; stdout: string; stderr: string };
/**
 * A command run without blocking (the stack starts meanwhile). npm's own variables are dropped: under
 * `npm test` they name this repo as the prefix, and the install must happen in the temporary project.
 */
function run(cmd: string, args: string[], cwd: string): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env: { ...env, DO_NOT_TRACK: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += String(b)));
    child.stderr.on("data", (b) => (stderr += String(b)));
    child.on("error", fail);
    child.on("close", (status) => done({ status, stdout, stderr }));
  });
}
const ok = async (cmd: string, args: string[], cwd: string) => {
  const r = await run(cmd, args, cwd);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r;
};

/** Packs sdk/ as a publisher would, then installs the tarball, viem and Node's types into an empty project. */
async function packAndInstall() {
  await ok("npm", ["pack", "--pack-destination", dir], join(ROOT, "sdk"));
  const { name, version } = JSON.parse(readFileSync(join(ROOT, "sdk", "package.json"), "utf8"));
  const tarball = join(dir, `${name.replace("@", "").replace("/", "-")}-${version}.tgz`);
  mkdirSync(proj);
  writeFileSync(join(proj, "package.json"), JSON.stringify({ name: "sdk-user", private: true, type: "module" }));
  const deps = [tarball, `viem@${repoVersion("viem")}`, `@types/node@${repoVersion("@types/node")}`];
  await ok("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...deps], proj);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pit-sdk-package-"));
  proj = join(dir, "project");
  [stack] = await Promise.all([startStack({ before: freshenMarket }), packAndInstall()]);
}, 400_000);
afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const filesUnder = (d: string): string[] =>
  readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? filesUnder(join(d, n)) : [join(d, n)]));

describe("@pit/sdk as a package", () => {
  it("packs only dist/, its README and package.json, naming its exports and viem as a peer", () => {
    const files = filesUnder(installed()).map((f) => relative(installed(), f));
    expect(files.filter((f) => !f.startsWith("dist/")).sort()).toEqual(["README.md", "package.json"]);
    expect(files).toContain("dist/index.js");
    const pkg = JSON.parse(readFileSync(join(installed(), "package.json"), "utf8"));
    const entry = pkg.exports["."];
    expect(entry).toEqual({ types: expect.stringMatching(/\.d\.ts$/), default: "./dist/index.js" });
    expect(files).toContain(entry.types.replace("./", ""));
    expect(pkg.peerDependencies).toEqual({ viem: expect.any(String) });
    expect(Object.keys(pkg.dependencies ?? {})).not.toContain("viem");
  });

  it("is one bundle whose only imports are its declared dependencies and peers (none of this repo's paths)", () => {
    const js = readFileSync(join(installed(), "dist", "index.js"), "utf8");
    const pkg = JSON.parse(readFileSync(join(installed(), "package.json"), "utf8"));
    const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies)]);
    const imported = [...js.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]!);
    expect(imported.length).toBeGreaterThan(0);
    for (const spec of imported)
      expect(
        declared.has(
          spec
            .split("/")
            .slice(0, spec.startsWith("@") ? 2 : 1)
            .join("/"),
        ),
        spec,
      ).toBe(true);
  });

  it("type-checks a user's program against the package's declarations alone (skipLibCheck off)", async () => {
    writeFileSync(join(proj, "trade.ts"), readFileSync(join(ROOT, "sdk", "examples", "trade.ts"), "utf8"));
    writeFileSync(
      join(proj, "codes.ts"),
      [
        'import { CLIENT_CODES, PitError, type ErrorCode } from "@pit/sdk";',
        'const server: ErrorCode = "NO_ROUTE";',
        "const client: ErrorCode = CLIENT_CODES[0];",
        "// @ts-expect-error neither a code of the server's catalogue nor the client's",
        'const wrong: ErrorCode = "NOT_A_CODE";',
        'export const codes = [server, client, wrong, new PitError("HTTP_418", "no code").code];',
      ].join("\n"),
    );
    const options = { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true };
    const tsconfig = { compilerOptions: { ...options, noEmit: true, skipLibCheck: false, types: ["node"] } };
    writeFileSync(join(proj, "tsconfig.json"), JSON.stringify({ ...tsconfig, files: ["trade.ts", "codes.ts"] }));
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = await run(process.execPath, [tsc, "-p", "."], proj);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  }, 180_000);

  it("runs the README's example with plain node from the installed package: the trade is mined", async () => {
    const example = readFileSync(join(ROOT, "sdk", "examples", "trade.ts"), "utf8");
    expect(readFileSync(join(ROOT, "sdk", "README.md"), "utf8")).toContain(example);
    writeFileSync(join(proj, "trade.mjs"), transformSync(example, { loader: "ts", format: "esm" }).code);
    // The devnet's clock runs 120 s ahead of the wall clock (freshenMarket) and it mined nothing through the install
    // and the type-check: past 120 s idle, its next block would lie past the plan's deadline (docs/trading.md "A plan's
    // deadline"; a CI run's example reverted so). A block first, as an agent on such a fork does.
    await stack.dn.test.mine({ blocks: 1 });
    const r = await run(process.execPath, ["trade.mjs", stack.api.url, stack.dn.anvil.rpcUrl], proj);
    expect(r.status, r.stderr).toBe(0);
    const [, hash] = /^mined (0x[0-9a-f]{64}): \d+(?:\.\d+)? USDG\n$/.exec(r.stdout) ?? [];
    expect(hash, r.stdout).toBeDefined();
    const receipt = await stack.dn.pub.getTransactionReceipt({ hash: hash as Hex });
    expect(receipt.status).toBe("success");
  }, 120_000);
});
