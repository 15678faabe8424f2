import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The layering of the tree (docs/layout.md "Where things live", issue 10 point 1), read from the import
 * graph of the source itself: every import, export-from and import() of every .ts file under
 * api/, src/, lib/ and abis/, as TypeScript's own pre-processor sees them (type-only imports
 * included: a domain that needs another's types takes them from its index.ts too).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SCANNED = ["api", "src", "lib", "abis", "cosigner", "sdk"];
/** Files at the root that Ponder runs besides src/ (through vite-node, as src/ is). */
const PONDER_FILES = ["ponder.config.ts", "ponder.schema.ts"];
/** Folders under api/ that are not domains: anyone may import them (ports and errors import no domain). */
const NOT_DOMAINS = new Set(["http", "ports", "errors"]);

/** One import: `to` is a repository path for a local file, or the package name for a package. */
export type Edge = { from: string; to: string; local: boolean };

/** The domain a repository path belongs to (api/<domain>/...), or null. api/*.ts are not in a domain. */
const domainOf = (file: string): string | null => {
  const m = /^api\/([^/]+)\//.exec(file);
  return m && !NOT_DOMAINS.has(m[1]!) ? m[1]! : null;
};
/** The composition root: the files directly under api/ (app.ts, deps.ts, routes.ts, services.ts). */
const isRoot = (file: string) => /^api\/[^/]+$/.test(file);
/** A file in one of api/'s folders (a domain, or http, ports, errors): below the root. */
const belowRoot = (file: string) => /^api\/[^/]+\//.test(file);
const isHono = (e: Edge) => !e.local && (e.to === "hono" || e.to.startsWith("hono/") || e.to.startsWith("@hono/"));
const under = (file: string, ...dirs: string[]) => dirs.some((d) => file.startsWith(`${d}/`));

type Rule = { name: string; breaks(e: Edge): boolean };
/** The server's refusal codes as data: the SDK's ErrorCode union is read from it (issue 30). */
const CATALOGUE = "api/errors/catalogue.ts";

export const RULES: Rule[] = [
  {
    name: "in a domain only routes.ts (and its unit test) imports Hono (and page.ts its HTML escaping)",
    breaks: (e) => {
      const d = domainOf(e.from);
      const pageHtml = e.from === `api/${d}/page.ts` && (e.to === "hono/html" || e.to === "hono/utils/html");
      const routesFile = e.from === `api/${d}/routes.ts` || e.from === `api/${d}/routes.test.ts`;
      return d !== null && isHono(e) && !routesFile && !pageHtml;
    },
  },
  {
    name: "a domain imports another domain only through its index.ts",
    breaks: (e) => {
      const from = domainOf(e.from);
      const to = e.local ? domainOf(e.to) : null;
      return from !== null && to !== null && from !== to && e.to !== `api/${to}/index.ts`;
    },
  },
  {
    name:
      "nothing under api/'s folders imports the composition root (api/app.ts, deps.ts, routes.ts, services.ts), " +
      "types included",
    breaks: (e) => e.local && belowRoot(e.from) && isRoot(e.to),
  },
  {
    name: "api/http, api/ports and api/errors import no domain",
    breaks: (e) => under(e.from, "api/http", "api/ports", "api/errors") && e.local && domainOf(e.to) !== null,
  },
  {
    name: "api/ports and api/errors do not import Hono",
    breaks: (e) => under(e.from, "api/ports", "api/errors") && isHono(e),
  },
  {
    name: "src/ imports api/ only from src/api/index.ts",
    breaks: (e) => under(e.from, "src") && e.from !== "src/api/index.ts" && e.local && under(e.to, "api"),
  },
  {
    name: "the co-signer (cosigner/) imports no API domain, only lib/, abis/ and api's ports and errors",
    breaks: (e) => under(e.from, "cosigner") && e.local && (domainOf(e.to) !== null || under(e.to, "src")),
  },
  {
    name:
      "only the composition root (api/services.ts) builds the co-signer; domains reach it through " +
      "api/ports/cosigner.ts",
    breaks: (e) => e.local && under(e.to, "cosigner") && !under(e.from, "cosigner") && e.from !== "api/services.ts",
  },
  {
    name: "lib/ and abis/ import neither api/ nor src/",
    breaks: (e) => under(e.from, "lib", "abis") && e.local && under(e.to, "api", "src"),
  },
  {
    name: "the SDK (sdk/src/) imports only its own files, lib/, abis/, the error catalogue and viem",
    breaks: (e) =>
      under(e.from, "sdk/src") &&
      (e.local ? !under(e.to, "sdk/src", "lib", "abis") && e.to !== CATALOGUE : e.to !== "viem"),
  },
  {
    name: "the error catalogue (api/errors/catalogue.ts), which the SDK's package ships, imports nothing",
    breaks: (e) => e.from === CATALOGUE,
  },
  {
    // vite-node, which runs the indexer's files, transforms `import … from "ponder"` and ~400 modules behind it
    // itself (about 2.5 CPU-s at every indexer start); lib/ponderNative.ts has Node load the package.
    name: "only lib/ponderNative.ts imports Ponder's package (types included)",
    breaks: (e) => !e.local && e.to === "ponder" && e.from !== "lib/ponderNative.ts",
  },
];

