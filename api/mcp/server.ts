import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RouteEntry } from "../http/route.js";

/**
 * The MCP server (issue 19 part 3): every tool is one or two calls to the app's own REST routes,
 * made as the MCP caller (its headers, its API key), so validation, rate limits and error codes
 * are the REST ones unchanged. It never holds, asks for or receives a private key: prepare_trade
 * answers an unsigned plan the agent verifies and signs itself.
 */

/** One call to the app's REST API as the MCP caller; the answer's status and JSON body. */
export type RestCall = (
  method: "GET" | "POST",
  path: string,
  body?: Record<string, unknown>,
) => Promise<{ status: number; json: unknown }>;

const READ = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

const leagueInput = z
  .object({
    season: z.number().int().optional().describe("season number (default: the current one)"),
    board: z.enum(["prize", "practice"]).optional().describe("which board's standings (default prize)"),
  })
  .strict();

const followInput = z
  .object({ tx_hash: z.string().describe("the transaction hash live/submit (or a session trade) answered") })
  .strict();

/** How far back follow_trade looks: me/trades pages of 100, newest first. */
const FOLLOW_PAGES = 5;

/** A tool's work on the arguments exactly as the client sent them. */
type ToolRun = (args: Record<string, unknown>) => Promise<CallToolResult>;
type AddTool = (
  name: string,
  config: {
    description: string;
    inputSchema: z.AnyZodObject;
    outputSchema?: z.AnyZodObject;
    annotations: typeof READ | Record<string, boolean>;
  },
  run: ToolRun,
) => void;

/**
 * An answer schema as an output schema: every object in it open to more fields, as answers are (SPEC lists a
 * route's fields, and an answer may carry more), so a client holding the answer to it checks what is named.
 */
function opened(s: z.ZodTypeAny): z.ZodTypeAny {
  if (s instanceof z.ZodObject)
    return z
      .object(Object.fromEntries(Object.entries(s.shape as z.ZodRawShape).map(([k, v]) => [k, opened(v)])))
      .passthrough();
  if (s instanceof z.ZodArray) return z.array(opened(s.element));
  if (s instanceof z.ZodOptional) return opened(s.unwrap()).optional();
  if (s instanceof z.ZodNullable) return opened(s.unwrap()).nullable();
  if (s instanceof z.ZodUnion) return z.union(s.options.map(opened) as [z.ZodTypeAny, z.ZodTypeAny]);
  if (s instanceof z.ZodRecord) return z.record(opened(s.valueSchema));
  if (s instanceof z.ZodEffects) return opened(s.innerType());
  if (s instanceof z.ZodLazy) return opened(s.schema);
  return s;
}

/**
 * A union of object answers as one object (MCP wants an object output schema): every field of any option, a field
 * of several options any of their types, required only where every option requires it (prepare_trade: a plan, or
 * with action revoke the revocation's plan).
 */
function unionAsObject(u: z.ZodUnion<readonly [z.ZodTypeAny, ...z.ZodTypeAny[]]>): z.AnyZodObject | undefined {
  const options: readonly z.ZodTypeAny[] = u.options;
  if (!options.every((o) => o instanceof z.ZodObject)) return undefined;
  const shapes = options.map((o) => (o as z.AnyZodObject).shape as z.ZodRawShape);
  const keys = [...new Set(shapes.flatMap((sh) => Object.keys(sh)))];
  const shape = Object.fromEntries(
    keys.map((k) => {
      const each = shapes.map((sh) => sh[k]).filter((x): x is z.ZodTypeAny => x !== undefined);
      const field = each.length === 1 ? each[0]! : z.union(each as [z.ZodTypeAny, z.ZodTypeAny, ...z.ZodTypeAny[]]);
      const required = each.length === shapes.length && each.every((x) => !x.isOptional());
      return [k, required ? field : field.optional()];
    }),
  );
  const said = options.map((o) => o.description).filter(Boolean);
  return z.object(shape).describe(said.length ? `One of: ${said.join(" Or: ")}` : "One of several answers.");
}

/** Each route's output schema, built once for the process (a server is built per MCP request). */
const OUTPUTS = new WeakMap<z.ZodTypeAny, z.AnyZodObject | null>();

/** The route's answer schema (the OpenAPI document's) as its tool's output schema, opened; none if not an object. */
function outputOf(answer: z.ZodTypeAny): z.AnyZodObject | undefined {
  let out = OUTPUTS.get(answer);
  if (out === undefined) {
    const object = answer instanceof z.ZodObject ? answer : answer instanceof z.ZodUnion ? unionAsObject(answer) : null;
    out = object ? (opened(object) as z.AnyZodObject) : null;
    OUTPUTS.set(answer, out);
  }
  return out ?? undefined;
}

/** A query string of the given values; booleans as the REST flag `1` (false: left out). */
function query(args: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) if (v !== undefined && v !== false) q.set(k, v === true ? "1" : String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * The REST answer as the tool's result: its JSON as structured content and as text (for clients that
 * read only text); a refusal ({error: {code, message}}) as text with isError.
 */
function result(r: { status: number; json: unknown }, ...notes: string[]): CallToolResult {
  const isError = r.status >= 400;
  // A refusal is text alone: a tool's output schema describes its answer, and clients hold structured content to it.
  const structured = !isError && r.json !== null && typeof r.json === "object" && !Array.isArray(r.json);
  return {
    content: [
      { type: "text", text: JSON.stringify(r.json) },
      ...(isError ? [] : notes.map((text) => ({ type: "text" as const, text }))),
    ],
    ...(structured ? { structuredContent: r.json as Record<string, unknown> } : {}),
    isError,
  };
}

/** A refusal made here, shaped as REST's (a path argument missing, a trade not found). */
const refusal = (status: number, code: string, message: string) =>
  result({ status, json: { error: { code, message } } });

