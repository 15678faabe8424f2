import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { getAddress, isAddress, type Address } from "viem";
import { devnetAccount } from "./devnetAccount.js";
import { z } from "zod";
import { readUniverse, type Universe } from "./universe.js";
import { ROOT } from "./root.js";

export const CHAIN_ID = 4663;

/** Bad configuration: the message names the variable, so a failed start says what to fix. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`config: ${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

const port = z.coerce
  .number({ invalid_type_error: "must be a number" })
  .int("must be an integer")
  .min(1, "must be 1-65535")
  .max(65535, "must be 1-65535");
const url = z
  .string()
  .url("must be a URL (http://host:port)")
  .refine((u) => /^(https?|wss?):/.test(u), "must be an http(s) or ws(s) URL");
const bool = z.enum(["true", "false", "1", "0", ""]).transform((v) => v === "true" || v === "1");
const addr = z
  .string()
  .refine(isAddress, "must be a 0x address (40 hex digits)")
  .transform((a) => getAddress(a));
const hostList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  )
  .refine((hs) => hs.every((h) => /^[a-z0-9.\-[\]:]+$/.test(h)), "must be a comma-separated list of host[:port]");

/** Every environment variable the service reads, with its rule. Unset = undefined. */
const envSchema = {
  PORT: port.default(42069),
  ANVIL_PORT: port.default(8545),
  CHAIN_RPC_URL: url.optional(),
  SEQUENCER_URL: url.optional(),
  UNIVERSE_FILE: z.string().min(1).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  AUTH_DOMAIN: z
    .string()
    .regex(/^[a-zA-Z0-9.-]+(:\d+)?$/, "must be a host name with an optional port, like api.example.com")
    .optional(),
  ALLOWED_HOSTS: hostList.optional(),
  PLATFORM_FEE_RECIPIENT: addr.optional(),
  COSIGNER_ADDRESS: addr.optional(),
  /** Treasury buckets: the split's recipients; unset, a bucket's share is booked and held in the platform wallet. */
  TREASURY_OPERATIONS: addr.optional(),
  TREASURY_BUYBACKS: addr.optional(),
  TREASURY_TREASURY: addr.optional(),
  /** Seals hosted executors' keys at rest (AES-256-GCM); the devnet uses a fixed development secret. */
  EXECUTOR_KEYS_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  /** A JSON-RPC signer (eth_signTransaction) holding the platform wallet's key; the devnet signs in process. */
  TREASURY_SIGNER_URL: url.optional(),
  /** An explorer's transaction page, `{tx_hash}` standing for the hash (GET treasury explorer_tx, the page's links). */
  EXPLORER_TX_URL: z
    .string()
    .regex(/^https?:\/\/\S*\{tx_hash\}\S*$/, "must be an http(s) URL holding {tx_hash}")
    .optional(),
  /** A standalone co-signer (`npm run cosigner`); unset: the co-signer runs in the API's process. */
  COSIGNER_URL: url.optional(),
  /** The bearer secret between the API and a standalone co-signer (both sides read it). */
  COSIGNER_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
  /** Where `npm run cosigner` listens (127.0.0.1 only). */
  COSIGNER_PORT: port.optional(),
  /** The co-signer's own store (`npm run cosigner`): a database no other process can read. */
  COSIGNER_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  /** The executor signing service (`npm run executors`): its URL, bearer secret, port and own store. */
  EXECUTORS_URL: url.optional(),
  EXECUTORS_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
  EXECUTORS_PORT: port.optional(),
  EXECUTORS_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  REQUIRE_PARTNER_AGENT: bool.default("false"),
  SUBMIT_ENABLED: bool.default("true"),
  /** Fast mode (live/fast) is opt-in for an operator: on by default on the devnet only. */
  FAST_ENABLED: bool.optional(),
  /** Holds every live hosted agent at once (KILLED; ticks log LIVE_OFF). */
  HOSTED_KILL_SWITCH: bool.default("false"),
  /** Live trading by hosted agents (LIVE_DISABLED when off). */
  HOSTED_LIVE: bool.default("true"),
  DATA_DIR: z.string().min(1).optional(),
  /** Header a trusted reverse proxy sets to the client address (its last entry is used). */
  TRUSTED_PROXY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "must be a header name")
    .optional(),
  /**
   * Peer addresses (IPs or CIDRs) whose TRUSTED_PROXY_HEADER is believed; from any other peer the
   * header is ignored and the socket address counts. Default: loopback only.
   */
  TRUSTED_PROXIES: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((p) => p.trim().toLowerCase())
        .filter(Boolean),
    )
    .refine(
      (ps) => ps.length > 0 && ps.every((p) => /^[0-9a-f.:]+(\/\d{1,3})?$/.test(p)),
      "must be a comma-separated list of IP addresses or CIDRs",
    )
    .optional(),
  /** Redis for limits shared by API instances (rate buckets, failed-auth counters, key revocations). */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  /**
   * npm start's production layout (`npm run stack`): the indexer alone and this many API processes
   * (`npm run api`) behind PORT. 0 (default): the API inside the indexer's process. Needs DATABASE_URL.
   */
  API_PROCESSES: z.coerce.number().int().min(0).max(32).default(0),
  /** Port of Ponder's own routes (/metrics, /status, /ready, /health), on 127.0.0.1 only. */
  OPS_PORT: port.optional(),
  /** Port of the API process's own /metrics (lib/metrics.ts), on 127.0.0.1 only; default PORT + 2. */
  METRICS_PORT: port.optional(),
  /** Ports of the co-signer's and the executor signing service's /metrics, on 127.0.0.1 only. */
  COSIGNER_METRICS_PORT: port.optional(),
  EXECUTORS_METRICS_PORT: port.optional(),
  /** Header a trusted edge sets to the client's ISO country code (e.g. cf-ipcountry). */
  COUNTRY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "must be a header name")
    .optional(),
  BLOCKED_COUNTRIES: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((c) => c.trim().toUpperCase())
        .filter(Boolean),
    )
    .refine(
      (cs) => cs.every((c) => /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/.test(c)),
      "must be ISO 3166 codes like CU,IR,KP,SY,UA-43",
    )
    .optional(),
  /** `off` only for benchmarks of the bare request path. */
  RATE_LIMITS: z.enum(["on", "off"]).default("on"),
  /** `off`: every route is quoted by the V4Quoter on chain, as before local quotes (api/market/book.ts). */
  LOCAL_QUOTES: z.enum(["on", "off"]).default("on"),
  /**
   * `viem`: signatures recovered and keccak-256 hashed in viem's JavaScript (lib/secp.ts, lib/keccak.ts read these at
   * import; named here so that a misspelt value stops the start instead of silently meaning native).
   */
  SECP256K1_BACKEND: z.enum(["native", "viem"]).optional(),
  KECCAK_BACKEND: z.enum(["native", "viem"]).optional(),
  /** Shield verdict provider (GET /v1/verdicts/:chainId/:address). */
  SHIELD_URL: url.optional(),
  /** Aggregators quoted for comparison only: `zeroex=https://…,oneinch=https://…,odos=https://…`. */
  AGGREGATOR_URLS: z
    .string()
    .transform((s) =>
      Object.fromEntries(
        s
          .split(",")
          .map((kv) => kv.trim())
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
      ),
    )
    .refine(
      (m) => Object.entries(m).every(([k, v]) => ["zeroex", "oneinch", "odos"].includes(k) && /^https?:\/\//.test(v)),
      "must be name=url pairs for zeroex, oneinch, odos",
    )
    .optional(),
  /** The AI-model gateway (OpenAI-compatible) the partner_llm brain calls, and the service's key there. */
  AI_GATEWAY_URL: url.optional(),
  AI_GATEWAY_KEY: z.string().min(8, "must be at least 8 characters").optional(),
  /** Set by `npm start` for the stand-in gateway it starts on the devnet: GET hosted/ai marks its models. */
  AI_GATEWAY_STAND_IN: bool.default("false"),
  /**
   * Models offered, with prices in USD per million tokens: a JSON list of
   * {id, input, output, structured?, source?}.
   */
  AI_MODELS: z
    .string()
    .transform((s, ctx) => {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(
          z
            .object({
              id: z.string().min(1).max(100),
              input: z.number().finite().min(0),
              output: z.number().finite().min(0),
              structured: z.number().finite().min(0).optional(),
              source: z.string().max(200).optional(),
            })
            .strict(),
        )
        .min(1)
        .max(50),
    )
    .optional(),
  /** The service's credit pool for AI calls, USD per UTC day (0: off), and how it is shared. */
  AI_POOL_USD_DAY: z.coerce.number().finite().min(0).optional(),
  AI_OWNER_SHARE_MAX_USD: z.coerce.number().finite().min(0).optional(),
  AI_LIVE_SHARE_USD: z.coerce.number().finite().min(0).optional(),
  AI_TRIAL_SHARE_USD: z.coerce.number().finite().min(0).optional(),
  AI_TRIAL_DAYS: z.coerce.number().int().min(0).max(365).optional(),
  /** What all new owners' trials together may take of a day's pool, in percent. */
  AI_TRIAL_POOL_PCT: z.coerce.number().finite().min(0).max(100).optional(),
  /** Models the pool pays for (comma list of ids; default every model). */
  AI_POOL_MODELS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .optional(),
  /** Seals owners' own gateway keys at rest; the devnet uses a fixed development secret. */
  AI_OWN_KEYS_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  AI_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(18_000).optional(),
  /** League (SPEC "League"): published hubs that never link owner clusters (exchanges, bridges), comma list. */
  LEAGUE_HUBS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .refine((as) => as.every((a) => isAddress(a)), "must be a comma-separated list of 0x addresses")
    .optional(),
  /** The developer's own partner agents (house rows: they rank, never take a paid place), comma list of agent ids. */
  LEAGUE_HOUSE_AGENTS: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .refine((xs) => xs.every((x) => /^[1-9][0-9]{0,15}$/.test(x)), "must be a comma-separated list of agent ids")
    .transform((xs) => xs.map(Number))
    .optional(),
  /**
   * The wallet holding the prize reserve in the partner token, and the JSON-RPC signer holding its
   * key (the devnet signs in process).
   */
  LEAGUE_RESERVE_WALLET: addr.optional(),
  /** The first block scanned for native ETH links (default: the start block; a devnet's: after its snapshot). */
  LEAGUE_NATIVE_FROM_BLOCK: z.coerce.number().int().min(0).optional(),
  LEAGUE_SIGNER_URL: url.optional(),
  /** The partner agent whose stake feeds the reserve (GET league reserve.agent_id). */
  LEAGUE_RESERVE_AGENT: z.coerce.number().int().min(1).optional(),
  /**
   * A season pays at most this many USD (in the partner token at its mark); the reserve holds at
   * most this many seasons of it.
   */
  LEAGUE_PRIZE_CAP_USD: z.coerce.number().finite().min(0).optional(),
  LEAGUE_RESERVE_CEILING_SEASONS: z.coerce.number().int().min(1).max(100).optional(),
  /** PostgreSQL views schema of the indexer, for API processes outside Ponder's. */
  INDEXER_SCHEMA: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,44}$/, "must be a schema name")
    .optional(),
} as const;

