import type { Address } from "viem";
import type { AppDeps } from "./deps.js";
import type { Common } from "./ports/common.js";
import { createChainClient, createUntrustedReader } from "../lib/chain.js";
import { createPortfolio } from "./account/index.js";
import { assertNotSanctioned, authenticate, forgetRevoked, redisRevocations, type SignInDeps } from "./auth/index.js";
import type { KeyChecks } from "./http/auth.js";
import { redisConnection } from "./ports/redis.js";
import { RedisLimiter } from "./http/redisLimiter.js";
import { createMarket } from "./market/index.js";
import { httpSequencer } from "./ports/sequencer.js";
import { httpCosigner } from "./ports/cosigner.js";
import { httpExecutors } from "./ports/executors.js";
import { hostedAvailability } from "./ports/hostedAvailability.js";
import { createLease } from "./ports/store/lease.js";
import { createStats } from "./server/index.js";
import { createTokens } from "./tokens/index.js";
import { createLedger, createRelay, createTrading, createVolume, createWatcher } from "./trading/index.js";
import { createSessions, createSessionStore } from "./sessions/index.js";
import { createFast } from "./fast/index.js";
import { createTreasury } from "./treasury/index.js";
import { createHosted } from "./hosted/index.js";
import { createLeague } from "./league/index.js";
import { platformSignerFromConfig, reserveSignerFromConfig } from "./ports/platformSigner.js";

/** The signing and relaying parties outside the API: given by tests, else reached at their configured URLs. */
function outsideParties(deps: AppDeps) {
  const { config } = deps;
  const sequencer = deps.sequencer ?? httpSequencer(config.sequencerUrl);
  // The co-signer and the executor signing service: each its own process (npm run cosigner, npm run
  // executors; children of npm start on the devnet) reached over HTTP with its own bearer secret. The
  // API holds no signing key; without a URL, sessions answer 503 and live hosted agents SIGNER_REQUIRED.
  const cosigner =
    deps.cosigner !== undefined
      ? deps.cosigner
      : config.cosignerUrl
        ? httpCosigner(config.cosignerUrl, config.cosignerToken!, config.cosigner!)
        : null;
  const executors =
    deps.executors !== undefined
      ? deps.executors
      : config.executorsUrl
        ? httpExecutors(config.executorsUrl, config.executorsToken!)
        : null;
  const platformSigner = deps.platformSigner !== undefined ? deps.platformSigner : platformSignerFromConfig(config);
  const reserveSigner =
    deps.league?.reserveSigner !== undefined ? deps.league.reserveSigner : reserveSignerFromConfig(config);
  return { sequencer, cosigner, executors, platformSigner, reserveSigner };
}

/** Marks, the token registry (its screening budget shared over Redis when configured), the ledger and trading. */
function tradingParts(deps: AppDeps, common: Common) {
  const { config } = common;
  const { indexed, db } = deps;
  const market = createMarket({ config, indexed, clock: common.clock, chain: common.chain });
  // Code the service does not control (any token) is read through its own fenced client (lib/chain.ts).
  const reader = createUntrustedReader(config);
  const ownScreenBudget = deps.screenBudget
    ? null
    : config.redisUrl
      ? new RedisLimiter(config.redisUrl, "pit:screen:", true)
      : null;
  const tokens = createTokens({
    ...common,
    db,
    reader,
    indexed,
    shield: deps.shield ?? null,
    budget: deps.screenBudget ?? ownScreenBudget ?? undefined,
    tuning: deps.screen,
  });
  const ledger = createLedger({ db, clock: common.clock });
  const volume = createVolume({ config, ledger, market, clock: common.clock });
  const trading = createTrading({
    ...common,
    indexed,
    tokens,
    market,
    ledger,
    volume,
    aggregators: config.aggregatorUrls,
  });
  return { market, reader, ownScreenBudget, tokens, ledger, volume, trading };
}

type TradingParts = ReturnType<typeof tradingParts>;
type Outside = ReturnType<typeof outsideParties>;

/** Sessions, fast mode, the relay and the watcher of what it relayed (started by createApp, one per store by lease). */
function relayParts(deps: AppDeps, common: Common, t: TradingParts, o: Outside) {
  const { config, chain, clock } = common;
  const { db } = deps;
  const { market, ledger, volume, trading } = t;
  const { sequencer, executors } = o;
  const sessions = createSessions({
    config,
    chain,
    market,
    sides: trading.context.sides,
    trading,
    ledger,
    store: createSessionStore({ db, clock }),
    cosigner: o.cosigner,
    now: () => Math.floor(clock() / 1000),
    hostedExecutor: async (executor: Address) => (executors ? await executors.state(executor) : null),
    hostedAvailable: hostedAvailability({ config, executors, clock }),
  });
  const fast = createFast({ config, chain, market, ledger, volume, sequencer, clock });
  const relay = createRelay({ config, chain, ledger, sequencer, clock, sessionExecutors: sessions.executorsOf });
  const watcher = createWatcher({
    chain,
    ledger,
    sequencer,
    lease: createLease(db, "relay-watcher"),
    clock,
    logger: deps.logger,
    contracts: {
      poolManager: config.contracts.poolManager,
      router: config.contracts.universalRouter,
      launchpad: config.contracts.launchpad,
    },
  });
  return { sessions, fast, relay, watcher };
}

