import { ignoreOverride, zodToJsonSchema } from "zod-to-json-schema";
import { ZodEffects, type ZodObject, type ZodRawShape, type ZodTypeAny, type ZodTypeDef } from "zod";
import { CATALOGUE, statusOf, type Code } from "../errors/index.js";
import { EDGE } from "../errors/groups.js";
import { nameOf, namedSchema } from "../http/answers.js";
import type { RouteEntry, Tag } from "../http/route.js";
import EXAMPLES from "./examples.json" with { type: "json" };

/** What the document reads of a route entry: the schemas it parses or only documents. */
type RouteDoc = Omit<RouteEntry, "handle" | "body" | "query" | "documents"> & { body?: ZodTypeAny; query?: ZodTypeAny };
const docOf = (e: RouteEntry): RouteDoc => ({
  ...e,
  body: e.body ?? e.documents?.body,
  query: e.query ?? e.documents?.query,
});

type Json = Record<string, unknown>;

/**
 * Real answers of the devnet, by `<method> <path>` and status (api/openapi/examples.json, written by
 * test/e2e/openapi.test.ts with PIT_OPENAPI_EXAMPLES=1 and checked against the answers' schemas there).
 */
export type Examples = Record<string, Record<string, unknown>>;

/** A zod request schema as JSON Schema (no $schema: OpenAPI 3.1 brings its own dialect); unknown fields refused. */
function requestSchemaOf(s: ZodTypeAny): Json {
  const { $schema: _drop, ...rest } = zodToJsonSchema(s, { target: "jsonSchema7", $refStrategy: "none" }) as Json;
  return rest;
}

/**
 * The named answer schemas met while generating the document: each becomes one component, which every answer
 * holding it refers to.
 */
type Named = Map<string, Json | null>;

/**
 * A zod answer schema as JSON Schema, every schema given to `named` inside it (not `self`) a $ref to its component,
 * its name added to `named` to be generated. An answer's object leaves additionalProperties unsaid: a client reads
 * the fields it knows, and SPEC may add fields.
 */
function answerSchemaOf(s: ZodTypeAny, named: Named, self?: string): Json {
  const override = (def: ZodTypeDef) => {
    const name = nameOf(def);
    if (!name || name === self) return ignoreOverride;
    if (!named.has(name)) named.set(name, null);
    return { $ref: `#/components/schemas/${name}` };
  };
  const { $schema: _drop, ...rest } = zodToJsonSchema(s, {
    target: "jsonSchema7",
    $refStrategy: "none",
    removeAdditionalStrategy: "strict",
    allowedAdditionalProperties: undefined,
    override,
  }) as Json;
  return rest;
}

/** Generates every named schema `named` lists and has not generated yet (those they hold included). */
function generateNamed(named: Named): void {
  for (let todo = [...named].filter(([, v]) => !v); todo.length; todo = [...named].filter(([, v]) => !v))
    for (const [name] of todo) named.set(name, answerSchemaOf(namedSchema(name)!, named, name));
}

/** The query's fields as OpenAPI parameters (a preprocessed query's: its inner object's). */
function queryParameters(q: ZodTypeAny): Json[] {
  const object = q instanceof ZodEffects ? q.innerType() : q;
  const shape = (object as unknown as ZodObject<ZodRawShape>).shape ?? {};
  return Object.entries(shape).map(([name, s]) => {
    const { description, ...schema } = requestSchemaOf(s as ZodTypeAny);
    return {
      name,
      in: "query",
      description: description ?? `the query's ${name}`,
      required: !(s as ZodTypeAny).isOptional(),
      schema,
    };
  });
}

/** What each path parameter names. */
const PATH_PARAMETERS: Record<string, string> = {
  id: "a hosted agent's id (`ha_<id>`)",
  address: "a token's 0x address",
  n: "a season's number",
};
const pathParameters = (path: string): Json[] =>
  [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    description: PATH_PARAMETERS[m[1]!] ?? m[1],
    schema: { type: "string" },
  }));

/** Every status a code is answered with (its own, and those of the contexts that change it). */
const statusesOf = (c: Code): number[] => [
  ...new Set([statusOf(c), ...Object.values((CATALOGUE[c] as { when?: Record<string, number> }).when ?? {})]),
];

/** Error answers by status, each listing the route's codes and the edge's, with a real refusal where one is kept. */
function errorResponses(codes: Code[], examples: Record<string, unknown>): Json {
  const byStatus = new Map<number, Code[]>();
  for (const c of new Set<Code>([...EDGE, ...codes]))
    for (const st of statusesOf(c)) byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
  return Object.fromEntries(
    [...byStatus].map(([status, cs]) => {
      const example = examples[String(status)];
      const schema = {
        allOf: [
          { $ref: "#/components/schemas/Error" },
          { properties: { error: { properties: { code: { enum: cs } } } } },
        ],
      };
      const media = { schema, ...(example !== undefined ? { example } : {}) };
      return [String(status), { description: `Refused: ${cs.join(", ")}`, content: { "application/json": media } }];
    }),
  );
}