type EnvKey = keyof typeof envSchema;
type Env = { [K in EnvKey]: z.infer<(typeof envSchema)[K]> };

function parseEnv(source: Record<string, string | undefined>): Env {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(envSchema)) {
    const raw = source[key];
    const value = raw === undefined || raw === "" ? undefined : raw;
    const parsed = (schema as z.ZodTypeAny).safeParse(value);
    if (!parsed.success) throw new ConfigError(key, `${parsed.error.issues[0]!.message} (got ${JSON.stringify(raw)})`);
    out[key] = parsed.data;
  }
  if ((out.API_PROCESSES as number) > 0 && !out.DATABASE_URL)
    throw new ConfigError(
      "API_PROCESSES",
      "needs DATABASE_URL: separate API processes share PostgreSQL (PGlite lives inside one process)",
    );
  return out as Env;
}

export type TokenEntry = {
  symbol: string;
  address: Address;
  decimals: number;
  kind: Universe["tokens"][string]["kind"];
  native: boolean;
  name: string;
  feed: Address | null;
};

export type Config = {
  chainId: number;
  /** True when we run our own anvil (no CHAIN_RPC_URL). */
  devnet: boolean;
  rpcUrl: string;
  sequencerUrl: string;
  anvilPort: number;
  port: number;
  databaseUrl: string | null;
  dataDir: string;
  universeFile: string;
  startBlock: number;
  /**
   * The first block the league scans for native ETH moves (it reads state at the block before:
   * LEAGUE_NATIVE_FROM_BLOCK; default startBlock, or on a devnet the block after its snapshot,
   * the first a loaded node has state before).
   */
  nativeFromBlock: number;
  contracts: Universe["contracts"];
  tokens: Record<string, TokenEntry>;
  pools: Universe["pools"];
  feeRecipient: Address;
  /** Where the weekly split goes; null: booked and held in the platform wallet. */
  treasuryBuckets: { operations: Address | null; buybacks: Address | null; treasury: Address | null };
  treasurySignerUrl: string | null;
  /** null: no executor signing service (live hosted agents answer SIGNER_REQUIRED). */
  executorKeysSecret: string | null;
  explorerTx: string | null;
  cosigner: Address | null;
  /** A standalone co-signer's URL and bearer secret; null: in process. */
  cosignerUrl: string | null;
  cosignerToken: string | null;
  cosignerPort: number;
  /** The co-signer's own store; null: PGlite in DATA_DIR/cosigner (the devnet only). */
  cosignerDatabaseUrl: string | null;
  /**
   * The executor signing service's URL and bearer secret (null: none, live hosted agents answer
   * SIGNER_REQUIRED), its port and own store.
   */
  executorsUrl: string | null;
  executorsToken: string | null;
  executorsPort: number;
  executorsDatabaseUrl: string | null;
  authDomain: string | null;
  /**
   * The service's public origin (https://AUTH_DOMAIN when AUTH_DOMAIN is set): pages that link the service
   * absolutely (/llms.txt) use it, since behind a TLS proxy the request reaches us as http. Null (a devnet on
   * localhost): the request's own origin.
   */
  publicOrigin: string | null;
  allowedHosts: string[];
  requirePartnerAgent: boolean;
  submitEnabled: boolean;
  /** live/fast answers only when this and submitEnabled are on (FAST_DISABLED otherwise). */
  fastEnabled: boolean;
  hostedKillSwitch: boolean;
  hostedLive: boolean;
  version: string;
  devnetInfo: Universe["devnet"] | null;
  trustedProxyHeader: string | null;
  trustedProxies: string[];
  redisUrl: string | null;
  /** Ponder's own routes listen here (127.0.0.1), never on the API's port. */
  opsPort: number;
  /**
   * The API's /metrics (127.0.0.1), never on the API's port nor Ponder's: Ponder's page cannot carry
   * ours (lib/metrics.ts says why). The signing processes' own /metrics ports beside it.
   */
  metricsPort: number;
  /** API processes npm start runs behind PORT (0: the API inside the indexer). */
  apiProcesses: number;
  cosignerMetricsPort: number;
  executorsMetricsPort: number;
  countryHeader: string | null;
  blockedCountries: string[];
  rateLimits: boolean;
  /** Hookless v4 routes quoted in process from the indexer's pool book (LOCAL_QUOTES). */
  localQuotes: boolean;
  indexerSchema: string | null;
  shieldUrl: string | null;
  aggregatorUrls: Record<string, string>;
  ai: AiConfig;
  league: LeagueConfig;
};

