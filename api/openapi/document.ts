import { zodToJsonSchema } from "zod-to-json-schema";
import { ZodEffects, type ZodObject, type ZodRawShape, type ZodTypeAny } from "zod";
import { CATALOGUE, statusOf, type Code } from "../errors/index.js";
import { EDGE } from "../errors/groups.js";
import type { RouteEntry } from "../http/route.js";

/** What the document reads of a route entry: the schemas it parses or only documents. */
type RouteDoc = Omit<RouteEntry, "handle" | "body" | "query" | "documents"> & { body?: ZodTypeAny; query?: ZodTypeAny };
const docOf = (e: RouteEntry): RouteDoc => ({
  ...e,
  body: e.body ?? e.documents?.body,
  query: e.query ?? e.documents?.query,
});

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema (no $schema: OpenAPI 3.1 brings its own dialect). */
function schemaOf(s: ZodTypeAny): Json {
  const { $schema: _drop, ...rest } = zodToJsonSchema(s, { target: "jsonSchema7", $refStrategy: "none" }) as Json;
  return rest;
}

/** The query's fields as OpenAPI parameters (a preprocessed query's: its inner object's). */
function queryParameters(q: ZodTypeAny): Json[] {
  const object = q instanceof ZodEffects ? q.innerType() : q;
  const shape = (object as unknown as ZodObject<ZodRawShape>).shape ?? {};
  return Object.entries(shape).map(([name, s]) => ({
    name,
    in: "query",
    required: !(s as ZodTypeAny).isOptional(),
    schema: schemaOf(s as ZodTypeAny),
  }));
}

const pathParameters = (path: string): Json[] =>
  [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));

/** Every status a code is answered with (its own, and those of the contexts that change it). */
const statusesOf = (c: Code): number[] => [
  ...new Set([statusOf(c), ...Object.values((CATALOGUE[c] as { when?: Record<string, number> }).when ?? {})]),
];

/** Error answers by status, each listing the route's codes and the edge's. */
function errorResponses(codes: Code[]): Json {
  const byStatus = new Map<number, Code[]>();
  for (const c of new Set<Code>([...EDGE, ...codes]))
    for (const st of statusesOf(c)) byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
  return Object.fromEntries(
    [...byStatus].map(([status, cs]) => [
      String(status),
      {
        description: cs.join(", "),
        content: {
          "application/json": {
            schema: {
              allOf: [
                { $ref: "#/components/schemas/Error" },
                { properties: { error: { properties: { code: { enum: cs } } } } },
              ],
            },
          },
        },
      },
    ]),
  );
}

/**
 * The success under its status, the errors under theirs; a status that also answers the success's shape takes either.
 */
function responsesOf(r: RouteDoc): Json {
  const success = { type: "object", required: r.answer, additionalProperties: true };
  const out: Json = {
    [String(r.status ?? 200)]: { description: "success", content: { "application/json": { schema: success } } },
    ...errorResponses(r.errors),
  };
  if (r.alsoAnswers) {
    const errors = (out[String(r.alsoAnswers)] as Json | undefined)?.content as Json | undefined;
    const error = (errors?.["application/json"] as Json | undefined)?.schema;
    out[String(r.alsoAnswers)] = {
      description: "the success's shape (down), or an error",
      content: { "application/json": { schema: error ? { oneOf: [success, error] } : success } },
    };
  }
  return out;
}

/** `post/hosted/{id}/pause` as an operation id: `postHostedByIdPause`. */
function operationIdOf(r: Pick<RouteDoc, "method" | "path">): string {
  const camel = r.path
    .replace(/\{(\w+)\}/g, "By_$1")
    .replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ? ch.toUpperCase() : ""));
  return `${r.method}${camel}`;
}

function operation(r: RouteDoc): Json {
  const security = r.auth === "key" || r.auth === "key(wallet)" ? [{ apiKey: [] }] : [];
  return {
    summary: r.summary,
    operationId: operationIdOf(r),
    ...(r.extra ? { description: "Served beyond SPEC.md (see the README)." } : {}),
    "x-auth": r.auth,
    security,
    parameters: [...pathParameters(r.path), ...(r.query ? queryParameters(r.query) : [])],
    ...(r.body
      ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(r.body) } } } }
      : {}),
    responses: responsesOf(r),
  };
}

/**
 * The OpenAPI 3.1 document of every route (GET /api/v1/openapi.json), its request schemas
 * generated from the zod schemas the routes validate with, every error as SPEC's
 * `{error: {code, message}}` with the route's codes by status.
 */
export function openApiDocument(o: { version: string; serverUrl?: string; routes: readonly RouteEntry[] }): Json {
  const paths: Json = {};
  for (const r of o.routes.map(docOf))
    paths[r.path] = { ...((paths[r.path] as Json | undefined) ?? {}), [r.method]: operation(r) };
  return {
    openapi: "3.1.0",
    info: {
      title: "Wallet-bound trading service for agents on chain 4663",
      version: o.version,
      description:
        "Every route of /api/v1. Amounts are atom strings; errors are {error: {code, message}} with a stable code.",
    },
    servers: [{ url: o.serverUrl ?? "/api/v1" }],
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "Authorization: Bearer pit_w_…" } },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: {
                code: { type: "string", enum: Object.keys(CATALOGUE) },
                message: { type: "string" },
                request_id: {
                  type: "string",
                  description: "The request's id, as in its X-Request-Id header and the service's log line.",
                },
              },
              additionalProperties: true,
            },
          },
        },
      },
    },
    paths,
  };
}