/** `post/hosted/{id}/pause` as an operation id: `postHostedByIdPause`. */
function operationIdOf(r: Pick<RouteDoc, "method" | "path">): string {
  const camel = r.path
    .replace(/\{(\w+)\}/g, "By_$1")
    .replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ? ch.toUpperCase() : ""));
  return `${r.method}${camel}`;
}

/** The component of a route's answer: its `named` name, else the operation's (`postLiveQuote`: `PostLiveQuote`). */
function answerRef(r: RouteDoc, named: Named): Json {
  const name = nameOf(r.answer._def) ?? `${operationIdOf(r).replace(/^./, (ch) => ch.toUpperCase())}Answer`;
  if (!named.has(name)) named.set(name, answerSchemaOf(r.answer, named, name));
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * The success under its status, the errors under theirs; a status that also answers the success's shape takes either.
 */
function responsesOf(r: RouteDoc, named: Named, examples: Record<string, unknown>): Json {
  const status = String(r.status ?? 200);
  const success = answerRef(r, named);
  const example = examples[status];
  const out: Json = {
    [status]: {
      description: r.summary,
      content: { "application/json": { schema: success, ...(example !== undefined ? { example } : {}) } },
    },
    ...errorResponses(r.errors, examples),
  };
  if (r.alsoAnswers) {
    const errors = (out[String(r.alsoAnswers)] as Json | undefined)?.content as Json | undefined;
    const error = (errors?.["application/json"] as Json | undefined)?.schema;
    out[String(r.alsoAnswers)] = {
      description: "The success's shape (down), or a refusal",
      content: { "application/json": { schema: error ? { oneOf: [success, error] } : success } },
    };
  }
  return out;
}

function operation(r: RouteDoc, named: Named, examples: Examples): Json {
  const security = r.auth === "key" || r.auth === "key(wallet)" ? [{ apiKey: [] }] : [];
  return {
    tags: [r.tag?.name ?? UNTAGGED.name],
    summary: r.summary,
    description: [r.description ?? r.summary, r.extra ? "Served beyond SPEC.md (see the README)." : ""]
      .filter(Boolean)
      .join("\n\n"),
    operationId: operationIdOf(r),
    "x-auth": r.auth,
    security,
    parameters: [...pathParameters(r.path), ...(r.query ? queryParameters(r.query) : [])],
    ...(r.body
      ? { requestBody: { required: true, content: { "application/json": { schema: requestSchemaOf(r.body) } } } }
      : {}),
    responses: responsesOf(r, named, examples[`${r.method} ${r.path}`] ?? {}),
  };
}

/** The group of a route that names none. */
const UNTAGGED: Tag = { name: "Other", description: "Routes of no domain." };

/** The tags the routes name, in their first route's order. */
function tagsOf(routes: readonly RouteDoc[]): Tag[] {
  const tags = new Map<string, Tag>();
  for (const r of routes) tags.set((r.tag ?? UNTAGGED).name, r.tag ?? UNTAGGED);
  return [...tags.values()];
}

/** SPEC's error answer: `{error: {code, message}}`, more fields beside them on some codes. */
const ERROR_SCHEMA: Json = {
  type: "object",
  description: 'A refusal: a stable code and a message; some codes carry more fields (SPEC "Errors").',
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: Object.keys(CATALOGUE), description: "the stable code" },
        message: { type: "string", description: "what was refused and why, for a person" },
        request_id: {
          type: "string",
          description: "The request's id, as in its X-Request-Id header and the service's log line.",
        },
      },
      additionalProperties: true,
    },
  },
};

/**
 * The OpenAPI 3.1 document of every route (GET /api/v1/openapi.json), its request and answer schemas
 * generated from the zod schemas the routes validate with and answer by, every error as SPEC's
 * `{error: {code, message}}` with the route's codes by status, and real answers as examples.
 */
export function openApiDocument(o: {
  version: string;
  serverUrl?: string;
  routes: readonly RouteEntry[];
  examples?: Examples;
}): Json {
  const paths: Json = {};
  const named: Named = new Map();
  const routes = o.routes.map(docOf);
  for (const r of routes)
    paths[r.path] = {
      ...((paths[r.path] as Json | undefined) ?? {}),
      [r.method]: operation(r, named, o.examples ?? (EXAMPLES as Examples)),
    };
  generateNamed(named);
  return {
    openapi: "3.1.0",
    info: {
      title: "Wallet-bound trading service for agents on chain 4663",
      version: o.version,
      description:
        "Every route of /api/v1. Amounts are atom strings; errors are {error: {code, message}} with a stable code.",
      contact: { name: "pit-trading-service" },
      license: { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: o.serverUrl ?? "/api/v1", description: "This server's API" }],
    tags: tagsOf(routes),
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "Authorization: Bearer pit_w_…" } },
      schemas: {
        Error: ERROR_SCHEMA,
        ...Object.fromEntries([...named].sort(([a], [b]) => a.localeCompare(b))),
      },
    },
    paths,
  };
}