/**
 * The league's settings (SPEC "League", docs/league.md "League"). reserveWallet null: no reserve, seasons pay
 * nothing.
 */
export type LeagueConfig = {
  hubs: Address[];
  houseAgents: number[];
  reserveWallet: Address | null;
  signerUrl: string | null;
  reserveAgent: number | null;
  prizeCapUsd: number;
  ceilingSeasons: number;
};

/** Account 4 of the devnet mnemonic holds the devnet's prize reserve. */
const DEVNET_RESERVE_INDEX = 4;

export type AiModel = {
  id: string;
  price: { input: number; output: number; structured: number | null; source: string };
};
/** The partner_llm brain's settings (SPEC GET hosted/ai). gatewayUrl null: AI agents are off. */
export type AiConfig = {
  gatewayUrl: string | null;
  gatewayKey: string | null;
  /** The gateway is the devnet's stand-in (no model behind it): GET hosted/ai says so on each model. */
  standIn: boolean;
  models: AiModel[];
  pool: {
    usdDay: number;
    ownerShareMaxUsd: number;
    liveShareUsd: number;
    trialShareUsd: number;
    trialDays: number;
    trialPoolPct: number;
    models: string[] | null;
    minIntervalS: number;
    agentsPerOwner: number;
  };
  ownKeysSecret: string | null;
  /** One gateway call's limit (the scheduler's tick limit is 20 s). */
  callTimeoutMs: number;
};

