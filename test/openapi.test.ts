import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Ajv from "ajv";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { openApiDocument, type Examples } from "../api/openapi/document.js";
import EXAMPLES from "../api/openapi/examples.json" with { type: "json" };
import { API_ROUTES } from "../api/routes.js";
import { ROOT } from "../lib/root.js";

/**
 * The OpenAPI document without a devnet (issue 30 point 1): Redocly's `recommended` and Spectral's `oas` rules find
 * nothing in it, a client generated from it by openapi-typescript types the answers to their fields, and every
 * example it shows (a real devnet answer, api/openapi/examples.json) fits its schema.
 */
const doc = openApiDocument({ version: "test", routes: API_ROUTES });
const dir = mkdtempSync(join(tmpdir(), "pit-openapi-"));
const file = join(dir, "openapi.json");
writeFileSync(file, JSON.stringify(doc));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
/** The linters' own telemetry and update checks stay off: a test reaches no network. */
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };

/** A linter's JSON report; a non-zero exit (it found errors) still prints one. */
async function report(cmd: string, args: string[]): Promise<string> {
  try {
    return (await run(cmd, args, { env, cwd: dir, maxBuffer: 64 << 20 })).stdout;
  } catch (err) {
    return (err as { stdout: string }).stdout;
  }
}

describe("the OpenAPI document's lint", () => {
  it("Redocly recommended: 0 errors, 0 warnings", async () => {
    const config = join(ROOT, "api/openapi/lint/redocly.yaml");
    const out = JSON.parse(await report(bin("redocly"), ["lint", file, "--config", config, "--format=json"]));
    const problems = out.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
    expect(problems.slice(0, 20)).toEqual([]);
    expect(out.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it("Spectral oas: 0 errors, 0 warnings", async () => {
    const ruleset = join(ROOT, "api/openapi/lint/spectral.yaml");
    const out = await report(bin("spectral"), ["lint", file, "-r", ruleset, "--format=json", "--quiet"]);
    const results = JSON.parse(out || "[]") as { code: string; message: string; path: string[] }[];
    expect(results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`).slice(0, 20)).toEqual([]);
  }, 60_000);
});

/**
 * A client program against the generated types: it reads typed fields of the answers of quote, prepare, submit,
 * session trade, a hosted agent, league standings and treasury; the `@ts-expect-error` lines prove an answer is not
 * `unknown` (a field it does not have fails to compile).
 */
const CLIENT = `
import type { operations } from "./openapi.js";
type Answer<Op extends keyof operations, S extends keyof operations[Op]["responses"]> =
  operations[Op]["responses"][S] extends { content: { "application/json": infer A } } ? A : never;

declare const quote: Answer<"postLiveQuote", 200>;
export const bestOut: string | null = quote.best.amount_out;
export const routeIds: string[] = quote.routes.map((r) => r.id);
export const feeBps: number = quote.fee_bps;
// @ts-expect-error a quote has no such field
quote.no_such_field;

declare const prepared: Answer<"postLivePrepare", 200>;
if ("amount_out_min" in prepared) {
  const min: string = prepared.amount_out_min;
  const kinds: string[] = prepared.steps.map((s) => s.kind);
  const simulated: boolean | undefined = prepared.simulation?.ok;
  console.log(min, kinds, simulated);
}

declare const submitted: Answer<"postLiveSubmit", 200>;
export const txHash: string = submitted.tx_hash;
// @ts-expect-error tx_hash is a string
export const txHashNumber: number = submitted.tx_hash;

declare const sessionTrade: Answer<"postLiveSessionTrade", 200>;
export const sessionTo: string = sessionTrade.tx.to;
export const sessionFee: number = sessionTrade.fee_bps;
export const tradesLeft: number = sessionTrade.spend.trades_left;

declare const agent: Answer<"getHostedById", 200>;
export const agentStatus: "active" | "paused" | "stopped" = agent.status;
export const agentPairs: string[] = agent.pairs;
export const maxTrade: number = agent.limits.max_trade_usd;
// @ts-expect-error an agent has no such field
agent.no_such_field;

declare const standings: Answer<"getLeagueStandings", 200>;
export const ranks: number[] = standings.rows.map((r) => r.rank);
export const season: number = standings.season;

declare const treasury: Answer<"getTreasury", 200>;
export const platform: string = treasury.platform_wallet;
export const headOk: boolean = treasury.integrity.ok;
export const weekHashes: (string | null)[] = treasury.weeks.map((w) => w.hash);
`;

/** The diagnostics of compiling `files` (in `at`) strictly, as text. */
function compile(at: string, files: string[]): string[] {
  const program = ts.createProgram(
    files.map((f) => join(at, f)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

describe("a client generated by openapi-typescript", () => {
  it("types the answers of quote, prepare, submit, session trade, hosted agent, standings and treasury", async () => {
    writeFileSync(join(dir, "openapi.ts"), astToString(await openapiTS(structuredClone(doc) as never)));
    writeFileSync(join(dir, "client.ts"), CLIENT);
    expect(compile(dir, ["client.ts"])).toEqual([]);
  }, 60_000);
});

describe("the document's examples", () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  it("are real answers that fit their route's schema, secrets left out", () => {
    const problems: string[] = [];
    for (const [route, byStatus] of Object.entries(EXAMPLES as Examples)) {
      const [method, path] = route.split(" ") as [string, string];
      for (const [status, body] of Object.entries(byStatus)) {
        const res = (doc.paths as any)[path]?.[method]?.responses?.[status];
        if (!res) problems.push(`${route} ${status}: not in the document`);
        else {
          const validate = ajv.compile({ ...res.content["application/json"].schema, components: doc.components });
          if (!validate(body)) problems.push(`${route} ${status}: ${ajv.errorsText(validate.errors)}`);
        }
        if (/pit_w_[A-Za-z0-9_-]{20,}/.test(JSON.stringify(body))) problems.push(`${route} ${status}: an API key`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("show every operation's success answer (PIT_OPENAPI_EXAMPLES=1 over the e2e tests keeps one per route)", () => {
    const without: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(ops)) {
        const ok = Object.entries((op.responses ?? {}) as Record<string, any>).filter(([status]) =>
          status.startsWith("2"),
        );
        if (!ok.some(([, r]) => r.content?.["application/json"]?.example !== undefined))
          without.push(`${method} ${path}`);
      }
    expect(without).toEqual([]);
  });
});
