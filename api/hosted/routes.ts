import { HOSTED, WALLET } from "../errors/groups.js";
import { Refusal, type Code } from "../errors/index.js";
import { boundCaller } from "../http/caller.js";
import type { Take } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { routesFor, type RawCall } from "../http/route.js";
import {
  agentAnswer,
  agentsAnswer,
  aiInfoAnswer,
  attestationRevokedAnswer,
  createdAnswer,
  deletedAnswer,
  executorAnswer,
  logsAnswer,
  ownDisconnectedAnswer,
  ownFundingAnswer,
  refundAnswer,
  rotatedAnswer,
  spendAnswer,
  stoppedAnswer,
  webhookSecretAnswer,
} from "./answers.js";
import { HOSTED_WALLET } from "./agents.js";
import type { Hosted } from "./index.js";
import {
  attestationBody,
  createRequest,
  logsQuery,
  noBody,
  sessionBody,
  spendQuery,
  updateRequest,
} from "./request.js";
import { ownConnect } from "./aiAccount.js";

/** What SPEC "Hosted agents" needs: the hosted service's owner actions (not its store or scheduler). */
export type HostedService = Pick<
  Hosted,
  | "owned"
  | "ownedAi"
  | "takesOwnKeys"
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
/** Pause, stop and delete: a sanctioned owner may still end what it started (SPEC "Authentication" 10). */
const evenSanctioned = true;
const AGENT_SETTINGS: Code[] = [...HOSTED, "TOKEN_NOT_ALLOWED", "LEAGUE_PAIRS", "LEAGUE_INTERVAL"];
const route = routesFor<HostedService>({
  name: "Hosted agents",
  description:
    "Agents the service runs for a wallet (paper or live): executor keys, logs, " +
    "AI-model brains with budgets, stock-token attestations and gas refunds.",
});

/** The owner: WALLET_NOT_BOUND before anything else is read. */
const caller = boundCaller(HOSTED_WALLET);

/**
 * A POST that takes no body: any field is UNKNOWN_FIELD with this message (an empty strict
 * schema's would read "unknown field a, b"). Read from the raw body in a `first` step, so it comes
 * where it always did; the edge's parse with noBody then has nothing left to refuse.
 */
function bare({ c }: RawCall) {
  const extra = Object.keys(c.get("body") ?? {});
  if (extra.length) throw new Refusal("UNKNOWN_FIELD", `unknown field ${extra[0]}; this route takes no body`);
}

/** The agent the path names, the caller's (WALLET_NOT_BOUND, NOT_FOUND, FORBIDDEN), deleted ones too when asked. */
const agent =
  (o: { deleted?: boolean } = {}) =>
  (call: RawCall, s: HostedService) =>
    s.owned(call.param("id"), caller(call), o);
/** The body refused first (bare), then the agent. */
const bareAgent = (call: RawCall, s: HostedService) => (bare(call), agent()(call, s));
/**
 * The agent first, then the body refused (bare): revoke, refund-gas and rotate-executor have always
 * checked in this order.
 */
const agentBare =
  (o: { deleted?: boolean } = {}) =>
  async (call: RawCall, s: HostedService) => {
    const a = await agent(o)(call, s);
    bare(call);
    return a;
  };
/** Parsed bodies refuse a field they do not know as UNKNOWN_FIELD. */
const strict = { unknownField: "UNKNOWN_FIELD" } as const;

/**
 * SPEC "Hosted agents": every route, and the owner's own gateway key (ai/own, ai/own/disconnect).
 * Registered in this order: "/hosted/ai" before "/hosted/{id}" ("ai" is not an agent id). Each
 * route's `first` step finds the owner's wallet or agent (WALLET_NOT_BOUND, NOT_FOUND, FORBIDDEN,
 * spend's NOT_AI, ai/own's HOSTED_UNAVAILABLE, a bodiless POST's field), then the edge parses the
 * body or query: which refusal a request gets is what it was when each action parsed its own.
 */