/** The devnet's sealing secret for owners' own gateway keys: public, never for real keys. */
export const DEVNET_AI_OWN_KEYS_SECRET = "pit-devnet-ai-own-keys-not-a-secret-0001";

/** Comprehensively sanctioned countries and regions (Crimea, Donetsk, Luhansk as ISO subdivisions). */
export const DEFAULT_BLOCKED_COUNTRIES = ["CU", "IR", "KP", "SY", "UA-43", "UA-14", "UA-09"];

/** The universe file UNIVERSE_FILE names (relative to the repository), else the devnet's; read and checked. */
function loadUniverse(env: Env, devnet: boolean): { universeFile: string; universe: Universe } {
  const universeFile = env.UNIVERSE_FILE
    ? isAbsolute(env.UNIVERSE_FILE)
      ? env.UNIVERSE_FILE
      : join(ROOT, env.UNIVERSE_FILE)
    : join(ROOT, "devnet", "universe.json");
  if (!existsSync(universeFile)) {
    throw new ConfigError(
      "UNIVERSE_FILE",
      `${universeFile} does not exist${devnet ? " (npm start builds it on first run)" : ""}`,
    );
  }
  let universe: Universe;
  try {
    universe = readUniverse(universeFile);
  } catch (err) {
    throw new ConfigError("UNIVERSE_FILE", (err as Error).message);
  }
  if (universe.chainId !== CHAIN_ID)
    throw new ConfigError("UNIVERSE_FILE", `chainId is ${universe.chainId}, this service runs chain ${CHAIN_ID}`);
  return { universeFile, universe };
}

