import { z } from "zod";
import { address, atoms, hex, named, unixS, usd } from "../http/answers.js";
import { feeFields, planTx, routeRow, tokenRef } from "../trading/index.js";

/**
 * The answers of SPEC "Sessions" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** A call the leaf allows: target, value (wei) and calldata. */
const call = { target: address, value: atoms.describe("wei"), call_data: hex };

/** live/session/trade: the executor's transaction, co-signed within the session's limits. */
export const sessionTradeAnswer = named(
  "SessionTrade",
  z
    .object({
      session_id: z.string(),
      ready: z.boolean().describe("the transaction simulated and can be sent by the executor"),
      simulated_ok: z.boolean(),
      tx: planTx.extend({
        from: address.describe("the executor, who sends it"),
        gas: z.number().describe("a gas limit with headroom"),
      }),
      executor: address,
      wallet: address.describe("the session's wallet, whose funds trade"),
      leaf: z
        .object({
          delegation_hash: hex,
          expires: unixS,
          delegate: address,
          delegator: address.describe("the co-signer"),
          authority: hex.describe("the session's root delegation hash"),
          caveats: z.array(z.object({ enforcer: address, terms: hex, args: hex })),
          salt: z.string(),
          signature: hex,
        })
        .describe("the co-signer's one-time delegation to the executor for exactly this execution"),
      execution: z
        .object({
          ...call,
          mode: z.string(),
          root_group: z.number().int(),
          root: z.enum(["session", "curve"]),
          batch: z.literal(true).optional(),
          calls: z
            .array(z.object({ kind: z.enum(["fee_transfer", "curve"]), ...call }))
            .optional()
            .describe("a curve trade's batch: the fee first"),
          fee: z.object(call).optional(),
        })
        .describe("what the leaf allows, redeemed in single mode"),
      swap: z.object({
        route: routeRow,
        amount_in: atoms,
        notional_usd: usd,
        amount_out_expected: atoms,
        amount_out_min: atoms,
        deadline: unixS,
        fee: z.object({
          bps: z.number(),
          side: z.enum(["input", "output"]),
          recipient: address,
          token: address,
          command: z.string(),
          amount: atoms,
        }),
        tokens: z.object({ token_in: tokenRef, token_out: tokenRef }),
      }),
      simulation: z.object({
        ok: z.boolean(),
        error: z.string().nullable(),
        amount_out: atoms.nullable(),
        fee_transfer: z.object({ token: address, to: address, amount: atoms }).nullable(),
        gas_total: z.number(),
        gas: z.array(z.number()),
        funded_by_overrides: z.boolean(),
        from: address,
      }),
      checks: z.object({
        policy: z.array(z.string()),
        signer: z.array(z.object({ rule: z.string(), ok: z.boolean(), message: z.string() })),
      }),
      spend: z
        .object({
          notional_usd: usd,
          trades_used: z.number().int(),
          trades_left: z.number().int(),
          last_24h_usd: usd,
          remaining_24h_usd: usd,
        })
        .describe("the session's limits as this trade uses them"),
      risk_terms: z.object({ accept_risks: z.array(z.string()), shield: z.boolean(), policies: z.array(z.string()) }),
      plan_id: z.number().int().nullable(),
      timings: z.record(z.number()),
      ...feeFields,
    })
    .describe("A co-signed trade within a session: the executor's transaction to send."),
);

/** A session (SPEC "Session"): its limits and what is used of them, as the co-signer counts. */
export const sessionView = named(
  "Session",
  z
    .object({
      session_id: z.string(),
      status: z.enum(["pending", "active", "revoked"]).describe("expiry is refused as SESSION_EXPIRED"),
      wallet: address,
      executor: address,
      cosigner: address,
      expires: unixS,
      wallet_code: z
        .object({
          state: z.enum(["eoa", "pinned"]),
          implementation: address.nullable(),
          version: z.string().nullable(),
        })
        .describe("the wallet's code: a plain account, or delegating (EIP-7702) to the pinned delegator"),
      tokens: z.array(tokenRef).describe("the tokens the session may trade"),
      limits: z.object({ max_trade_usd: usd, max_day_usd: usd, max_trades: z.number().int() }),
      used: z.object({
        trades: z.number().int(),
        trades_left: z.number().int(),
        last_24h_usd: usd,
        remaining_24h_usd: usd,
      }),
      risk_terms: z.object({ accept_risks: z.array(z.string()), shield: z.boolean(), policies: z.array(z.string()) }),
      delegation_hash: hex,
    })
    .describe("A session: a wallet's limited delegation to an executor, co-signed within its limits."),
);

/** A hosted agent's summary row in me/sessions. */
export const hostedSummary = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(["active", "paused", "stopped"]),
  strategy: z.string(),
  mode: z.enum(["paper", "live"]),
  live: z.boolean(),
  trading: z.boolean(),
  pairs: z.array(z.string()),
  session_id: z.string().nullable(),
  pause_reason: z.object({ code: z.string(), message: z.string().optional() }).nullable(),
});

/** GET me/sessions. */
export const mySessionsAnswer = named(
  "MySessions",
  z
    .object({
      wallet: address,
      sessions: z.array(sessionView),
      hosted: z.array(hostedSummary),
      hosted_available: z.boolean(),
      routes: z.object({ session_revoke: z.string(), agent_pause: z.string() }).describe("read-only: where to act"),
    })
    .describe("The wallet's sessions and hosted agents."),
);

/** POST live/session/revoke. */
export const sessionRevokedAnswer = named(
  "SessionRevoked",
  z
    .object({
      session_id: z.string(),
      status: z.string().describe("revoked"),
      revoked_at: unixS,
      effective: z.string(),
      signer_revoked: z.boolean(),
      on_chain: z
        .array(z.object({ kind: z.string(), why: z.string(), tx: planTx }))
        .describe("steps the main key sends to end the session on chain"),
      simulation: z
        .array(z.object({ kind: z.string(), ok: z.boolean(), error: z.string().nullable() }))
        .describe("each on-chain step simulated from the wallet"),
      approvals: z.array(
        z.object({
          token: address,
          spender: address,
          amount: atoms.nullable(),
          expiration: z.number().nullable(),
        }),
      ),
      reset_code: z.unknown().describe("with reset_code: the authorization resetting the wallet's code, else null"),
    })
    .describe("The session revoked for every key; the co-signer stops at once."),
);
