import type { Logger } from "pino";
import type { Address } from "viem";
import type { Quota } from "./rateLimit.js";

/** A live API key as the edge hands it to routes (auth/ looks it up; the edge only carries it). */
export type KeyRecord = { keyId: number; wallet: Address; account: { id: number; name: string }; expiresAt: number };

/** What the edge's middleware sets on a request for the routes below it. */
export type AppEnv = {
  Variables: {
    log: Logger;
    requestId: string;
    errorCode: string | undefined;
    /** The client as per-client limits count it: an IPv4 address, or an IPv6 /64 (api/http/guards.ts). */
    clientAddr: string;
    body: Record<string, unknown>;
    key: KeyRecord;
    /** The tightest rate bucket this request spent from, as its RateLimit headers show it (api/http/limits.ts). */
    quota: Quota | undefined;
  };
};

/**
 * What a request made in process carries in its bindings besides the node socket's: `via` names the route that made
 * it (MCP's tools call REST in process). The request log counts such a call in its line, not in the duration
 * histogram: the outer request is counted there once (a tool call was two requests in the metrics).
 */
export type InnerCall = { via?: "mcp" };
export const innerCallOf = (env: unknown): InnerCall["via"] => (env as InnerCall | undefined)?.via;