/**
 * The fee recipient and the co-signer's address (the devnet's accounts by default), after the
 * signing services' settings are checked: each URL with its token, and off the devnet apart.
 */
function signerSettings(
  source: Record<string, string | undefined>,
  env: Env,
  universe: Universe,
  devnet: boolean,
): { feeRecipient: Address; cosigner: Address | null } {
  const feeRecipient =
    env.PLATFORM_FEE_RECIPIENT ??
    (universe.devnet?.accounts.platform ? getAddress(universe.devnet.accounts.platform) : undefined);
  if (!feeRecipient) throw new ConfigError("PLATFORM_FEE_RECIPIENT", "required outside the devnet");
  if (env.COSIGNER_URL && !env.COSIGNER_TOKEN)
    throw new ConfigError(
      "COSIGNER_TOKEN",
      "required with COSIGNER_URL (the co-signer answers only the API holding it)",
    );
  const cosigner =
    env.COSIGNER_ADDRESS ?? (universe.devnet?.accounts.cosigner ? getAddress(universe.devnet.accounts.cosigner) : null);
  if (env.COSIGNER_URL && !cosigner)
    throw new ConfigError(
      "COSIGNER_ADDRESS",
      "required with COSIGNER_URL off the devnet (the address the service publishes)",
    );
  if (env.EXECUTORS_URL && !env.EXECUTORS_TOKEN)
    throw new ConfigError(
      "EXECUTORS_TOKEN",
      "required with EXECUTORS_URL (the executor signing service answers only the API holding it)",
    );
  if (!devnet) assertSignersApart(source, env);
  return { feeRecipient, cosigner };
}

