import type { Address } from "viem";
import type { Who } from "../trading/index.js";
import type { SessionDeps } from "./deps.js";
import { startGrant, switchOn, type StartGrantParameters, type SwitchOnParameters } from "./grant.js";
import { revokeSession, type RevokeSessionParameters } from "./revoke.js";
import { sessionTrade, type SessionTradeParameters } from "./trade.js";
import { sessionView } from "./view.js";

export { createSessionStore, type SessionStore, type StoredSession } from "./store.js";
export type { SessionDeps } from "./deps.js";
/** Request schemas, for the OpenAPI document (api/openapi). */
export { grantBody, startRequest as grantRequest, switchOnRequest } from "./grant.js";
export { sessionTradeRequest } from "./trade.js";
export { revokeRequest as sessionRevokeRequest } from "./revoke.js";
export type { RevokeSessionParameters, SessionTradeParameters, StartGrantParameters, SwitchOnParameters };

/** Sessions: grant (two calls), trade, revoke, and the wallet's list. */
export function createSessions(d: SessionDeps) {
  return {
    start: (q: StartGrantParameters, who: Who) => startGrant(d, q, who),
    switchOn: (q: SwitchOnParameters, who: Who) => switchOn(d, q, who),
    trade: (q: SessionTradeParameters, who: Who) => sessionTrade(d, q, who),
    revoke: (q: RevokeSessionParameters, who: Who) => revokeSession(d, q, who),
    /** Executors the relay takes signatures from for the wallet's session plans. */
    executorsOf: (wallet: Address) => d.store.executorsOf(wallet),
    /** What a hosted agent needs to know of a session it is attached to. */
    async forHosted(id: string) {
      const s = await d.store.byId(id);
      return s
        ? {
            id: s.id,
            wallet: s.wallet,
            executor: s.executor,
            status: s.status,
            expires: s.expires,
            tokens: s.binding.tokens,
            limits: s.binding.limits,
            root_hash: s.delegationHash,
            // The terms the binding commits to: the agent's must fit them (OUTSIDE_SESSION).
            risk_terms: s.binding.risk_terms,
            fee: s.binding.fee,
          }
        : null;
    },
    /** Sessions an executor can still be co-signed under (hosted refund-gas waits for none). */
    liveForExecutor: (executor: Address) => d.store.liveForExecutor(executor),
    /** me/sessions `hosted_available`: bounded in time and cached (never a hung request). */
    hostedAvailable: () => d.hostedAvailable(),
    async mine(wallet: Address) {
      const rows = await d.store.forWallet(wallet);
      return {
        wallet: wallet.toLowerCase(),
        sessions: await Promise.all(rows.map((s) => sessionView(d, s))),
        routes: { session_revoke: "POST /api/v1/live/session/revoke", agent_pause: "POST /api/v1/hosted/<id>/pause" },
      };
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