/** Every edge that breaks a rule, one line each: `rule: from -> to`. */
/**
 * The packages the SDK's bundle would take in beyond the ones its package names (`allowed`: its dependencies and
 * peers): those imported by any file reachable from sdk/src/, its lib/ and abis/ files' own imports included. The
 * bundle runs where Node's own modules do not (a lib/ file importing node:module broke its build: lib/keccak.ts,
 * 2026-12-01).
 */
export function sdkPackages(edges: readonly Edge[], allowed: readonly string[]): string[] {
  const seen = new Set<string>();
  const todo = [...new Set(edges.filter((e) => under(e.from, "sdk/src")).map((e) => e.from))];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const e of edges) if (e.from === f && e.local) todo.push(e.to);
  }
  const found = edges
    .filter((e) => seen.has(e.from) && !e.local && !allowed.includes(e.to))
    .map((e) => `${e.from} -> ${e.to}`);
  return [...new Set(found)].sort();
}

export function violations(edges: readonly Edge[], rules: readonly Rule[] = RULES): string[] {
  return rules.flatMap((r) => edges.filter((e) => r.breaks(e)).map((e) => `${r.name}: ${e.from} -> ${e.to}`)).sort();
}

/** Strongly connected parts of a graph (Tarjan): each with more than one node, or a node that imports itself. */
function loops(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part = stack.splice(stack.lastIndexOf(v));
    if (part.length > 1 || (next.get(v) ?? []).includes(v)) found.push(part.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** One circle through a loop's first node, written `a -> b -> a` (the shortest, so a failure names a real path). */
function circleThrough(part: string[], edges: readonly { from: string; to: string }[]): string {
  const start = part[0]!;
  const inPart = new Set(part);
  const came = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const e of edges.filter((x) => x.from === v && inPart.has(x.to))) {
      if (e.to === start) return [...pathTo(v, came, start), start].join(" -> ");
      if (came.has(e.to)) continue;
      came.set(e.to, v);
      queue.push(e.to);
    }
  }
  return part.join(", ");
}
const pathTo = (v: string, came: Map<string, string>, start: string): string[] =>
  v === start ? [start] : [...pathTo(came.get(v)!, came, start), v];

/** Every circle among the files under api/ (type-only imports count: a circle of types is still a circle). */
export function fileCircles(edges: readonly Edge[]): string[] {
  const inApi = edges.filter((e) => e.local && under(e.from, "api") && under(e.to, "api"));
  return loops(inApi)
    .map((part) => circleThrough(part, inApi))
    .sort();
}

