import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { build, type BuildOptions, type Plugin } from "esbuild";
import { ROOT } from "../lib/root.js";
import { writeAside } from "../lib/writeAside.js";

/** Where bundles are kept: a build cache, never committed. */
const DIR = join(ROOT, "node_modules", ".cache", "pit-api");

/**
 * Bundles the API Ponder mounts (api/embedded.ts and every source file it reaches; packages stay
 * imports) into one ES module and answers its path, for PIT_API_BUNDLE (src/api/index.ts).
 */
export const buildApiBundle = (): Promise<string> => buildBundle(join("api", "embedded.ts"), "embedded");

/**
 * Bundles `entry` (a path under the repository's root) and every source file it reaches into one ES
 * module, packages left as imports, and answers its path: the processes npm start runs from our
 * TypeScript (the signing services, the API processes of `npm run stack`) start from one file that
 * Node loads natively, in about half the time of tsx over a few hundred sources.
 *
 * Named by the hash of its bytes and written by rename: a start or test run building while another
 * process loads an older bundle never changes a file under it. Built at every start (well under a
 * second), so it is never older than the sources.
 */
export async function buildBundle(entry: string, name: string): Promise<string> {
  const out = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    write: false,
    logLevel: "error",
  });
  const bytes = out.outputFiles[0]!.contents;
  const file = join(DIR, `${name}-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(file)) writeAside(file, bytes);
  return file;
}

/** Ponder's CLI as installed: what every indexer ran before its bundle, and runs where none can be built. */
export const PONDER_BIN = join(ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");

/**
 * Packages the indexer's bundle leaves to Node. Ponder's build toolchain for the project's own files (vite,
 * vite-node, esbuild, rollup, lightningcss: native binaries and resolution of their own), PGlite (its WASM and data
 * beside its modules), pino and thread-stream (their worker files found by `__dirname`), and two Ponder loads only on
 * demand (typescript, pg-query-emscripten: 19 MB of source that a start would parse for nothing). And the packages
 * the embedded API shares with Ponder's server in one process, one copy each: hono and @hono/node-server (each copy
 * of the server installs its own global Request and Response and marks its fast responses with a Symbol of its own,
 * so the API's every answer took node-server's slow path beside a second copy; hono compares error handlers by
 * identity when Ponder mounts an app), and pg (Ponder sets a type parser on pg's process-wide table).
 */
const INDEXER_EXTERNAL = [
  "hono",
  "@hono/node-server",
  "pg",
  "vite",
  "vite-node",
  "esbuild",
  "rollup",
  "lightningcss",
  "fsevents",
  "@electric-sql/pglite",
  "pino",
  "thread-stream",
  "typescript",
  "pg-query-emscripten",
];

/** Ponder's package (dist/esm/index.js) published for lib/ponderNative.ts, evaluated before the CLI's first line. */
const PONDER_PACKAGE_KEY = "pit.ponder";
const publishedSource = `import * as p from "ponder"; globalThis[Symbol.for("${PONDER_PACKAGE_KEY}")] = p;`;
const publishPonder: Plugin = {
  name: "publish-ponder",
  setup(b) {
    b.onResolve({ filter: /^pit:ponder-package$/ }, () => ({ path: "ponder-package", namespace: "pit" }));
    b.onLoad({ filter: /.*/, namespace: "pit" }, () => ({
      contents: publishedSource,
      resolveDir: ROOT,
    }));
  },
};

const INDEXER_OPTIONS: BuildOptions = {
  stdin: { contents: `import "pit:ponder-package"; import ${JSON.stringify(PONDER_BIN)};`, resolveDir: ROOT },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: INDEXER_EXTERNAL,
  plugins: [publishPonder],
  // The CommonJS packages inside call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __pitRequire } from 'node:module'; const require = __pitRequire(import.meta.url);",
  },
  write: false,
  logLevel: "error",
};

/**
 * What names the installed packages: npm's record of node_modules (rewritten by every install, `--no-save` too),
 * else the lockfile.
 */
function installedTree(): string {
  const record = join(ROOT, "node_modules", ".package-lock.json");
  return existsSync(record) ? record : join(ROOT, "package-lock.json");
}

/**
 * Ponder's CLI and the packages it loads as one ES module, for every indexer we start (npm start, the tests'):
 * Node 20's loader spent about 2 CPU-s resolving and compiling Ponder's ~3,200 modules file by file at each start,
 * and has no compile cache to keep that. The bundle also publishes Ponder's package to the project's files, so
 * ponder.config.ts and the API share the CLI's Ponder (lib/ponderNative.ts) instead of loading a second one.
 *
 * It lies beside Ponder's own CLI (its `../../../package.json`, its worker paths and the packages left out resolve
 * as they do for the original) and is named by what it is built from: the installed packages (`lockfile`, npm's
 * record of node_modules; a test names one that is not there), Node's version and these options, so a start finds
 * it built and pays nothing. A package changed by hand under node_modules is not seen: delete the bundle. An earlier
 * install's bundle (8 MB) is left where it is, as an indexer a running start restarts may still name it; a new
 * install of Ponder takes them all. Where none can be built, the original.
 */
export async function buildIndexerBundle(
  warn: (msg: string) => void = () => {},
  lockfile = installedTree(),
): Promise<string> {
  try {
    const key = createHash("sha256")
      .update(readFileSync(lockfile))
      .update(process.version)
      .update(JSON.stringify({ ...INDEXER_OPTIONS, plugins: [publishedSource] }))
      .digest("hex")
      .slice(0, 16);
    const file = join(PONDER_BIN, "..", `pit-${key}.ponder.js`);
    if (existsSync(file)) return file;
    const out = await build(INDEXER_OPTIONS);
    writeAside(file, out.outputFiles![0]!.contents);
    return file;
  } catch (err) {
    warn(`the indexer runs Ponder's CLI module by module (no bundle: ${String(err)})`);
    return PONDER_BIN;
  }
}
