import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string] ?? process.arch;

/**
 * Path of a foundry binary shipped by npm `@foundry-rs/<tool>`. The platform package carries the
 * binary itself; we call it directly rather than through the JS shim (one process less per start).
 */
export function foundryBin(tool: "anvil" | "forge" | "cast"): string {
  const platformPkg = `@foundry-rs/${tool}-${process.platform}-${arch}/package.json`;
  try {
    const bin = join(dirname(require.resolve(platformPkg)), "bin", process.platform === "win32" ? `${tool}.exe` : tool);
    if (existsSync(bin)) return bin;
  } catch {
    // fall through to the error below
  }
  throw new Error(`${tool} binary not found (expected npm package ${platformPkg}); run npm install`);
}