/** The universe's tokens by symbol, addresses checksummed; ETH, WETH and USDG must be among them. */
function tokensOf(universe: Universe): Record<string, TokenEntry> {
  const tokens: Record<string, TokenEntry> = {};
  for (const [symbol, t] of Object.entries(universe.tokens)) {
    tokens[symbol] = {
      symbol,
      address: getAddress(t.address),
      decimals: t.decimals,
      kind: t.kind,
      native: t.native,
      name: t.name,
      feed: t.feed ? getAddress(t.feed) : null,
    };
  }
  for (const required of ["ETH", "WETH", "USDG"]) {
    if (!tokens[required]) throw new ConfigError("UNIVERSE_FILE", `tokens.${required} is missing`);
  }
  return tokens;
}

function leagueConfigOf(env: Env, devnet: boolean): LeagueConfig {
  return {
    hubs: (env.LEAGUE_HUBS ?? []).map((a) => getAddress(a)),
    houseAgents: env.LEAGUE_HOUSE_AGENTS ?? [],
    reserveWallet: env.LEAGUE_RESERVE_WALLET ?? (devnet ? devnetAccount(DEVNET_RESERVE_INDEX).address : null),
    signerUrl: env.LEAGUE_SIGNER_URL ?? null,
    reserveAgent: env.LEAGUE_RESERVE_AGENT ?? null,
    prizeCapUsd: env.LEAGUE_PRIZE_CAP_USD ?? 1_000,
    ceilingSeasons: env.LEAGUE_RESERVE_CEILING_SEASONS ?? 4,
  };
}

