import type { Context } from "hono";
import type { AppEnv } from "../http/env.js";
import { HOSTED, WALLET } from "../errors/groups.js";
import { Refusal, type Code } from "../errors/index.js";
import type { Take } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { route, type RouteCall } from "../http/route.js";
import type { Hosted } from "./index.js";
import { attestationBody, createRequest, logsQuery, noBody, sessionBody, updateRequest } from "./request.js";
import { ownConnect } from "./aiAccount.js";

/** What SPEC "Hosted agents" needs: the hosted service's owner actions (not its store or scheduler). */
export type HostedService = Pick<
  Hosted,
  | "create"
  | "list"
  | "detail"
  | "update"
  | "pause"
  | "resume"
  | "stop"
  | "remove"
  | "logs"
  | "rotateWebhookSecret"
  | "executor"
  | "refundGas"
  | "rotateExecutor"
  | "attachSession"
  | "stockAttestation"
  | "revokeStockAttestation"
  | "aiInfo"
  | "spend"
  | "connectOwn"
  | "disconnectOwn"
>;

/** Per client before the key (a bad key still counts), then per key. */
const before: Take[] = [["hostedClient", RATE_RULES.hostedClient, "client"]];
const limits: Take[] = [["hostedKey", RATE_RULES.hostedKey, "key"]];
const auth = "key(wallet)" as const;
const AGENT_SETTINGS: Code[] = [...HOSTED, "TOKEN_NOT_ALLOWED", "LEAGUE_PAIRS", "LEAGUE_INTERVAL"];

const who = (c: Context<AppEnv>) => ({ wallet: c.get("key").wallet, keyId: c.get("key").keyId });
const id = (call: RouteCall<unknown, unknown>) => call.param("id");
/** A POST that takes no body: any field is UNKNOWN_FIELD with this message (an empty strict schema's would read "unknown field a, b"), before the action. */
function bare(body: Record<string, unknown>) {
  const extra = Object.keys(body);
  if (extra.length) throw new Refusal("UNKNOWN_FIELD", `unknown field ${extra[0]}; this route takes no body`);
}

/**
 * SPEC "Hosted agents": every route, and the owner's own gateway key (ai/own, ai/own/disconnect).
 * Registered in this order: "/hosted/ai" before "/hosted/{id}" ("ai" is not an agent id).
 * Bodies and queries are `documents` only: each action parses its input itself after finding the
 * owner's wallet or agent (WALLET_NOT_BOUND, NOT_FOUND, FORBIDDEN, and ai/own's HOSTED_UNAVAILABLE
 * come before a bad field), so moving the parse to the edge would change which refusal a request gets.
 */