export const hostedRoutes = [
  route({
    method: "post",
    path: "/hosted",
    auth,
    before,
    limits,
    summary: "Creates a hosted agent",
    description:
      "Creates a hosted agent the service runs for the wallet: a brain (rules, a webhook, or " +
      "`partner_llm` for an AI model), its params, interval, pairs, limits and risk terms, paper or " +
      "live. A live agent comes back paused with its executor and the signing service's executor " +
      "attestation; a webhook agent's answer carries webhook_secret once.",
    body: createRequest,
    ...strict,
    first: caller,
    status: 201,
    answer: createdAnswer,
    errors: AGENT_SETTINGS,
    handle: ({ body, found }, s) => s.create(body, found),
  }),
  route({
    method: "get",
    path: "/hosted/ai",
    auth,
    before,
    limits,
    summary: "The AI-model brain's models, pool and funding",
    description:
      "What this server's AI-model brain (`partner_llm`) offers: whether it can call a model, tick and " +
      "order limits, strategy templates, the models with their prices (USD per million tokens) and a " +
      "worst-case cost per call, and this owner's funding: their own gateway key, and the service's " +
      "daily credit pool with their share.",
    answer: aiInfoAnswer,
    errors: WALLET,
    first: caller,
    handle: ({ found }, s) => s.aiInfo(found),
  }),
  route({
    method: "post",
    path: "/hosted/ai/own",
    auth,
    before,
    limits,
    summary: "Connects the owner's own gateway key",
    description:
      "Connects the owner's own gateway key (sealed at rest, never returned or logged; the answer shows" +
      " its last four characters) with a day cap for the calls it pays. Beyond SPEC: it is how " +
      "funding.own.connected becomes true.",
    body: ownConnect,
    ...strict,
    first: (call, s) => {
      const who = caller(call);
      s.takesOwnKeys();
      return who;
    },
    answer: ownFundingAnswer,
    errors: HOSTED,
    extra: true,
    handle: ({ body, found }, s) => s.connectOwn(body, found),
  }),
  route({
    method: "post",
    path: "/hosted/ai/own/disconnect",
    auth,
    before,
    limits,
    summary: "Disconnects the owner's own gateway key",
    description:
      "Erases the owner's own gateway key; agents funded by it hold DISCONNECTED until another is connected.",
    body: noBody,
    ...strict,
    first: (call) => (bare(call), caller(call)),
    answer: ownDisconnectedAnswer,
    errors: HOSTED,
    extra: true,
    handle: ({ found }, s) => s.disconnectOwn(found),
  }),
  route({
    method: "get",
    path: "/hosted/{id}/spend",
    auth,
    before,
    limits,
    summary: "An AI agent's spend",
    description:
      "An AI agent's budget and spend: model, funding, today's spend by source, its view of the " +
      "service's pool, and its calls newest first (limit 1 to 200, default 50; paged by `before`). 409 " +
      "NOT_AI for a brain that is not an AI model.",
    query: spendQuery,
    first: (call, s) => s.ownedAi(call.param("id"), caller(call)),
    answer: spendAnswer,
    errors: [...HOSTED, "NOT_AI"],
    handle: ({ query, found }, s) => s.spend(found, query),
  }),
  route({
    method: "get",
    path: "/hosted",
    auth,
    before,
    limits,
    summary: "The wallet's hosted agents",
    description: "The wallet's hosted agents: {agents: [agent]}.",
    answer: agentsAnswer,
    errors: WALLET,
    first: caller,
    handle: ({ found }, s) => s.list(found),
  }),
  route({
    method: "get",
    path: "/hosted/{id}",
    auth,
    before,
    limits,
    summary: "One hosted agent",
    description:
      "The agent's detail: its settings, status, terms, pnl, live_stats and watch, plus brain_state and " +
      "last_trade; for a live agent its session, stock attestation and last gas refund.",
    answer: agentAnswer,
    errors: HOSTED,
    first: agent(),
    handle: ({ found }, s) => s.detail(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/update",
    auth,
    before,
    limits,
    summary: "Changes an agent's settings",
    description:
      "Changes any of an agent's name, brain, params, interval, pairs, limits, risk terms or live " +
      "switch. Turning live on needs an attached active session that the limits and terms fit, and the " +
      "kill switch off. A stopped agent cannot change (STOPPED).",
    body: updateRequest,
    ...strict,
    first: agent(),
    answer: agentAnswer,
    errors: AGENT_SETTINGS,
    handle: ({ body, found }, s) => s.update(found, body),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/pause",
    auth,
    evenSanctioned,
    before,
    limits,
    summary: "Pauses an agent",
    description: "Pauses an agent that is not stopped; pause_reason.code becomes OWNER.",
    body: noBody,
    ...strict,
    first: bareAgent,
    answer: agentAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.pause(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/resume",
    auth,
    before,
    limits,
    summary: "Resumes an agent",
    description:
      "Resumes a paused agent: not stopped, kill switch off, live trading enabled, limits within its session.",
    body: noBody,
    ...strict,
    first: bareAgent,
    answer: agentAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.resume(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/stop",
    auth,
    evenSanctioned,
    before,
    limits,
    summary: "Stops an agent (it leaves the league)",
    description:
      "Stops an agent for good: its session is revoked at the service (the answer's session_revoke has " +
      "the on-chain steps for the main key) and it leaves the league.",
    body: noBody,
    ...strict,
    first: bareAgent,
    answer: stoppedAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.stop(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/delete",
    auth,
    evenSanctioned,
    before,
    limits,
    summary: "Deletes an agent",
    description:
      "Deletes a stopped agent (a live agent must be stopped first: STOP_FIRST); its executor stays viewable.",
    body: noBody,
    ...strict,
    first: bareAgent,
    answer: deletedAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.remove(found),
  }),
  route({
    method: "get",
    path: "/hosted/{id}/logs",
    auth,
    before,
    limits,
    summary: "Why the agent did or did not trade",
    description:
      "Why the agent did or did not trade: its log rows newest first (decisions, trades, holds, session" +
      " and watch rows; a trade row records its fee), limit 1 to 200 (default 50), `before` a row id, " +
      "`kinds` a comma list.",
    query: logsQuery,
    first: agent(),
    answer: logsAnswer,
    errors: [...HOSTED, "BAD_REQUEST"],
    handle: ({ query, found }, s) => s.logs(found, query),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/rotate-webhook-secret",
    auth,
    before,
    limits,
    summary: "A new webhook secret",
    description:
      "A webhook-brained agent's new signing secret, shown once as webhook_secret; the old one stops at" +
      " once. 409 NOT_WEBHOOK for other brains.",
    body: noBody,
    ...strict,
    first: bareAgent,
    answer: webhookSecretAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.rotateWebhookSecret(found),
  }),
  route({
    method: "get",
    path: "/hosted/{id}/executor",
    auth,
    before,
    limits,
    summary: "A live agent's executor",
    description:
      "A live agent's executor: its ETH balance against what about twenty trades cost, how much to top " +
      "up, and whether its gas can be refunded. 409 NO_EXECUTOR for paper agents; a deleted agent's " +
      "executor is still shown.",
    answer: executorAnswer,
    errors: [...HOSTED, "NO_EXECUTOR"],
    first: agent({ deleted: true }),
    handle: ({ found }, s) => s.executor(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/session",
    auth,
    before,
    limits,
    summary: "Attaches a session to a live agent's executor",
    description:
      "Attaches a session the owner granted to the agent's executor; the agent's limits and terms must " +
      "fit within it (OUTSIDE_SESSION).",
    body: sessionBody,
    ...strict,
    first: agent(),
    answer: agentAnswer,
    errors: HOSTED,
    handle: ({ body, found }, s) => s.attachSession(found, body),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/stock-attestation",
    auth,
    before,
    limits,
    summary: "The owner's stock-token attestation",
    description:
      "The owner's non-US attestation that lets a live agent trade stock tokens through its session: " +
      "the owner wallet's EIP-191 signature over the attestation text (agent, executor, session, root " +
      "hash, issued, expires). It expires 5 minutes to 30 days ahead, no later than the session, and is" +
      " issued within the last hour, after the last attestation and revocation.",
    body: attestationBody,
    ...strict,
    first: agent(),
    answer: agentAnswer,
    errors: [...HOSTED, "BAD_REQUEST", "BAD_SIGNATURE"],
    handle: ({ body, found }, s) => s.stockAttestation(found, body),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/stock-attestation/revoke",
    auth,
    before,
    limits,
    summary: "Revokes the stock-token attestation",
    description: "Revokes the agent's stock attestation here and at the signing service; stock orders hold at once.",
    body: noBody,
    ...strict,
    first: agentBare(),
    answer: attestationRevokedAnswer,
    errors: HOSTED,
    handle: ({ found }, s) => s.revokeStockAttestation(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/refund-gas",
    auth,
    before,
    limits,
    summary: "Returns a live agent's executor gas to the owner",
    description:
      "For a stopped or deleted live agent: the signing service closes the executor for good and signs " +
      "one plain ETH transfer of its balance (less the transfer's own gas) to the owner it recorded, " +
      "never an address from the request; the service relays it and waits for the receipt. A repeat " +
      "before it mines answers the same signed transaction (already).",
    body: noBody,
    ...strict,
    first: agentBare({ deleted: true }),
    answer: refundAnswer,
    errors: [...HOSTED, "SUBMIT_DISABLED"],
    handle: ({ found }, s) => s.refundGas(found),
  }),
  route({
    method: "post",
    path: "/hosted/{id}/rotate-executor",
    auth,
    before,
    limits,
    summary: "A new executor for a live agent",
    description:
      "A new executor key for a live agent: its session is revoked at the service and the agent pauses " +
      "until a session for the new executor is attached. The answer names the retired executor and the " +
      "session's revocation.",
    body: noBody,
    ...strict,
    first: agentBare(),
    answer: rotatedAnswer,
    errors: [...HOSTED, "PAPER_AGENT"],
    handle: ({ found }, s) => s.rotateExecutor(found),
  }),
];