/** Every circle among api/'s folders (a domain that imports another which, by any path, imports it back). */
export function folderCircles(edges: readonly Edge[]): string[] {
  const folder = (file: string) => file.split("/")[1]!;
  const between = edges
    .filter((e) => e.local && belowRoot(e.from) && belowRoot(e.to) && folder(e.from) !== folder(e.to))
    .map((e) => ({ from: folder(e.from), to: folder(e.to) }));
  return loops(between)
    .map((part) => circleThrough(part, between))
    .sort();
}

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === "node_modules" || name.startsWith(".")) return [];
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|tsx)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A relative specifier as the repository file it names (.js written for .ts, directory imports, no extension). */
function resolveLocal(from: string, spec: string): string {
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const stem = base.replace(/\.(m?js|jsx)$/, "");
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, `${stem}.tsx`, `${base}/index.ts`, base]) {
    const abs = join(ROOT, candidate);
    if (existsSync(abs) && statSync(abs).isFile()) return candidate;
  }
  return base;
}

const packageOf = (spec: string) =>
  spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;

/** The imports of one file's source, type-only ones included (`import type` is an edge like any other). */
export function edgesOf(from: string, source: string): Edge[] {
  const info = ts.preProcessFile(source, true, true);
  return info.importedFiles.map(({ fileName: spec }): Edge => {
    if (spec.startsWith(".")) return { from, to: resolveLocal(from, spec), local: true };
    // hono/http-exception is still Hono; keep subpaths of hono, name other packages by package.
    return { from, to: spec.startsWith("hono/") ? spec : packageOf(spec), local: false };
  });
}

export function importGraph(dirs: readonly string[] = SCANNED, files: readonly string[] = PONDER_FILES): Edge[] {
  return [...dirs.flatMap(sourceFiles), ...files].flatMap((from) =>
    edgesOf(from, readFileSync(join(ROOT, from), "utf8")),
  );
}

