/**
 * @pit/sdk: a client for the chain-4663 agent trading service that never signs what it has not
 * re-derived itself (SPEC "Client-side errors"). viem is its only chain library.
 *
 *   const pit = await createPitClient({ baseUrl, rpcUrl, account, pins });
 *   await pit.signIn();
 *   const t = await pit.trade({ tokenIn: "ETH", tokenOut: "USDG", notionalUsd: 50 });
 */
import {
  createPublicClient,
  http as viemHttp,
  type Chain,
  type LocalAccount,
  type PublicClient,
  type Tokens,
  type Transport,
} from "viem";
import { createHttp } from "./http.js";
import { checkConfig, pinsFrom, type Pins } from "./pins.js";
import { signIn } from "./signIn.js";
import { trade, type TradeRequest } from "./trade.js";
import { account, type AccountPath } from "./account.js";
import { askStatement, type StatementRequest } from "./league.js";
import { grantSession, type GrantRequest } from "./session.js";
import { createLiveAgent } from "./hosted.js";
import { fastTrade, type FastRequest } from "./fast.js";
import { readFastRoutes } from "./fastTable.js";
import { PitError } from "./errors.js";

export {
  CLIENT_CODES,
  PitError,
  type ClientCode,
  type ErrorCode,
  type ServerCode,
  type VerificationRule,
} from "./errors.js";
export { pinnedSymbol, pinsFrom, type Pins } from "./pins.js";
export { verifyPlan, type PlanAnswer, type TradeIntent } from "./verifyPlan.js";
export type { TradeRequest, TradeResult } from "./trade.js";
export { COOLDOWN_MS, MARKS_DIFFER_BPS, type FastRequest, type FastResult } from "./fast.js";
export { signStatement, type Statement, type StatementRequest } from "./league.js";
export type { AccountPath } from "./account.js";
export { verifyGrant, type GrantRequest, type SessionPins } from "./session.js";
export { verifySignedMarks } from "./marks.js";
export { checkExecutorAttestation, type ExecutorAttestation } from "./hosted.js";

export type PitClientOptions = {
  baseUrl: string;
  rpcUrl: string;
  account: LocalAccount;
  pins: Pins;
  key?: string;
  fetch?: typeof fetch;
};

/** A client bound to one wallet; it checks the server's config against the pins first (CONFIG_MISMATCH). */
export async function createPitClient(o: PitClientOptions) {
  const http = createHttp(o.baseUrl, { key: o.key ?? null, fetch: o.fetch });
  // Typed as PublicClient by its generics: a cast made the type checker relate two client types (1.5 s).
  const chain: PublicClient = createPublicClient<
    Transport,
    Chain | undefined,
    undefined,
    undefined,
    Tokens | undefined
  >({ transport: viemHttp(o.rpcUrl) });
  await checkConfig(http, o.pins);
  const pins: Pins = { ...o.pins };
  const d = { http, chain, account: o.account, pins };
  const cooldown = new Map<string, number>();
  return {
    get key() {
      return http.key;
    },
    signIn: () => signIn(http, o.account, o.pins),
    trade: (q: TradeRequest) => trade(d, q),
    /**
     * Pins fast mode's route table from live/fast/terms (after signIn; keep `pins.fastRoutes` with
     * the agent). With a table already pinned, a server naming another one is CONFIG_MISMATCH.
     */
    pinFastRoutes: async () => {
      const read = await readFastRoutes(http, pins);
      if (pins.fastRoutes && pins.fastRoutes.sha256 !== read.sha256)
        throw new PitError(
          "CONFIG_MISMATCH",
          `the server's route table is ${read.sha256}, not the pinned ${pins.fastRoutes.sha256}`,
        );
      pins.fastRoutes ??= read;
      return pins.fastRoutes;
    },
    /**
     * A fast trade built from the pinned table; on a fast reason, the prepared way (unless fallback is
     * false: the reason thrown).
     */
    fastTrade: (q: FastRequest) =>
      fastTrade({ ...d, cooldown, now: Date.now, fallback: (t, nonce) => trade(d, t, { nonce }) }, q),
    /** me/portfolio, me/trades, league/me: checked to be this wallet's (ACCOUNT_SHAPE, ACCOUNT_WALLET). */
    account: <T = Record<string, unknown>>(path: AccountPath, query = "") =>
      account<T>(http, o.account.address, path, query),
    /**
     * A league statement for this wallet, rebuilt locally (LEAGUE_STATEMENT); the owner signs it with
     * signStatement.
     */
    leagueStatement: (q: StatementRequest) => askStatement(http, o.account.address, o.pins, q),
    /**
     * A session for an executor, checked (GRANT_BINDING, GRANT_CAPS, CONSENT_REQUIRED) before the
     * wallet signs its root.
     */
    grantSession: (q: GrantRequest) => grantSession(d, q),
    /**
     * A live hosted agent whose executor's attestation is checked (EXECUTOR_ATTESTATION) before
     * anything is granted to it.
     */
    createLiveAgent: (body: Record<string, unknown>) => createLiveAgent(http, o.account.address, o.pins, body),
    get: <T>(path: string) => http.get<T>(path),
    post: <T>(path: string, body: unknown) => http.post<T>(path, body),
  };
}

/** Reads a server's config once to pin it (do this when setting the agent up, then keep the pins). */
export async function readPins(baseUrl: string, f: typeof fetch = fetch): Promise<Pins> {
  return pinsFrom(await createHttp(baseUrl, { fetch: f }).get("/config"));
}
