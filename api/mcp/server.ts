import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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

const leagueInput = z.object({ season: z.number().int().optional(), board: z.enum(["prize", "practice"]).optional() });

/** A query string of the given values; booleans as the REST flag `1` (false: left out). */
function query(args: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) if (v !== undefined && v !== false) q.set(k, v === true ? "1" : String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The REST answer as the tool's result: its JSON as text, isError for a refusal ({error: {code, message}}). */
function result(r: { status: number; json: unknown }, ...notes: string[]): CallToolResult {
  const isError = r.status >= 400;
  return {
    content: [
      { type: "text", text: JSON.stringify(r.json) },
      ...(isError ? [] : notes.map((text) => ({ type: "text" as const, text }))),
    ],
    isError,
  };
}

const KEYED =
  "Needs the API key: send Authorization: Bearer pit_w_... on the MCP HTTP requests (without it: UNAUTHORIZED).";

/**
 * The tool of each route entry marked for agents: its arguments as the route's query (GET) or body (POST), called as
 * the MCP caller.
 */
function entryTools(server: McpServer, rest: RestCall, entries: readonly RouteEntry[]): void {
  for (const e of entries) {
    const t = e.mcp;
    if (!t) continue;
    const description = e.auth === "key" || e.auth === "key(wallet)" ? `${t.description} ${KEYED}` : t.description;
    const annotations = t.readOnly ? READ : { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
    const path = `/api/v1${e.path}`;
    server.registerTool(
      t.name,
      { description, inputSchema: t.input, annotations },
      async (a: Record<string, unknown>) =>
        result(
          e.method === "get" ? await rest("GET", `${path}${query(a)}`) : await rest("POST", path, a),
          ...(t.notes ?? []),
        ),
    );
  }
}

/** A server for one MCP request: its tools call REST through `rest`, bound to that request's caller. */
export function mcpServer(rest: RestCall, version: string, entries: readonly RouteEntry[]): McpServer {
  const server = new McpServer({ name: "pit-trading-service", version }, { capabilities: { tools: {} } });
  entryTools(server, rest, entries);
  server.registerTool(
    "league",
    {
      description: "The league (GET /api/v1/league) and a board's standings (GET /api/v1/league/standings). No key.",
      inputSchema: leagueInput,
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
  return server;
}