/**
 * Reads the environment and the universe file into one validated Config. Throws ConfigError
 * naming the first bad variable. Pure apart from reading the universe file.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const env = parseEnv(source);
  const devnet = env.CHAIN_RPC_URL === undefined;
  const { universeFile, universe } = loadUniverse(env, devnet);
  const rpcUrl = env.CHAIN_RPC_URL ?? `http://127.0.0.1:${env.ANVIL_PORT}`;
  const { feeRecipient, cosigner } = signerSettings(source, env, universe, devnet);
  const { authDomain, allowedHosts } = hostsOf(env, devnet);
  const tokens = tokensOf(universe);

  return {
    chainId: CHAIN_ID,
    devnet,
    rpcUrl,
    sequencerUrl: env.SEQUENCER_URL ?? rpcUrl,
    anvilPort: env.ANVIL_PORT,
    port: env.PORT,
    databaseUrl: env.DATABASE_URL ?? null,
    dataDir: env.DATA_DIR ? (isAbsolute(env.DATA_DIR) ? env.DATA_DIR : join(ROOT, env.DATA_DIR)) : join(ROOT, ".data"),
    universeFile,
    startBlock: universe.startBlock,
    nativeFromBlock: Math.max(
      universe.startBlock,
      env.LEAGUE_NATIVE_FROM_BLOCK ??
        (universe.devnet?.lastBlock !== undefined ? universe.devnet.lastBlock + 1 : universe.startBlock),
    ),
    contracts: universe.contracts,
    tokens,
    pools: universe.pools,
    feeRecipient,
    treasuryBuckets: {
      operations: env.TREASURY_OPERATIONS ?? null,
      buybacks: env.TREASURY_BUYBACKS ?? null,
      treasury: env.TREASURY_TREASURY ?? null,
    },
    treasurySignerUrl: env.TREASURY_SIGNER_URL ?? null,
    executorKeysSecret: env.EXECUTOR_KEYS_SECRET ?? (devnet ? DEVNET_EXECUTOR_KEYS_SECRET : null),
    explorerTx: env.EXPLORER_TX_URL ?? null,
    cosigner,
    cosignerUrl: env.COSIGNER_URL ?? null,
    cosignerToken: env.COSIGNER_TOKEN ?? null,
    cosignerPort: env.COSIGNER_PORT ?? 42090,
    cosignerDatabaseUrl: env.COSIGNER_DATABASE_URL ?? null,
    executorsUrl: env.EXECUTORS_URL ?? null,
    executorsToken: env.EXECUTORS_TOKEN ?? null,
    executorsPort: env.EXECUTORS_PORT ?? 42091,
    executorsDatabaseUrl: env.EXECUTORS_DATABASE_URL ?? null,
    authDomain,
    publicOrigin: env.AUTH_DOMAIN ? `https://${env.AUTH_DOMAIN.toLowerCase()}` : null,
    allowedHosts,
    requirePartnerAgent: env.REQUIRE_PARTNER_AGENT,
    submitEnabled: env.SUBMIT_ENABLED,
    fastEnabled: env.FAST_ENABLED ?? devnet,
    hostedKillSwitch: env.HOSTED_KILL_SWITCH,
    hostedLive: env.HOSTED_LIVE,
    version: SERVICE_VERSION,
    devnetInfo: universe.devnet ?? null,
    trustedProxyHeader: env.TRUSTED_PROXY_HEADER?.toLowerCase() ?? null,
    trustedProxies: env.TRUSTED_PROXIES ?? ["127.0.0.1", "::1", "::ffff:127.0.0.1"],
    redisUrl: env.REDIS_URL ?? null,
    opsPort: env.OPS_PORT ?? (env.PORT === 65535 ? 65534 : env.PORT + 1),
    metricsPort: metricsPortOf(env),
    apiProcesses: env.API_PROCESSES,
    cosignerMetricsPort: env.COSIGNER_METRICS_PORT ?? 42092,
    executorsMetricsPort: env.EXECUTORS_METRICS_PORT ?? 42093,
    countryHeader: env.COUNTRY_HEADER?.toLowerCase() ?? null,
    blockedCountries: env.BLOCKED_COUNTRIES ?? DEFAULT_BLOCKED_COUNTRIES,
    rateLimits: env.RATE_LIMITS === "on",
    localQuotes: env.LOCAL_QUOTES === "on",
    indexerSchema: env.INDEXER_SCHEMA ?? null,
    shieldUrl: env.SHIELD_URL ?? null,
    aggregatorUrls: env.AGGREGATOR_URLS ?? {},
    ai: aiConfigOf(env, devnet),
    league: leagueConfigOf(env, devnet),
  };
}

/** The sign-in domain (never taken from a Host header; on the devnet localhost) and the hosts the API answers. */
function hostsOf(env: Env, devnet: boolean): { authDomain: string | null; allowedHosts: string[] } {
  const authDomain = env.AUTH_DOMAIN ?? (devnet ? `localhost:${env.PORT}` : null);
  const allowedHosts = env.ALLOWED_HOSTS ?? [
    `localhost:${env.PORT}`,
    `127.0.0.1:${env.PORT}`,
    `[::1]:${env.PORT}`,
    ...(authDomain ? [authDomain.toLowerCase()] : []),
  ];
  return { authDomain, allowedHosts };
}

/** METRICS_PORT, default PORT + 2 (PORT - 2 at the top of the range); never PORT or OPS_PORT. */
function metricsPortOf(env: Env): number {
  const p = env.METRICS_PORT ?? (env.PORT >= 65534 ? env.PORT - 2 : env.PORT + 2);
  if (p === env.PORT || p === env.OPS_PORT)
    throw new ConfigError("METRICS_PORT", "must differ from PORT and OPS_PORT (metrics have a listener of their own)");
  return p;
}

/**
 * Off the devnet the two halves of a session's 2-of-2 never meet: a process holding the
 * co-signer's key holds no executor key, the two signing services keep different stores (a store
 * is a database: host, port and name) and neither is the API's, and their bearer secrets differ.
 * Whoever owns one process then signs half of what moves a wallet, never both.
 */