/** Sign-in and the key checks the edge is handed (api/http imports no domain); revocations shared over Redis. */
function signInParts(deps: AppDeps, common: Common) {
  const { config } = common;
  const revocations = config.redisUrl ? redisRevocations(() => redisConnection(config.redisUrl!), forgetRevoked) : null;
  const signIn: SignInDeps = {
    db: deps.db,
    config,
    chain: common.chain,
    clock: common.clock,
    revocations,
    caps: deps.signInCaps,
  };
  const keyChecks: KeyChecks = {
    authenticate: (apiKey) => authenticate(signIn, apiKey),
    assertNotSanctioned: (wallet) => assertNotSanctioned(signIn, wallet, "wallet"),
  };
  return { signIn, keyChecks };
}

/**
 * Every domain service, built once from the app's dependencies: the one place that wires the
 * domains together (routes receive these; nothing builds a second registry or ledger).
 */
export function buildServices(deps: AppDeps) {
  const common: Common = { config: deps.config, chain: deps.chain, clock: deps.clock ?? Date.now, logger: deps.logger };
  const outside = outsideParties(deps);
  const t = tradingParts(deps, common);
  const r = relayParts(deps, common, t, outside);
  const { hosted, league, treasury } = ownersParts(deps, common, t, r, outside);
  const stats = createStats({
    ...common,
    indexed: deps.indexed,
    tokens: t.tokens,
    aiPool: hosted.aiPool,
    pollMs: deps.stats?.pollMs,
  });
  const portfolio = createPortfolio({ ...common, market: t.market, ledger: t.ledger, volume: t.volume });
  return {
    deps,
    config: common.config,
    clock: common.clock,
    ...t,
    ...r,
    ...signInParts(deps, common),
    cosigner: outside.cosigner,
    executors: outside.executors,
    stats,
    portfolio,
    treasury,
    hosted,
    league,
  };
}

/**
 * Hosted agents, the league and the treasury, built in that order: the league reads hosted agents
 * and attaches to their announcements (a stop, a settings change) and ticks (its practice gate);
 * the treasury reads the league's prize payouts. Nothing calls back up the order.
 */
function ownersParts(deps: AppDeps, common: Common, t: TradingParts, r: ReturnType<typeof relayParts>, o: Outside) {
  const { config, chain } = common;
  const { db, indexed } = deps;
  const { sessions, relay } = r;
  const sanctions = (address: Address, field: string) => assertNotSanctioned({ chain, config }, address, field);
  // Hosted agents (their scheduler started by createApp): ticks shared by every instance on one store.
  const hosted = createHosted({
    ...common,
    market: t.market,
    db,
    scheduler: deps.hostedScheduler,
    executors: o.executors,
    sequencer: o.sequencer,
    liveSessionsOf: sessions.liveForExecutor,
    assertNotSanctioned: sanctions,
    sessionOf: sessions.forHosted,
    revokeSession: (sessionId, who) => sessions.revoke({ session_id: sessionId, reset_code: false }, who),
    trade: sessions.trade,
    submit: relay.submit,
    sides: t.trading.context.sides,
    volume30d: t.volume.usd30d,
    tradesOf: t.ledger.tradesByHash,
  });
  const league = createLeague({
    ...common,
    db,
    indexed,
    reserveSigner: o.reserveSigner,
    cacheMs: deps.league?.cacheMs,
    leaseMs: deps.league?.leaseMs,
    onCompute: deps.league?.onCompute,
    settleIntervalMs: deps.league?.settleIntervalMs,
    assertNotSanctioned: sanctions,
    hostedAgent: (id) => hosted.store.get(id),
    volume30d: t.volume.usd30d,
  });
  hosted.attach({
    onStopped: (id) => league.leaveHosted(id),
    beforeSettings: (id, next) => league.assertPracticeSettings(id, next),
    practice: (agent) => league.practiceGate(agent),
  });
  // The closer reads and sends on a client of its own: no other read can silence it.
  const treasury = createTreasury({
    ...common,
    closerChain: createChainClient(config),
    reader: t.reader,
    indexed,
    db,
    market: t.market,
    ledger: t.ledger,
    signer: o.platformSigner,
    prizePayouts: () => league.prizePayouts(),
    ...deps.treasury,
  });
  return { treasury, hosted, league };
}

export type Services = ReturnType<typeof buildServices>;
