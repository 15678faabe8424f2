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

const riskTerms = z.object({ accept_risks: z.array(z.string()), shield: z.boolean(), policies: z.array(z.string()) });
const limits = z.object({ max_trade_usd: usd, max_day_usd: usd, max_trades: z.number().int() });

/** The root the wallet signs: its EIP-712 typed data, digest and the binding its salt hashes. */
const delegationToSign = z.object({
  typed_data: z
    .object({
      domain: z.record(z.unknown()),
      types: z.record(z.unknown()),
      primaryType: z.string(),
      message: z.record(z.unknown()),
    })
    .describe("EIP-712 typed data: sign with the wallet's main key (eth_signTypedData_v4)"),
  digest: hex,
  delegation_hash: hex,
});

/** The binding the root's salt hashes: what the co-signer holds every session trade to. */
const binding = z
  .object({
    version: z.number().int(),
    chain_id: z.number().int(),
    wallet: address,
    executor: address,
    cosigner: address,
    tokens: z.array(z.string()).describe("token addresses, lower-case, sorted (ETH: the zero address)"),
    limits,
    expires: unixS,
    setup_budget_usd: usd,
    fee: z.object({
      schedule: z.number().int(),
      major_min_bps: z.number(),
      major_max_bps: z.number(),
      other_bps: z.number(),
      shield_add_bps: z.number(),
    }),
    risk_terms: riskTerms,
    marks: z.record(z.unknown()).optional().describe("owner-signed marks of feedless tokens"),
    curve_tokens: z.array(z.string()).optional(),
  })
  .describe("the session's terms, bound in the root's salt");

/** A setup step the main key sends (the EIP-7702 upgrade, then allowances). */
const setupStep = z.object({
  kind: z.enum(["upgrade", "approve", "permit2_approve"]),
  why: z.string(),
  token: address.optional(),
  tx: planTx,
  authorization: z.record(z.unknown()).optional(),
});

/** The session's setup: the steps, and the ERC-20 budget per token in atoms. */
const setup = z.object({
  steps: z.array(setupStep),
  budget_usd: usd,
  budgets: z.record(atoms).describe("atoms by lower-case token address"),
});

/** live/session/grant's first call: what to sign, the setup, and what bounds the session. */
export const grantStartAnswer = named(
  "SessionGrantStart",
  z
    .object({
      session_id: z.string(),
      status: z.literal("pending"),
      wallet: address,
      executor: address,
      cosigner: address,
      expires: unixS,
      wallet_code: sessionView.shape.wallet_code,
      sign: z
        .object({
          delegation: delegationToSign.extend({ binding }),
          authorization: z
            .object({
              contract_address: address,
              chain_id: z.number().int(),
              nonce: z.number().int(),
              executor: z.string(),
            })
            .nullable()
            .describe("a plain wallet's EIP-7702 authorization to the pinned delegator; null once delegated"),
          curve_roots: z
            .array(
              delegationToSign.extend({
                groups: z.array(z.object({ group: z.number().int(), call: z.string(), token: z.string() })),
              }),
            )
            .describe("curve sessions: each curve root to sign"),
        })
        .describe("what the wallet signs: the delegation, the authorization, the curve roots"),
      setup,
      caveats: z
        .array(z.object({ enforcer: z.string().describe("the enforcer's name"), address, terms: hex }))
        .describe("the root's caveats"),
      exposure: z
        .object({
          max_trade_usd: usd,
          max_day_usd: usd,
          max_trades: z.number().int(),
          setup_budget_usd: usd,
          worst_case_usd: usd,
          erc20_on_chain_bound: z.record(atoms),
        })
        .describe("the most the session can spend"),
      on_chain_bounds: z
        .object({
          targets: z.array(address),
          methods: z.array(z.string()),
          permit2_spender: address,
          eth_per_call_wei: atoms,
          eth_per_day_wei: atoms,
          expires: unixS,
          max_calls: z.number().int(),
          redeemer: address,
          wallet_nonce: atoms,
          leaf_ttl_s: z.number().int(),
          curve_root: z.record(z.unknown()).optional(),
          max_calls_all_roots: z.number().int().optional(),
        })
        .describe("what the chain itself enforces"),
      not_enforced_on_chain: z.array(z.string()).describe("what the co-signer enforces instead"),
      curve: z
        .object({
          allowed: z.boolean(),
          reason: z.string().optional(),
          tokens: z.array(z.string()).optional(),
          roots: z.array(hex).optional(),
          launchpad: address.optional(),
          fee: z.string().optional(),
          max_calls: z.number().int().optional(),
          note: z.string().optional(),
        })
        .describe("launchpad curve trades: allowed, and how"),
      then: z.array(z.string()).describe("the next steps, in order"),
      risk_terms: riskTerms,
      limits,
    })
    .describe("A session grant started: the delegation the wallet verifies and signs, and its setup."),
);

/** live/session/grant's second call: the session switched on. */
export const grantActiveAnswer = named(
  "SessionGrantActive",
  z
    .object({
      session_id: z.string(),
      status: z.enum(["pending", "active", "revoked"]).describe("active"),
      delegation_hash: hex,
      authorization_stored: z.boolean().describe("the EIP-7702 authorization was stored with it"),
      limits,
      curve_roots: z.array(z.object({ delegation_hash: hex, signed: z.boolean(), tokens: z.array(z.string()) })),
      expires: unixS,
      wallet_code: sessionView.shape.wallet_code,
      setup,
      session: sessionView,
    })
    .describe("A session switched on: the co-signer holds its root and co-signs its trades."),
);

/** POST live/session/grant: the start (no session_id) or the switch-on (session_id and signatures). */
export const grantAnswer = z.union([grantStartAnswer, grantActiveAnswer]);