describe("layering rules (on synthetic edges: each rule can fail)", () => {
  const local = (from: string, to: string): Edge => ({ from, to, local: true });
  const pkg = (from: string, to: string): Edge => ({ from, to, local: false });

  it(
    "flags Hono outside a domain's routes.ts (page.ts: hono/html only), and allows it in routes.ts, api/http and " +
      "api/app.ts",
    () => {
      const rule = "in a domain only routes.ts (and its unit test) imports Hono (and page.ts its HTML escaping)";
      expect(
        violations([
          pkg("api/trading/plan.ts", "hono"),
          pkg("api/tokens/registry.ts", "hono/http-exception"),
          pkg("api/market/x/deep.ts", "@hono/node-server"),
          pkg("api/treasury/page.ts", "hono"),
        ]),
      ).toEqual([
        `${rule}: api/market/x/deep.ts -> @hono/node-server`,
        `${rule}: api/tokens/registry.ts -> hono/http-exception`,
        `${rule}: api/trading/plan.ts -> hono`,
        `${rule}: api/treasury/page.ts -> hono`,
      ]);
      expect(
        violations([
          pkg("api/trading/routes.ts", "hono"),
          pkg("api/trading/routes.test.ts", "hono"),
          pkg("api/http/guards.ts", "hono"),
          pkg("api/app.ts", "hono"),
          pkg("api/trading/plan.ts", "viem"),
          pkg("api/treasury/page.ts", "hono/html"),
        ]),
      ).toEqual([]);
    },
  );

  it("flags a domain reaching into another domain's files, not its index.ts or its own files", () => {
    expect(
      violations([
        local("api/trading/plan.ts", "api/tokens/registry.ts"),
        local("api/account/routes.ts", "api/trading/ledger.ts"),
      ]),
    ).toEqual([
      "a domain imports another domain only through its index.ts: api/account/routes.ts -> api/trading/ledger.ts",
      "a domain imports another domain only through its index.ts: api/trading/plan.ts -> api/tokens/registry.ts",
    ]);
    expect(
      violations([
        local("api/trading/plan.ts", "api/tokens/index.ts"),
        local("api/trading/plan.ts", "api/trading/policy.ts"),
        local("api/trading/plan.ts", "api/ports/simulation.ts"),
        local("api/trading/plan.ts", "api/errors/index.ts"),
        local("api/trading/routes.ts", "api/http/kit.ts"),
        local("api/services.ts", "api/trading/ledger.ts"),
        local("api/deps.ts", "api/auth/signin.ts"),
      ]),
    ).toEqual([]);
  });

  it(
    "flags the edge, ports and errors importing a domain (even its index.ts), and ports or errors importing " + "Hono",
    () => {
      const rule = "api/http, api/ports and api/errors import no domain";
      expect(
        violations([
          local("api/ports/store/db.ts", "api/auth/index.ts"),
          local("api/errors/refusal.ts", "api/trading/policy.ts"),
          pkg("api/errors/groups.ts", "hono"),
          local("api/http/auth.ts", "api/auth/index.ts"),
        ]),
      ).toEqual(
        [
          "api/ports and api/errors do not import Hono: api/errors/groups.ts -> hono",
          `${rule}: api/errors/refusal.ts -> api/trading/policy.ts`,
          `${rule}: api/http/auth.ts -> api/auth/index.ts`,
          `${rule}: api/ports/store/db.ts -> api/auth/index.ts`,
        ].sort(),
      );
      expect(
        violations([
          local("api/http/kit.ts", "api/http/env.ts"),
          local("api/http/auth.ts", "api/errors/index.ts"),
          local("api/http/route.ts", "api/ports/store/db.ts"),
        ]),
      ).toEqual([]);
    },
  );

  it(
    "flags any file under api/'s folders importing the composition root, a type-only import as much as a " + "value",
    () => {
      const rule =
        "nothing under api/'s folders imports the composition root (api/app.ts, deps.ts, routes.ts, services.ts), " +
        "types included";
      const typeOnly = edgesOf(
        "api/trading/routes.ts",
        'import type { AppEnv } from "../deps.js";\nimport { Hono } from "hono";',
      );
      expect(typeOnly).toEqual([local("api/trading/routes.ts", "api/deps.ts"), pkg("api/trading/routes.ts", "hono")]);
      expect(
        violations([
          ...typeOnly,
          local("api/http/kit.ts", "api/services.ts"),
          local("api/errors/x.ts", "api/app.ts"),
          local("api/hosted/deep/x.ts", "api/routes.ts"),
        ]),
      ).toEqual([
        `${rule}: api/errors/x.ts -> api/app.ts`,
        `${rule}: api/hosted/deep/x.ts -> api/routes.ts`,
        `${rule}: api/http/kit.ts -> api/services.ts`,
        `${rule}: api/trading/routes.ts -> api/deps.ts`,
      ]);
      // The root imports downward, and root files import each other.
      expect(
        violations([
          local("api/app.ts", "api/services.ts"),
          local("api/services.ts", "api/deps.ts"),
          local("api/app.ts", "api/http/kit.ts"),
          local("api/routes.ts", "api/trading/routes.ts"),
          local("src/api/index.ts", "api/app.ts"),
        ]),
      ).toEqual([]);
    },
  );

  it("flags src/ importing api/ outside src/api/index.ts, and lib/ or abis/ importing api/ or src/", () => {
    expect(
      violations([
        local("src/Trades.ts", "api/ports/indexed.ts"),
        local("src/api/index.ts", "api/app.ts"),
        local("lib/fees.ts", "api/errors/index.ts"),
        local("abis/erc20.ts", "src/Trades.ts"),
        local("lib/fees.ts", "lib/config.ts"),
      ]),
    ).toEqual([
      "lib/ and abis/ import neither api/ nor src/: abis/erc20.ts -> src/Trades.ts",
      "lib/ and abis/ import neither api/ nor src/: lib/fees.ts -> api/errors/index.ts",
      "src/ imports api/ only from src/api/index.ts: src/Trades.ts -> api/ports/indexed.ts",
    ]);
  });

  it("flags the co-signer importing an API domain, and a domain building the co-signer itself", () => {
    expect(
      violations([
        local("cosigner/cosigner.ts", "api/sessions/index.ts"),
        local("cosigner/cosigner.ts", "api/ports/cosigner.ts"),
        local("api/sessions/trade.ts", "cosigner/index.ts"),
        local("api/services.ts", "cosigner/index.ts"),
      ]),
    ).toEqual([
      "only the composition root (api/services.ts) builds the co-signer; domains reach it through " +
        "api/ports/cosigner.ts: api/sessions/trade.ts -> cosigner/index.ts",
      "the co-signer (cosigner/) imports no API domain, only lib/, abis/ and api's ports and errors: " +
        "cosigner/cosigner.ts -> api/sessions/index.ts",
    ]);
  });

  it("flags Ponder's package imported anywhere but lib/ponderNative.ts, the indexer's own files included", () => {
    const rule = "only lib/ponderNative.ts imports Ponder's package (types included)";
    expect(
      violations([
        pkg("ponder.schema.ts", "ponder"),
        pkg("src/api/index.ts", "ponder"),
        pkg("src/Feed.ts", "ponder:schema"),
        pkg("lib/ponderNative.ts", "ponder"),
      ]),
    ).toEqual([`${rule}: ponder.schema.ts -> ponder`, `${rule}: src/api/index.ts -> ponder`]);
  });
});

