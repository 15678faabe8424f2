import { appendFileSync } from "node:fs";
import Ajv, { type ValidateFunction } from "ajv";
import { openApiDocument } from "../../api/openapi/document.js";
import { API_ROUTES } from "../../api/routes.js";

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
/** Built on first use: a test file that never calls the API pays nothing for it. */
let built: { doc: Doc; templates: { path: string; re: RegExp }[] } | null = null;
function contract() {
  if (!built) {
    const doc = openApiDocument({ version: "test", routes: API_ROUTES }) as Doc;
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
  if (!validate) compiled.set(key, (validate = ajv.compile({ ...schema, components: doc.components })));
  return validate(json) ? null : `${key}: ${ajv.errorsText(validate.errors)}: ${JSON.stringify(json)?.slice(0, 200)}`;
}

/** Fails (or, with PIT_CONTRACT_LOG, records) an answer the document does not describe. */
export function holdToContract(method: string, url: string, status: number, json: unknown): void {
  const problem = contractProblem(method, url, status, json);
  if (!problem) return;
  const log = process.env.PIT_CONTRACT_LOG;
  if (log) appendFileSync(log, `${problem}\n`);
  else throw new Error(`the answer breaks the OpenAPI document: ${problem}`);
}
