import type { Address } from "viem";
import { z } from "zod";
import { SESSIONS, WALLET } from "../errors/groups.js";
import { Refusal } from "../errors/index.js";
import { boundCaller } from "../http/caller.js";
import { noQuery } from "../http/query.js";
import { routesFor, type RawCall, type RouteCall } from "../http/route.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Take } from "../http/limits.js";
import type { Ledger, TokenRef, Who } from "../trading/index.js";
import {
  grantBody,
  sessionRevokeRequest,
  sessionTradeRequest,
  type Sessions,
  type SessionTradeParameters,
} from "./index.js";
import { lc } from "../../lib/address.js";
import { grantAnswer, mySessionsAnswer, sessionRevokedAnswer, sessionTradeAnswer } from "./answers.js";

/** Said with every unsigned grant the MCP tool hands back: what to check before signing. */
export const SIGN_GRANT_NOTE =
  "Unsigned session grant: this server never holds or asks for a private key. " +
  "Before signing, rebuild the delegation locally (delegate, caveats, " +
  "limits, expiry, co-signer, and any EIP-7702 authorization changing your wallet's code), " +
  "e.g. with @pit/sdk grantSession which checks GRANT_BINDING " +
  "and GRANT_CAPS. Sign the typed data with your own wallet, " +
  "then POST /api/v1/live/session/grant again with session_id, delegation_signature " +
  "and (for a plain wallet) authorization_signature.";

/**
 * What SPEC "Sessions" and me/sessions use: the sessions themselves, the wallet's hosted agents'
 * summary rows, and how a refused session trade is kept with the other refused trades.
 */
export type SessionsService = {
  sessions: Pick<Sessions, "start" | "switchOn" | "trade" | "revoke" | "forHosted" | "mine" | "hostedAvailable">;
  hostedSummaries: (wallet: Address) => Promise<unknown>;
  recordRefused: Ledger["recordRefused"];
  refOfParam: (param: unknown) => TokenRef | null;
};

/** Every live/session route's bucket, per key (SPEC: as live/prepare). */
const SESSION_LIMIT: Take[] = [["livePrepare", RATE_RULES.livePrepare, "key"]];

const who = ({ c }: RawCall): Who => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });
const route = routesFor<SessionsService>({
  name: "Sessions",
  description:
    "A wallet delegates limited trading to an executor address; a co-signer " +
    "co-signs each session trade within the session's limits.",
});

/** me/sessions acts for the key's wallet. */
const caller = boundCaller();

/** What prepare_session takes (the grant's first call; the REST route decides which other fields are allowed). */
const grantInput = z
  .object({
    wallet: z.string().describe("your wallet address: must be the API key's wallet"),
    executor: z.string().describe("the address that will trade for you within the session's limits"),
    tokens: z.array(z.string()).optional().describe("the tokens the session may trade (symbols or addresses)"),
    max_trade_usd: z.number().optional().describe("largest single trade in dollars"),
    max_day_usd: z.number().optional().describe("most traded per UTC day in dollars"),
    max_trades: z.number().optional().describe("most trades over the session's life"),
    expires_in_s: z.number().optional().describe("the session's life in seconds"),
    accept_risks: z.array(z.string()).optional().describe("severe risk codes the session accepts"),
    shield: z.boolean().optional().describe("screen every trade's token with Shield"),
  })
  .passthrough();