describe("circles (on synthetic edges)", () => {
  const local = (from: string, to: string): Edge => ({ from, to, local: true });

  it("names each circle among api/'s files by its shortest path, type-only imports and self-imports included", () => {
    const edges = [
      local("api/hosted/tick.ts", "api/hosted/attestation.ts"),
      local("api/hosted/attestation.ts", "api/hosted/executor.ts"),
      local("api/hosted/executor.ts", "api/hosted/tick.ts"),
      local("api/hosted/executor.ts", "api/hosted/store.ts"),
      local("api/x/a.ts", "api/x/a.ts"),
    ];
    expect(fileCircles(edges)).toEqual([
      "api/hosted/attestation.ts -> api/hosted/executor.ts -> api/hosted/tick.ts -> api/hosted/attestation.ts",
      "api/x/a.ts -> api/x/a.ts",
    ]);
    expect(
      fileCircles([
        local("api/hosted/tick.ts", "api/hosted/deps.ts"),
        local("api/hosted/executor.ts", "api/hosted/deps.ts"),
        local("api/hosted/tick.ts", "api/hosted/attestation.ts"),
      ]),
    ).toEqual([]);
    // Outside api/, and to packages, nothing counts.
    expect(
      fileCircles([
        local("lib/a.ts", "lib/b.ts"),
        local("lib/b.ts", "lib/a.ts"),
        { from: "api/x/a.ts", to: "api/x/a.ts", local: false },
      ]),
    ).toEqual([]);
  });

  it(
    "names each circle among api/'s folders, through any files, and ignores a folder's own imports and the " + "root",
    () => {
      const edges = [
        local("api/hosted/index.ts", "api/league/index.ts"),
        local("api/league/entries.ts", "api/hosted/index.ts"),
        local("api/http/auth.ts", "api/auth/index.ts"),
        local("api/auth/routes.ts", "api/http/env.ts"),
      ];
      expect(folderCircles(edges)).toEqual(["auth -> http -> auth", "hosted -> league -> hosted"]);
      expect(
        folderCircles([
          local("api/hosted/a.ts", "api/hosted/b.ts"),
          local("api/hosted/b.ts", "api/hosted/a.ts"),
          local("api/app.ts", "api/hosted/index.ts"),
          local("api/hosted/index.ts", "api/services.ts"),
          local("api/sessions/deps.ts", "api/trading/index.ts"),
        ]),
      ).toEqual([]);
    },
  );
});