/** The route's path with its `{name}` arguments filled in (and taken out of the rest), or the first missing one. */
function fillPath(
  path: string,
  args: Record<string, unknown>,
): { path: string; rest: Record<string, unknown> } | string {
  const rest = { ...args };
  let missing: string | null = null;
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    // A dot segment would be resolved away by the URL and call another route: refused like an absent one.
    if (typeof v !== "string" || v === "" || v === "." || v === "..") missing ??= name;
    return encodeURIComponent(String(v ?? ""));
  });
  return missing ?? { path: filled, rest };
}

const KEYED =
  "Needs the API key: send Authorization: Bearer pit_w_... on the MCP HTTP requests (without it: UNAUTHORIZED).";

/**
 * The tool of each route entry marked for agents: its arguments as the route's path and query (GET) or
 * body (POST), called as the MCP caller.
 */
function entryTools(add: AddTool, rest: RestCall, entries: readonly RouteEntry[]): void {
  for (const e of entries) {
    const t = e.mcp;
    if (!t) continue;
    const description = e.auth === "key" || e.auth === "key(wallet)" ? `${t.description} ${KEYED}` : t.description;
    const annotations = t.readOnly ? READ : { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
    const outputSchema = outputOf(e.answer);
    add(t.name, { description, inputSchema: t.input, outputSchema, annotations }, async (a) => {
      const filled = fillPath(`/api/v1${e.path}`, a);
      if (typeof filled === "string") return refusal(400, "BAD_REQUEST", `${filled} is required`);
      const answer =
        e.method === "get"
          ? await rest("GET", `${filled.path}${query(filled.rest)}`)
          : await rest("POST", filled.path, filled.rest);
      return result(answer, ...(t.notes ?? []));
    });
  }
}

/** The answer schema of one declared route, opened as output schemas are (a composed tool answers in its parts'). */
function answerOf(entries: readonly RouteEntry[], method: "get" | "post", path: string): z.AnyZodObject {
  const e = entries.find((x) => x.method === method && x.path === path);
  const out = e && outputOf(e.answer);
  if (!out) throw new Error(`MCP: no object answer declared for ${method} ${path}`);
  return out;
}

/** The league and a board's standings in one call. */
function leagueTool(add: AddTool, rest: RestCall, entries: readonly RouteEntry[]): void {
  add(
    "league",
    {
      description: "The league (GET /api/v1/league) and a board's standings (GET /api/v1/league/standings). No key.",
      inputSchema: leagueInput,
      outputSchema: z.object({
        league: answerOf(entries, "get", "/league"),
        standings: answerOf(entries, "get", "/league/standings"),
      }),
      annotations: READ,
    },
    async (a) => {
      const league = await rest("GET", "/api/v1/league");
      if (league.status >= 400) return result(league);
      const standings = await rest("GET", `/api/v1/league/standings${query(a)}`);
      return standings.status >= 400
        ? result(standings)
        : result({ status: 200, json: { league: league.json, standings: standings.json } });
    },
  );
}

/** One trade of the key's wallet by its hash: its record from me/trades (refused ones included), newest first. */
function followTradeTool(add: AddTool, rest: RestCall, entries: readonly RouteEntry[]): void {
  const trades = answerOf(entries, "get", "/me/trades").shape;
  add(
    "follow_trade",
    {
      description:
        "One trade of the key's wallet by transaction hash: its me/trades record (status pending, mined, " +
        `reverted, dropped or refused; amount_out once mined), found among the latest ${FOLLOW_PAGES * 100}. ` +
        "Call again to follow a pending one. " +
        KEYED,
      inputSchema: followInput,
      outputSchema: z.object({ wallet: trades.wallet, trade: (trades.trades as z.ZodArray<z.ZodTypeAny>).element }),
      annotations: READ,
    },
    async (a) => {
      const bad = followInput.safeParse(a);
      if (!bad.success) return refusal(400, "BAD_REQUEST", bad.error.issues.map((i) => i.message).join("; "));
      const hash = bad.data.tx_hash.toLowerCase();
      let before: unknown = null;
      for (let page = 0; page < FOLLOW_PAGES; page++) {
        const r = await rest("GET", `/api/v1/me/trades?limit=100&refused=1${before ? `&before=${before}` : ""}`);
        if (r.status >= 400) return result(r);
        const j = r.json as { wallet: string; trades: { tx_hash: string | null }[]; next_before: unknown };
        const trade = j.trades.find((t) => t.tx_hash?.toLowerCase() === hash);
        if (trade) return result({ status: 200, json: { wallet: j.wallet, trade } });
        if (j.next_before === null) break;
        before = j.next_before;
      }
      return refusal(404, "NOT_FOUND", `no trade with tx_hash ${hash} among this wallet's latest trades`);
    },
  );
}

/**
 * A server for one MCP request: its tools call REST through `rest`, bound to that request's caller.
 * A call reaches its tool with the arguments as sent, so REST judges them (an unknown one refused as
 * REST refuses it, never dropped on the way); the tool list never changes, so none is announced.
 */
export function mcpServer(rest: RestCall, version: string, entries: readonly RouteEntry[]): McpServer {
  const server = new McpServer({ name: "pit-trading-service", version }, { capabilities: { tools: {} } });
  const runs = new Map<string, ToolRun>();
  const add: AddTool = (name, config, run) => {
    server.registerTool(name, config, (a: Record<string, unknown>) => run(a));
    runs.set(name, run);
  };
  entryTools(add, rest, entries);
  leagueTool(add, rest, entries);
  followTradeTool(add, rest, entries);
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const run = runs.get(request.params.name);
    if (!run) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return run(request.params.arguments ?? {});
  });
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
