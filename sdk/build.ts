/**
 * Builds the @pit/sdk package (issue 30: the SDK had no build a user could install).
 * dist/index.js: one ESM bundle of sdk/src with the lib/ and abis/ code it shares with the server,
 * so the package needs none of this repo; its dependencies and peers (viem, delegation-core's
 * caveat encoders) stay imports, resolved in the user's project. dist/types: tsc's declarations of
 * the same files, laid out as in the repo (sdk/src/index.d.ts reaches lib/'s beside it).
 * `npm run build` in sdk/ runs it; `npm pack` there runs it first (prepack).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { build } from "esbuild";

const here = (p: string) => new URL(p, import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(here("package.json"), "utf8")) as Record<string, Record<string, string>>;
const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];

rmSync(here("dist"), { recursive: true, force: true });
await build({
  entryPoints: [here("src/index.ts")],
  outfile: here("dist/index.js"),
  bundle: true,
  format: "esm",
  // Neutral: no Node built-ins slip in (the SDK runs wherever fetch and viem do).
  platform: "neutral",
  target: "es2022",
  external,
  logLevel: "warning",
});
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", here("tsconfig.json")], { stdio: "inherit" });