/** SPEC.md "Sessions" (live/session/*) and GET me/sessions. */
export const sessionRoutes = [
  route({
    method: "post",
    path: "/live/session/grant",
    auth: "key(wallet)",
    limits: SESSION_LIMIT,
    summary: "Starts a session grant, or switches it on with the wallet's signatures",
    description:
      "A session in two calls. The first (wallet, executor, tokens, limits, expiry, risk terms) answers" +
      " a pending session: the delegation's EIP-712 typed data to verify and sign with the wallet's " +
      "main key, the EIP-7702 authorization for a plain wallet, the setup steps (allowances), the " +
      "caveats, the exposure and what the chain and the co-signer each enforce. The second (session_id " +
      "with delegation_signature, and authorization_signature for a plain wallet) checks the " +
      "signatures, hands the root to the co-signer and switches the session on.",
    // One route, two calls: a body with session_id is the switch-on (grantBody picks the schema by it).
    body: grantBody,
    answer: grantAnswer,
    errors: SESSIONS,
    mcp: {
      name: "prepare_session",
      description:
        "Start a session grant for an executor (POST /api/v1/live/session/grant): " +
        "unsigned delegation typed data you verify and sign locally.",
      input: grantInput,
      readOnly: false,
      notes: [SIGN_GRANT_NOTE],
    },
    handle: ({ body, ...call }, s) =>
      "session_id" in body ? s.sessions.switchOn(body, who(call)) : s.sessions.start(body, who(call)),
  }),
  route({
    method: "post",
    path: "/live/session/trade",
    auth: "key",
    limits: SESSION_LIMIT,
    summary: "A co-signed trade within a session",
    description:
      "A trade within a session: the co-signer co-signs a one-time leaf within the session's limits; the " +
      "answer is the executor's redeemDelegations transaction to sign and send, with the leaf, the swap, " +
      "the simulation, the checks and the spend.",
    body: sessionTradeRequest,
    answer: sessionTradeAnswer,
    errors: SESSIONS,
    // The action's refusals are kept as refused trades, with the parsed body's tokens; a bad field is
    // no refused trade (BAD_REQUEST), so the handler records them, not an `around` step.
    handle: async (call, s) => {
      try {
        return await s.sessions.trade(call.body, who(call));
      } catch (err) {
        if (err instanceof Refusal && err.refusesTrade) await recordRefused(call, s, err.code);
        throw err;
      }
    },
  }),
  route({
    method: "post",
    path: "/live/session/revoke",
    auth: "key(wallet)",
    // A sanctioned key may still end what it started (SPEC "Authentication" 10).
    evenSanctioned: true,
    limits: SESSION_LIMIT,
    summary: "Revokes a session for every key",
    description:
      "Revokes a session for every key at once: the co-signer stops co-signing immediately. The answer " +
      "lists the on-chain steps the main key sends to end it on chain, simulated, and with reset_code " +
      "the authorization that resets the wallet's code.",
    body: sessionRevokeRequest,
    answer: sessionRevokedAnswer,
    errors: SESSIONS,
    handle: (call, s) => s.sessions.revoke(call.body, who(call)),
  }),
  route({
    method: "get",
    path: "/me/sessions",
    auth: "key(wallet)",
    limits: [["meList", RATE_RULES.meList, "key"]],
    summary: "The wallet's sessions and hosted agents",
    description:
      "The wallet's sessions (limits and what is used of them) and its hosted agents' summaries; read-" +
      "only, with the paths that revoke a session or pause an agent.",
    answer: mySessionsAnswer,
    errors: WALLET,
    first: (call) => {
      noQuery(call);
      return caller(call);
    },
    handle: async ({ found: { wallet } }, s) => {
      // The availability probe (at most a second, usually cached) runs beside the store reads.
      const [mine, hosted, available] = await Promise.all([
        s.sessions.mine(wallet),
        s.hostedSummaries(wallet),
        s.sessions.hostedAvailable(),
      ]);
      return {
        wallet: mine.wallet,
        sessions: mine.sessions,
        hosted,
        hosted_available: available,
        routes: mine.routes,
      };
    },
  }),
];

/**
 * A refused session trade is kept like other refused trades (me/trades?refused=1), on the session's
 * wallet when the key may trade it.
 */
async function recordRefused(
  { body: b, c }: RouteCall<SessionTradeParameters, unknown>,
  s: SessionsService,
  code: string,
) {
  const key = c.get("key");
  const found = await s.sessions.forHosted(b.session_id).catch(() => null);
  const mine =
    found && key.wallet && (lc(found.wallet) === lc(key.wallet) || lc(found.executor) === lc(key.wallet))
      ? found
      : null;
  await s
    .recordRefused({
      wallet: mine?.wallet ?? key.wallet,
      keyId: key.keyId,
      path: "session",
      code,
      tokenIn: s.refOfParam(b.token_in),
      tokenOut: s.refOfParam(b.token_out),
      amountIn: typeof b.amount_in === "string" ? b.amount_in : null,
      sessionId: mine?.id ?? null,
    })
    .catch((e) => c.get("log")?.warn({ err: e }, "refused session trade not recorded"));
}
