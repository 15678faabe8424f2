import type { SessionDeps } from "./deps.js";
import type { StoredSession } from "./store.js";

/**
 * A session in SPEC's words ("Session"): its limits and what is used of them, as the co-signer
 * counts (trades co-signed for this root; USD co-signed for the wallet over 24 h, every session).
 */
export async function sessionView(d: Pick<SessionDeps, "cosigner">, s: StoredSession) {
  const usage =
    d.cosigner && s.status !== "pending"
      ? await d.cosigner.usage(s.delegationHash, s.wallet)
      : { trades_used: 0, last_24h_usd: 0 };
  const { limits } = s.binding;
  return {
    session_id: s.id,
    status: s.status,
    wallet: s.wallet,
    executor: s.executor,
    cosigner: s.cosigner,
    expires: s.expires,
    wallet_code: s.walletCode,
    tokens: s.tokens,
    limits,
    used: {
      trades: usage.trades_used,
      trades_left: Math.max(0, limits.max_trades - usage.trades_used),
      last_24h_usd: usage.last_24h_usd,
      remaining_24h_usd: Math.max(0, Math.round((limits.max_day_usd - usage.last_24h_usd) * 100) / 100),
    },
    risk_terms: s.binding.risk_terms,
    delegation_hash: s.delegationHash,
  };
}
