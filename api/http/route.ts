import type { Context, Handler, Hono, MiddlewareHandler } from "hono";
import type { z, ZodTypeAny } from "zod";
import type { AppEnv } from "./env.js";
import { parseBody, type Code } from "../errors/index.js";
import { countingFailedSignatures, notLockedOut } from "./auth.js";
import type { HttpKit } from "./kit.js";
import { limit, type Take } from "./limits.js";

/** Who may call a route (SPEC "Authentication"); "key(wallet)" is a key whose wallet the route acts for. */
export type Auth = "none" | "key" | "key(wallet)" | "signature";

/** How an agent reaches a route over MCP (api/mcp/server.ts): one tool that calls it as the caller. */
export type McpTool = {
  name: string;
  description: string;
  /** The tool's arguments: a GET's become its query string (true as `1`), a POST's its JSON body. */
  input: z.AnyZodObject;
  /** A tool that changes nothing (a read); false for tools that answer something to sign. */
  readOnly: boolean;
  /** Texts added to a successful answer (what to check before signing). */
  notes?: string[];
};

/** A group of the document's routes (one per domain): its name and what its routes are for. */
export type Tag = { name: string; description: string };

/** What a handler is given: the input as the entry's schemas parsed it, what `first` found, and the request. */
export type RouteCall<B, Q, F = undefined> = {
  body: B;
  query: Q;
  /** What the entry's `first` step found (the caller's wallet, the agent the path names...). */
  found: F;
  param: (name: string) => string;
  c: Context<AppEnv>;
};

/** The request before its input is parsed: what `first` and `around` see. */
export type RawCall = { param: (name: string) => string; c: Context<AppEnv> };

/**
 * One route of /api/v1, declared once (issue 27): the app mounts it, the OpenAPI document
 * describes it, test/e2e/routeLimits.test.ts holds its buckets, and MCP offers it as a tool where
 * `mcp` is set. The edge checks a `lockout` entry's client, spends `before` (client buckets counted even for a bad
 * key), checks the
 * key, spends `limits`, parses the query and body with the entry's schemas (a schema's own
 * refusals: BAD_REQUEST, or `unknownField` for a field it does not know), then calls `handle`.
 */
// A list mixes entries over different services; each handler is checked against its own at route().
// biome-ignore lint/suspicious/noExplicitAny: see above
export type RouteEntry<S = any, B = Record<string, unknown>, Q = Record<string, string>, F = any> = {
  method: "get" | "post";
  /** The path under /api/v1, OpenAPI style: `/hosted/{id}`. */
  path: string;
  auth: Auth;
  /** A key that may act although its wallet is sanctioned (SPEC "Authentication" 10: end what it started). */
  evenSanctioned?: boolean;
  /**
   * A request signed by a wallet (sign-in, revoke-all): refused 429 while the client is locked out
   * by failed authentications, checked before any bucket (a locked-out client's attempts spend
   * nothing, the instance-wide bucket included); a wrong or stale signature counts one failure.
   */
  lockout?: boolean;
  /** Buckets spent before the key is checked (per client), then `limits` after it. */
  before?: Take[];
  limits: Take[];
  /**
   * Spend `limits` only for a request this says costs them (fast: a call that skips the simulation spends only the
   * key's bucket).
   */
  limitsWhen?: (body: Record<string, unknown>) => boolean;
  summary: string;
  /** What the route does and answers, in SPEC's words (the document's operation description). */
  description?: string;
  /** The document's group of the route: its domain's (routesFor sets it). */
  tag?: Tag;
  /** The JSON body's and query's schemas: the edge parses with them and the handler gets their output. */
  // biome-ignore lint/suspicious/noExplicitAny: a schema's input type is whatever JSON it accepts
  body?: z.ZodType<B, z.ZodTypeDef, any>;
  // biome-ignore lint/suspicious/noExplicitAny: as body
  query?: z.ZodType<Q, z.ZodTypeDef, any>;
  /** The refusal for a field the body's schema does not know (default BAD_REQUEST). */
  unknownField?: "UNKNOWN_FIELD";
  /** Schemas the document shows for a route whose action still parses its raw input itself. */
  documents?: { body?: ZodTypeAny; query?: ZodTypeAny };
  /**
   * The success answer's schema (SPEC's answer shape, api/<domain>/answers.ts): the document's, what the e2e suite
   * holds every real answer to, and what the document's examples are checked against. Never parsed at run time: the
   * answer goes out as the handler made it.
   */
  answer: ZodTypeAny;
  status?: 200 | 201;
  errors: Code[];
  /** Not in SPEC: served beyond it (the docs/ page of its domain says why). */
  extra?: boolean;
  /** A status that also answers the success's shape (health: 503 when down). */
  alsoAnswers?: 503;
  mcp?: McpTool;
  /**
   * What the action finds before it reads the input (the caller's bound wallet, the agent the
   * path names): its refusals (WALLET_NOT_BOUND, NOT_FOUND, FORBIDDEN...) come before a bad field's.
   */
  first?: (call: RawCall, s: S) => F | Promise<F>;
  /**
   * Wraps `first`, the parse and `handle` (a trade route records its refusals, a bad field's
   * included, as refused trades).
   */
  around?: (call: RawCall, s: S, work: () => Promise<unknown>) => Promise<unknown>;
  /** The work: its domain's service `s` (only that one), the parsed input; a Response passes through as is. */
  handle: (call: RouteCall<B, Q, F>, s: S) => unknown;
};

