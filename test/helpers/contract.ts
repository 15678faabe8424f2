import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import Ajv, { type ValidateFunction } from "ajv";
import { openApiDocument } from "../../api/openapi/document.js";
import { API_ROUTES } from "../../api/routes.js";
import { ROOT } from "../../lib/root.js";

/**
 * The OpenAPI contract over the whole e2e suite: every answer a test reads through the API
 * helper is checked against the document (its route's documented status and that status's
 * schema). A mismatch fails the request's test; PIT_CONTRACT_LOG=<file> records them instead.
 */
type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components: object;
};
const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new Map<string, ValidateFunction>();
const DOC_ID = "pit-openapi";
/** The JSON pointer (RFC 6901) of a response's schema in the document. */
const pointer = (route: string, method: string, status: number) =>
  `/${["paths", route, method.toLowerCase(), "responses", String(status), "content", "application/json", "schema"]
    .map((part) => encodeURIComponent(part.replaceAll("~", "~0").replaceAll("/", "~1")))
    .join("/")}`;
/** Built on first use: a test file that never calls the API pays nothing for it. */
let built: { doc: Doc; templates: { path: string; re: RegExp }[] } | null = null;
function contract() {
  if (!built) {
    const doc = openApiDocument({ version: "test", routes: API_ROUTES }) as Doc;
    // Added once: every answer's schema is compiled as a reference into it, so the components they name are compiled
    // once for the run, not again inside each route's validator.
    ajv.addSchema(doc, DOC_ID);
    built = {
      doc,
      templates: Object.keys(doc.paths).map((p) => ({
        path: p,
        re: new RegExp(`^${p.replace(/\{\w+\}/g, "[^/]+")}$`),
      })),
    };
  }
  return built;
}

/** The documented route a concrete /api/v1 path is, the literal one first (tokens/stats before tokens/{address}). */
function routeOf(path: string): string | null {
  const { templates } = contract();
  const exact = templates.find((t) => t.path === path);
  return exact ? exact.path : (templates.find((t) => t.re.test(path))?.path ?? null);
}

export function contractProblem(method: string, url: string, status: number, json: unknown): string | null {
  const u = new URL(url, "http://x");
  if (!u.pathname.startsWith("/api/v1/")) return null;
  const route = routeOf(u.pathname.slice("/api/v1".length));
  const { doc } = contract();
  const op = route ? doc.paths[route]?.[method.toLowerCase()] : undefined;
  // Unknown paths and methods are the 404/405 answers of no route: nothing to hold them to.
  if (!route || !op) return null;
  const res = op.responses[String(status)];
  if (!res)
    return (
      `${method} ${route} answered ${status}, not documented (${Object.keys(op.responses).join(", ")}): ` +
      `${JSON.stringify(json)?.slice(0, 200)}`
    );
  const schema = res.content?.["application/json"]?.schema;
  if (!schema) return null;
  const key = `${method} ${route} ${status}`;
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile({ $ref: `${DOC_ID}#${pointer(route, method, status)}` })));
  return validate(json) ? null : `${key}: ${ajv.errorsText(validate.errors)}: ${JSON.stringify(json)?.slice(0, 200)}`;
}

/** Where the document's examples are kept (api/openapi/document.ts reads them). */
const EXAMPLES_FILE = `${ROOT}/api/openapi/examples.json`;
/** Fields whose values an example never shows (a key is shown once, to its owner). */
const SECRET_FIELDS = new Set(["api_key", "webhook_secret", "secret"]);
/** At most this many items of an array are kept: an example shows the shape, not the whole list. */
const EXAMPLE_ITEMS = 3;

/** An answer as an example: secrets replaced, arrays cut to their first items. */
function exampleOf(v: unknown, key = ""): unknown {
  if (SECRET_FIELDS.has(key) && typeof v === "string") return `${v.slice(0, 6)}…(not shown)`;
  if (Array.isArray(v)) return v.slice(0, EXAMPLE_ITEMS).map((x) => exampleOf(x));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, exampleOf(x, k)]));
  return v;
}

/**
 * With PIT_OPENAPI_EXAMPLES=1, a documented answer is kept in api/openapi/examples.json as its route's example for
 * its status, where that route and status have none yet (=replace: every time, the newest kept).
 */
function keepExample(method: string, url: string, status: number, json: unknown): void {
  const mode = process.env.PIT_OPENAPI_EXAMPLES;
  const route = routeOf(new URL(url, "http://x").pathname.slice("/api/v1".length));
  if (!mode || !route || json === undefined) return;
  const all = JSON.parse(readFileSync(EXAMPLES_FILE, "utf8")) as Record<string, Record<string, unknown>>;
  const key = `${method.toLowerCase()} ${route}`;
  if (all[key]?.[String(status)] !== undefined && mode !== "replace") return;
  all[key] = { ...all[key], [String(status)]: exampleOf(json) };
  const sorted = Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

/** Fails (or, with PIT_CONTRACT_LOG, records) an answer the document does not describe. */
export function holdToContract(method: string, url: string, status: number, json: unknown): void {
  const problem = contractProblem(method, url, status, json);
  if (!problem) {
    keepExample(method, url, status, json);
    return;
  }
  const log = process.env.PIT_CONTRACT_LOG;
  if (log) appendFileSync(log, `${problem}\n`);
  else throw new Error(`the answer breaks the OpenAPI document: ${problem}`);
}