export const hostedRoutes = [
  route<HostedService>({
    method: "post",
    path: "/hosted",
    auth,
    before,
    limits,
    summary: "Creates a hosted agent",
    documents: { body: createRequest },
    status: 201,
    answer: ["id", "brain", "mode", "status"],
    errors: AGENT_SETTINGS,
    handle: ({ body, c }, s) => s.create(body, who(c)),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted/ai",
    auth,
    before,
    limits,
    summary: "The AI-model brain's models, pool and funding",
    answer: ["models"],
    errors: WALLET,
    handle: ({ c }, s) => s.aiInfo(who(c)),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/ai/own",
    auth,
    before,
    limits,
    summary: "Connects the owner's own gateway key",
    documents: { body: ownConnect },
    answer: [],
    errors: HOSTED,
    extra: true,
    handle: ({ body, c }, s) => s.connectOwn(who(c), body),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/ai/own/disconnect",
    auth,
    before,
    limits,
    summary: "Disconnects the owner's own gateway key",
    documents: { body: noBody },
    answer: [],
    errors: HOSTED,
    extra: true,
    handle: ({ body, c }, s) => (bare(body), s.disconnectOwn(who(c))),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted/{id}/spend",
    auth,
    before,
    limits,
    summary: "An AI agent's spend",
    documents: { query: logsQuery },
    answer: [],
    errors: [...HOSTED, "NOT_AI"],
    handle: (call, s) => s.spend(id(call), call.query, who(call.c)),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted",
    auth,
    before,
    limits,
    summary: "The wallet's hosted agents",
    answer: ["agents"],
    errors: WALLET,
    handle: ({ c }, s) => s.list(who(c)),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted/{id}",
    auth,
    before,
    limits,
    summary: "One hosted agent",
    answer: ["id", "status"],
    errors: HOSTED,
    handle: (call, s) => s.detail(id(call), who(call.c)),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/update",
    auth,
    before,
    limits,
    summary: "Changes an agent's settings",
    documents: { body: updateRequest },
    answer: ["id"],
    errors: AGENT_SETTINGS,
    handle: (call, s) => s.update(id(call), call.body, who(call.c)),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/pause",
    auth,
    before,
    limits,
    summary: "Pauses an agent",
    documents: { body: noBody },
    answer: ["id", "status"],
    errors: HOSTED,
    handle: (call, s) => (bare(call.body), s.pause(id(call), who(call.c))),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/resume",
    auth,
    before,
    limits,
    summary: "Resumes an agent",
    documents: { body: noBody },
    answer: ["id", "status"],
    errors: HOSTED,
    handle: (call, s) => (bare(call.body), s.resume(id(call), who(call.c))),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/stop",
    auth,
    before,
    limits,
    summary: "Stops an agent (it leaves the league)",
    documents: { body: noBody },
    answer: ["id", "status"],
    errors: HOSTED,
    handle: (call, s) => (bare(call.body), s.stop(id(call), who(call.c))),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/delete",
    auth,
    before,
    limits,
    summary: "Deletes an agent",
    documents: { body: noBody },
    answer: [],
    errors: HOSTED,
    handle: (call, s) => (bare(call.body), s.remove(id(call), who(call.c))),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted/{id}/logs",
    auth,
    before,
    limits,
    summary: "Why the agent did or did not trade",
    documents: { query: logsQuery },
    answer: ["id", "rows", "next_before"],
    errors: [...HOSTED, "BAD_REQUEST"],
    handle: (call, s) => s.logs(id(call), call.query, who(call.c)),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/rotate-webhook-secret",
    auth,
    before,
    limits,
    summary: "A new webhook secret",
    documents: { body: noBody },
    answer: [],
    errors: HOSTED,
    handle: (call, s) => (bare(call.body), s.rotateWebhookSecret(id(call), who(call.c))),
  }),
  route<HostedService>({
    method: "get",
    path: "/hosted/{id}/executor",
    auth,
    before,
    limits,
    summary: "A live agent's executor",
    answer: [],
    errors: [...HOSTED, "NO_EXECUTOR"],
    handle: (call, s) => s.executor(id(call), who(call.c)),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/session",
    auth,
    before,
    limits,
    summary: "Attaches a session to a live agent's executor",
    documents: { body: sessionBody },
    answer: [],
    errors: HOSTED,
    handle: (call, s) => s.attachSession(id(call), who(call.c), call.body, sessionBody),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/stock-attestation",
    auth,
    before,
    limits,
    summary: "The owner's stock-token attestation",
    documents: { body: attestationBody },
    answer: [],
    errors: [...HOSTED, "BAD_REQUEST", "BAD_SIGNATURE"],
    handle: (call, s) => s.stockAttestation(id(call), who(call.c), call.body, attestationBody),
  }),
  // These three refuse a body's field themselves, after finding the agent.
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/stock-attestation/revoke",
    auth,
    before,
    limits,
    summary: "Revokes the stock-token attestation",
    documents: { body: noBody },
    answer: [],
    errors: HOSTED,
    handle: (call, s) => s.revokeStockAttestation(id(call), who(call.c), call.body),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/refund-gas",
    auth,
    before,
    limits,
    summary: "Returns a live agent's executor gas to the owner",
    documents: { body: noBody },
    answer: [],
    errors: [...HOSTED, "SUBMIT_DISABLED"],
    handle: (call, s) => s.refundGas(id(call), who(call.c), call.body),
  }),
  route<HostedService>({
    method: "post",
    path: "/hosted/{id}/rotate-executor",
    auth,
    before,
    limits,
    summary: "A new executor for a live agent",
    documents: { body: noBody },
    answer: [],
    errors: [...HOSTED, "PAPER_AGENT"],
    handle: (call, s) => s.rotateExecutor(id(call), who(call.c), call.body),
  }),
];
