#!/usr/bin/env node
// forge calls this as if it were a native solc: `--version`, then `--standard-json` on stdin.
// It runs npm's soljson so no compiler is ever downloaded.
const fs = require("node:fs");
const path = require("node:path");
const solc = require("solc");

const args = process.argv.slice(2);
if (args.includes("--version")) {
  const v = solc.version(); // e.g. 0.8.28+commit.7893614a.Emscripten.clang
  process.stdout.write(
    `solc, the solidity compiler commandline interface\nVersion: ${v.replace(".Emscripten.clang", ".Linux.g++")}\n`,
  );
  process.exit(0);
}
if (!args.includes("--standard-json")) {
  process.stderr.write("solc wrapper: only --version and --standard-json are supported\n");
  process.exit(1);
}
const base = (() => {
  const i = args.indexOf("--base-path");
  return i >= 0 ? args[i + 1] : process.cwd();
})();
const input = fs.readFileSync(0, "utf8");
const findImports = (p) => {
  for (const candidate of [path.resolve(base, p), path.resolve(process.cwd(), p)]) {
    if (fs.existsSync(candidate)) return { contents: fs.readFileSync(candidate, "utf8") };
  }
  return { error: `File not found: ${p}` };
};
process.stdout.write(solc.compile(input, { import: findImports }));