describe("the SDK's rule", () => {
  const local = (from: string, to: string): Edge => ({ from, to, local: true });
  const rule = "the SDK (sdk/src/) imports only its own files, lib/, abis/, the error catalogue and viem";
  it("flags the SDK importing the server, tests or another chain library; allows lib, abis, viem, catalogue", () => {
    expect(
      violations([
        local("sdk/src/trade.ts", "api/trading/index.ts"),
        local("sdk/src/trade.ts", "lib/router/read.ts"),
        local("sdk/src/fast.ts", "abis/permit2.ts"),
        { from: "sdk/src/fast.ts", to: "ethers", local: false },
        { from: "sdk/src/fast.ts", to: "viem", local: false },
        local("sdk/src/errors.ts", "api/errors/catalogue.ts"),
        local("sdk/src/errors.ts", "api/errors/refusal.ts"),
      ]),
    ).toEqual([
      `${rule}: sdk/src/errors.ts -> api/errors/refusal.ts`,
      `${rule}: sdk/src/fast.ts -> ethers`,
      `${rule}: sdk/src/trade.ts -> api/trading/index.ts`,
    ]);
  });

  it("names a package the SDK would bundle through lib/, however deep, and nothing for the packages it names", () => {
    const edges: Edge[] = [
      { from: "sdk/src/fast.ts", to: "lib/v4.ts", local: true },
      { from: "lib/v4.ts", to: "viem", local: false },
      { from: "lib/v4.ts", to: "lib/hash.ts", local: true },
      { from: "lib/hash.ts", to: "node:module", local: false },
      { from: "lib/other.ts", to: "node:fs", local: false },
    ];
    expect(sdkPackages(edges, ["viem"])).toEqual(["lib/hash.ts -> node:module"]);
    expect(sdkPackages(edges.slice(0, 2), ["viem"])).toEqual([]);
  });

  it("flags the catalogue the SDK reads importing anything, so the package never bundles the server", () => {
    expect(
      violations([
        local("api/errors/catalogue.ts", "lib/fees.ts"),
        { from: "api/errors/catalogue.ts", to: "hono", local: false },
      ]),
    ).toEqual(
      [
        "the error catalogue (api/errors/catalogue.ts), which the SDK's package ships, imports nothing: " +
          "api/errors/catalogue.ts -> hono",
        "api/ports and api/errors do not import Hono: api/errors/catalogue.ts -> hono",
        "the error catalogue (api/errors/catalogue.ts), which the SDK's package ships, imports nothing: " +
          "api/errors/catalogue.ts -> lib/fees.ts",
      ].sort(),
    );
  });
});

describe("the tree", () => {
  const edges = importGraph();

  it("is read: the graph has the edges we know exist (a scanner that reads nothing would pass everything)", () => {
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to);
    expect(edges.length).toBeGreaterThan(200);
    expect(has("src/api/index.ts", "api/embedded.ts")).toBe(true); // written without an extension
    expect(has("api/app.ts", "hono")).toBe(true);
    expect(has("api/routes.ts", "api/trading/routes.ts")).toBe(true); // written as ./trading/routes.js
    expect(has("api/http/errors.ts", "hono/http-exception")).toBe(true);
    expect(has("sdk/src/fast.ts", "lib/router/swap.ts")).toBe(true);
    expect(has("sdk/src/errors.ts", "api/errors/catalogue.ts")).toBe(true); // import type only
    expect(has("api/hosted/executor.ts", "api/hosted/deps.ts")).toBe(true); // import type only
    expect(has("ponder.schema.ts", "lib/ponderNative.ts")).toBe(true); // a root file Ponder runs
    expect(edges.filter((e) => e.local && !existsSync(join(ROOT, e.to))).map((e) => `${e.from} -> ${e.to}`)).toEqual(
      [],
    );
  });

  it("keeps every layering rule", () => {
    const found = violations(edges);
    expect(found, `layering broken by ${found.length} import(s):\n${found.join("\n")}`).toEqual([]);
  });

  it("lets the SDK's bundle take in no package its package does not name, through lib/ and abis/ too", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "sdk/package.json"), "utf8"));
    const named = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
    expect(named).toContain("viem");
    expect(sdkPackages(edges, named)).toEqual([]);
  });

  it("has no circle among api/'s files nor among its folders", () => {
    expect(fileCircles(edges)).toEqual([]);
    expect(folderCircles(edges)).toEqual([]);
  });
});