/** An entry whose handler sees its input typed by its schemas (S: the domain's service). */
export function route<S, B = Record<string, unknown>, Q = Record<string, string>, F = undefined>(
  e: RouteEntry<S, B, Q, F>,
): RouteEntry<S> {
  return e as unknown as RouteEntry<S>;
}

/**
 * `route` for the entries of one domain's service S, the rest inferred from the entry (the body's
 * and query's schemas, what `first` finds), each in the domain's `tag`: `const route = routesFor<HostedService>(tag)`.
 */
export const routesFor =
  <S>(tag?: Tag) =>
  <B = Record<string, unknown>, Q = Record<string, string>, F = undefined>(e: RouteEntry<S, B, Q, F>): RouteEntry<S> =>
    (tag ? { tag, ...e } : e) as unknown as RouteEntry<S>;

/** A domain's routes and how the root picks that domain's service from its own (api/routes.ts). */
// biome-ignore lint/suspicious/noExplicitAny: as RouteEntry's service
export type Mount<Root, S = any> = { entries: readonly RouteEntry<S>[]; service: (root: Root) => S };
export const mount = <Root, S>(entries: readonly RouteEntry<S>[], service: (root: Root) => S): Mount<Root, S> => ({
  entries,
  service,
});

/** `/hosted/{id}` as Hono writes it: `/hosted/:id`. */
export const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

function authOf(e: Pick<RouteEntry, "auth" | "evenSanctioned">, http: HttpKit): MiddlewareHandler<AppEnv>[] {
  if (e.auth === "key" || e.auth === "key(wallet)") return [e.evenSanctioned ? http.keyedEvenSanctioned : http.keyed];
  return [];
}

/** The lockout check of an entry signed by a wallet, before its buckets. */
function lockoutOf(e: Pick<RouteEntry, "lockout">, http: HttpKit): MiddlewareHandler<AppEnv>[] {
  if (!e.lockout) return [];
  return [
    async (c, next) => {
      await notLockedOut(http.limiter, c.get("clientAddr"));
      await next();
    },
  ];
}

/** `first`, then the input parsed by the entry's schemas, then `handle`. */
function callOf<S>(e: RouteEntry<S>, s: S, raw: RawCall): unknown {
  // No promise unless `first` needs one: most routes have no first step, and the edge is on every request.
  if (!e.first) return withInput(e, s, raw, undefined);
  return Promise.resolve(e.first(raw, s)).then((found) => withInput(e, s, raw, found));
}

/** The input parsed by the entry's schemas, then `handle`. */
function withInput<S>(e: RouteEntry<S>, s: S, raw: RawCall, found: unknown): unknown {
  const rawQuery = raw.c.req.query();
  const query = e.query ? parseBody(e.query, rawQuery) : rawQuery;
  const rawBody = raw.c.get("body") ?? {};
  const body = e.body ? parseBody(e.body, rawBody, { unknownField: e.unknownField }) : rawBody;
  return e.handle({ param: raw.param, c: raw.c, body, query, found }, s);
}

/** The call, wrapped by `around` and by the lockout's count of failed signatures where the entry has them. */
function runOf<S>(e: RouteEntry<S>, s: S, http: HttpKit, raw: RawCall): unknown {
  if (!e.around && !e.lockout) return callOf(e, s, raw);
  const work = async () => (e.around ? e.around(raw, s, async () => callOf(e, s, raw)) : callOf(e, s, raw));
  return e.lockout ? countingFailedSignatures(http.limiter, raw.c.get("clientAddr"), work) : work();
}

/** A path parameter of the request bound as `this` (bound, not a closure: no function is named per request). */
function paramOf(this: Context<AppEnv>, name: string): string {
  return this.req.param(name)!;
}

/**
 * The handler: the call, the answer as JSON under its status (a Response passes through). It makes
 * no promise of its own where the call makes none: the edge runs on every request (a throw is
 * Hono's to answer, as from an async handler).
 */
function handlerOf<S>(e: RouteEntry<S>, s: S, http: HttpKit): Handler<AppEnv> {
  const answer = (c: Context<AppEnv>, out: unknown) =>
    out instanceof Response ? out : c.json(out as object, e.status ?? 200);
  return (c) => {
    const out = runOf(e, s, http, { param: paramOf.bind(c), c });
    return out instanceof Promise ? out.then((o) => answer(c, o)) : answer(c, out);
  };
}

/** The middleware `m`, skipped for a request whose JSON body `when` turns down. */
function onlyWhen(when: RouteEntry["limitsWhen"], m: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return when ? (c, next) => (when(c.get("body") ?? {}) ? m(c, next) : next()) : m;
}

/** Mounts the entries on `app` in their order (a fixed path before a parameter that would match it). */
export function mountRoutes<S>(app: Hono<AppEnv>, entries: readonly RouteEntry<S>[], s: S, http: HttpKit): void {
  for (const e of entries) {
    const before = e.before?.length ? [limit(http.limiter, ...e.before)] : [];
    const after = e.limits.length ? [onlyWhen(e.limitsWhen, limit(http.limiter, ...e.limits))] : [];
    app.on(
      [e.method.toUpperCase()],
      [honoPath(e.path)],
      ...lockoutOf(e, http),
      ...before,
      ...authOf(e, http),
      ...after,
      handlerOf(e, s, http),
    );
  }
}
