import type { Address } from "viem";
import type { AppDeps } from "./deps.js";
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
import { createLease } from "./ports/store/lease.js";
import { createStats } from "./server/index.js";
import { createTokens } from "./tokens/index.js";
import { createLedger, createRelay, createTrading, createVolume, createWatcher } from "./trading/index.js";
import { createSessions, createSessionStore, sessionTradeRequest } from "./sessions/index.js";
import { parseBody } from "./errors/index.js";
import { createFast } from "./fast/index.js";
import { createTreasury } from "./treasury/index.js";
import { createHosted } from "./hosted/index.js";
import { createLeague } from "./league/index.js";
import { platformSignerFromConfig, reserveSignerFromConfig } from "./ports/platformSigner.js";

/**
 * Every domain service, built once from the app's dependencies: the one place that wires the
 * domains together (routes receive these; nothing builds a second registry or ledger).
 */
export function buildServices(deps: AppDeps) {
  const clock = deps.clock ?? Date.now;
  const { config, chain, indexed, db } = deps;
  const market = createMarket({ config, indexed, clock });
  // Code the service does not control (any token) is read through its own fenced client (lib/chain.ts).
  const reader = createUntrustedReader(config);
  // New-token screening budgets: shared by every instance when they share a Redis.
  const ownScreenBudget = deps.screenBudget
    ? null
    : config.redisUrl
      ? new RedisLimiter(config.redisUrl, "pit:screen:", true)
      : null;
  const screenBudget = deps.screenBudget ?? ownScreenBudget ?? undefined;
  const tokens = createTokens({
    db,
    config,
    chain,
    reader,
    indexed,
    shield: deps.shield ?? null,
    clock,
    budget: screenBudget,
    tuning: deps.screen,
  });
  const ledger = createLedger({ db, clock });
  const volume = createVolume({ config, ledger, market, clock });
  const trading = createTrading({
    config,
    chain,
    indexed,
    tokens,
    market,
    ledger,
    volume,
    clock,
    aggregators: config.aggregatorUrls,
  });
  const sequencer = deps.sequencer ?? httpSequencer(config.sequencerUrl);
  // The co-signer and the executor signing service: each its own process (npm run cosigner, npm run
  // executors; children of npm start on the devnet) reached over HTTP with its own bearer secret.
  // The API holds no signing key; without a URL, sessions answer 503 and live hosted agents SIGNER_REQUIRED.
  const cosigner =
    deps.cosigner !== undefined
      ? deps.cosigner
      : config.cosignerUrl
        ? httpCosigner(config.cosignerUrl, config.cosignerToken!, config.cosigner!)
        : null;
  const sessionStore = createSessionStore({ db, clock });
  const executors =
    deps.executors !== undefined
      ? deps.executors
      : config.executorsUrl
        ? httpExecutors(config.executorsUrl, config.executorsToken!)
        : null;
  const hostedExecutor = async (executor: Address) => (executors ? await executors.state(executor) : null);
  const sessions = createSessions({
    config,
    chain,
    market,
    sides: trading.context.sides,
    trading,
    ledger,
    store: sessionStore,
    cosigner,
    now: () => Math.floor(clock() / 1000),
    hostedExecutor,
  });
  const fast = createFast({ config, chain, market, ledger, volume, sequencer, clock });
  const relay = createRelay({ config, chain, ledger, sequencer, clock, sessionExecutors: sessions.executorsOf });
  // Outcomes of what this service relayed (started by createApp): one watcher per store, by lease.
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
  const portfolio = createPortfolio({ config, chain, market, ledger, volume, clock });
  // Key revocations announced to the other instances when they share a Redis.
  // The weekly split of fees (started by createApp): closed once per store under an advisory lock.
  const platformSigner = deps.platformSigner !== undefined ? deps.platformSigner : platformSignerFromConfig(config);
  // The closer reads and sends on a client of its own: no other read can silence it.
  const treasury = createTreasury({
    config,
    chain,
    closerChain: createChainClient(config),
    reader,
    indexed,
    db,
    market,
    ledger,
    signer: platformSigner,
    clock,
    logger: deps.logger,
    prizePayouts: () => leagueOf().prizePayouts(),
    ...deps.treasury,
  });
  // Hosted agents (their scheduler started by createApp): ticks shared by every instance on one store.
  const hosted = createHosted({
    config,
    chain,
    market,
    db,
    clock,
    logger: deps.logger,
    scheduler: deps.hostedScheduler,
    executors,
    sequencer,
    liveSessionsOf: sessions.liveForExecutor,
    assertNotSanctioned: (address, field) => assertNotSanctioned({ chain, config }, address, field),
    sessionOf: sessions.forHosted,
    revokeSession: (sessionId, who) => sessions.revoke({ session_id: sessionId, reset_code: false }, who),
    // The tick sends the route's snake_case body: parsed by the route's own schema, as a key's request is.
    trade: (body, who) => sessions.trade(parseBody(sessionTradeRequest, body), who),
    submit: relay.submit,
    onStopped: (id) => leagueOf().leaveHosted(id),
    beforeSettings: (id, next) => leagueOf().assertPracticeSettings(id, next),
    practice: (agent) => leagueOf().practiceGate(agent),
  });
  // The league reads hosted agents; a stopped or deleted one leaves it.
  const reserveSigner =
    deps.league?.reserveSigner !== undefined ? deps.league.reserveSigner : reserveSignerFromConfig(config);
  const league = createLeague({
    config,
    chain,
    db,
    clock,
    indexed,
    logger: deps.logger,
    reserveSigner,
    cacheMs: deps.league?.cacheMs,
    leaseMs: deps.league?.leaseMs,
    onCompute: deps.league?.onCompute,
    settleIntervalMs: deps.league?.settleIntervalMs,
    assertNotSanctioned: (address, field) => assertNotSanctioned({ chain, config }, address, field),
    hostedAgent: (id) => hosted.store.get(id),
  });
  const leagueOf = () => league;
  const stats = createStats({
    config,
    chain,
    indexed,
    tokens,
    clock,
    aiPool: hosted.aiPool,
    pollMs: deps.stats?.pollMs,
    logger: deps.logger,
  });
  const revocations = config.redisUrl ? redisRevocations(() => redisConnection(config.redisUrl!), forgetRevoked) : null;
  const signIn: SignInDeps = { db, config, chain, clock, revocations, caps: deps.signInCaps };
  // The edge checks keys with sign-in's functions, handed to it here (api/http imports no domain).
  const keyChecks: KeyChecks = {
    authenticate: (apiKey) => authenticate(signIn, apiKey),
    assertNotSanctioned: (wallet) => assertNotSanctioned(signIn, wallet, "wallet"),
  };
  return {
    deps,
    config,
    clock,
    ownScreenBudget,
    market,
    tokens,
    ledger,
    volume,
    trading,
    relay,
    watcher,
    stats,
    portfolio,
    signIn,
    keyChecks,
    sessions,
    cosigner,
    executors,
    fast,
    treasury,
    hosted,
    league,
  };
}

export type Services = ReturnType<typeof buildServices>;