function assertSignersApart(source: Record<string, string | undefined>, env: Env): void {
  const apart =
    "the co-signer and the executor signing service run apart: `npm run cosigner` with COSIGNER_KEY, " +
    "COSIGNER_TOKEN and COSIGNER_DATABASE_URL; `npm run executors` with EXECUTOR_KEYS_SECRET, EXECUTORS_TOKEN " +
    "and EXECUTORS_DATABASE_URL";
  if (source.COSIGNER_KEY && env.EXECUTOR_KEYS_SECRET)
    throw new ConfigError(
      "EXECUTOR_KEYS_SECRET",
      `set beside COSIGNER_KEY: one process would hold both halves of every session's 2-of-2. ${apart}`,
    );
  if (env.COSIGNER_TOKEN && env.COSIGNER_TOKEN === env.EXECUTORS_TOKEN)
    throw new ConfigError("EXECUTORS_TOKEN", `the same secret as COSIGNER_TOKEN. ${apart}`);
  const stores: [string, string | undefined][] = [
    ["COSIGNER_DATABASE_URL", env.COSIGNER_DATABASE_URL],
    ["EXECUTORS_DATABASE_URL", env.EXECUTORS_DATABASE_URL],
    ["DATABASE_URL", env.DATABASE_URL],
  ];
  for (const [i, [name, a]] of stores.entries()) {
    for (const [other, b] of stores.slice(i + 1)) {
      if (a && b && sameDatabase(a, b))
        throw new ConfigError(
          name,
          `names the same database as ${other}: each signing service keeps a store of its own. ${apart}`,
        );
    }
  }
}

/** Two PostgreSQL URLs naming one database (host, port and database name; users and passwords aside). */
export function sameDatabase(a: string, b: string): boolean {
  const key = (u: string) => {
    const x = new URL(u);
    const database = decodeURIComponent(x.pathname.slice(1)) || decodeURIComponent(x.username);
    return `${x.hostname.toLowerCase()}:${x.port || "5432"}/${database}`;
  };
  return key(a) === key(b);
}

function aiConfigOf(env: Env, devnet: boolean): AiConfig {
  if (env.AI_GATEWAY_URL && !env.AI_GATEWAY_KEY)
    throw new ConfigError("AI_GATEWAY_KEY", "required with AI_GATEWAY_URL");
  if (env.AI_GATEWAY_URL && !env.AI_MODELS)
    throw new ConfigError("AI_MODELS", "required with AI_GATEWAY_URL (the models offered and their prices)");
  if (env.AI_GATEWAY_STAND_IN && (!devnet || !env.AI_GATEWAY_URL))
    throw new ConfigError(
      "AI_GATEWAY_STAND_IN",
      "only on the devnet, with AI_GATEWAY_URL (npm start sets both for the stand-in gateway it starts)",
    );
  const models = (env.AI_MODELS ?? []).map((m) => ({
    id: m.id,
    price: { input: m.input, output: m.output, structured: m.structured ?? null, source: m.source ?? "config" },
  }));
  const unknown = env.AI_POOL_MODELS?.find((id) => !models.some((m) => m.id === id));
  if (unknown) throw new ConfigError("AI_POOL_MODELS", `${unknown} is not in AI_MODELS`);
  return {
    gatewayUrl: env.AI_GATEWAY_URL ?? null,
    gatewayKey: env.AI_GATEWAY_KEY ?? null,
    standIn: env.AI_GATEWAY_STAND_IN,
    models,
    pool: {
      usdDay: env.AI_POOL_USD_DAY ?? 0,
      ownerShareMaxUsd: env.AI_OWNER_SHARE_MAX_USD ?? 0.5,
      liveShareUsd: env.AI_LIVE_SHARE_USD ?? 0.5,
      trialShareUsd: env.AI_TRIAL_SHARE_USD ?? 0.1,
      trialDays: env.AI_TRIAL_DAYS ?? 7,
      trialPoolPct: env.AI_TRIAL_POOL_PCT ?? 25,
      models: env.AI_POOL_MODELS ?? null,
      minIntervalS: 900,
      agentsPerOwner: 2,
    },
    ownKeysSecret: env.AI_OWN_KEYS_SECRET ?? (devnet ? DEVNET_AI_OWN_KEYS_SECRET : null),
    callTimeoutMs: env.AI_CALL_TIMEOUT_MS ?? 15_000,
  };
}

export const SERVICE_VERSION = "0.1.0";
export { DEVNET_MNEMONIC } from "./devnetAccount.js";
/** The devnet's executor sealing secret: public, so never for keys that hold real money. */
export const DEVNET_EXECUTOR_KEYS_SECRET = "pit-devnet-executor-keys-not-a-secret-0001";
