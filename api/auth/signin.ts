import { createHash, randomBytes } from "node:crypto";
import { getAddress, isAddress, type Address, type Hex } from "viem";
import { recoverMessageAddress } from "../../lib/secp.js";
import { createSiweMessage } from "viem/siwe";
import { LRUCache } from "lru-cache";
import { partnerAgentVaultAbi, sanctionsListAbi } from "../../abis/fixtures.js";
import { z } from "zod";
import { inOwnWords, Refusal, worded } from "../errors/index.js";
import type { Revocations, Revoked } from "./revocations.js";
import type { Db } from "../ports/store/db.js";
import type { KeyRecord } from "../http/env.js";
import type { Common } from "../ports/common.js";

export type { KeyRecord };

export const KEY_PREFIX = "pit_w_";
export const CHALLENGE_TTL_S = 300;
export const KEY_TTL_S = 2_592_000;
export const SIGN_IN_STATEMENT = "Sign in to the trading service. Signing accepts the Terms of Use.";
export const MAX_OPEN_CHALLENGES = 5;
export const REVOKE_ALL_STATEMENT = "Revoke every API key of this wallet. This cannot sign in.";
/** New accounts and keys: at most so many per client address a day, and for the whole service an hour. */
export type SignInCaps = {
  accountsPerAddressDay: number;
  accountsServiceHour: number;
  keysPerAddressDay: number;
  keysServiceHour: number;
};
/** SPEC's sign-in caps (tests and the benchmark pass their own as SignInDeps.caps). */
export const SIGN_IN_CAPS: Readonly<SignInCaps> = Object.freeze({
  accountsPerAddressDay: 20,
  accountsServiceHour: 1000,
  keysPerAddressDay: 100,
  keysServiceHour: 5000,
});

export type Purpose = "sign-in" | "revoke-all";
/** `revocations`: where revoked keys are announced to other instances (Redis), if anywhere. */
export type SignInDeps = Pick<Common, "config" | "chain" | "clock"> & {
  db: Db;
  revocations?: Revocations | null;
  /** New accounts' and keys' caps (default SIGN_IN_CAPS). */
  caps?: SignInCaps;
};
/** Where a sign-in request came from: the Host it was asked on (one the server answers for) and the client. */
export type SignInOrigin = { host: string; clientAddr: string };
export type PartnerAgent = {
  agent_id: number;
  token: Address;
  symbol: string;
  role: "agentWallet" | "owner";
  name: string;
};

const now = (d: SignInDeps) => Math.floor(d.clock() / 1000);
export const hashKey = (apiKey: string) => createHash("sha256").update(apiKey).digest("hex");

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The wallet a request names, checksummed; any other value refused in SPEC's words. */
const walletField = worded(
  z
    .string()
    .regex(HEX_ADDRESS)
    .refine((v) => isAddress(v, { strict: false }))
    .transform((v) => getAddress(v)),
  "address must be a 0x address (40 hex digits)",
);
const signatureField = worded(
  z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/)
    .transform((v) => v as Hex),
  "signature must be 0x followed by 130 hex digits (personal_sign)",
);
const NONCE = /^[A-Za-z0-9]{8,128}$/;

/**
 * A challenge's nonce: 128 bits from the OS CSPRNG as 32 hex digits (EIP-4361: alphanumeric, at
 * least 8). Not viem's generateSiweNonce: it slices one Math.random buffer, each nonce the previous
 * one shifted by a character, so one challenge's nonce told the next.
 */
export const newNonce = (): string => randomBytes(16).toString("hex");
const BAD_NONCE = "nonce must be the challenge's nonce";

/**
 * The sign-in requests as the edge parses them: each field refused in its own words, in this order;
 * fields they do not know are ignored.
 */
export const challengeRequest = z.object({
  address: walletField,
  purpose: worded(z.enum(["revoke-all"]).optional(), "purpose may only be revoke-all"),
});
export const verifyRequest = z.object({
  address: walletField,
  signature: signatureField,
  // Checked after the sanctions list (SPEC's order): a value that is no nonce is kept as null, refused then.
  nonce: z
    .string()
    .regex(NONCE)
    .optional()
    .transform((v): string | undefined | null => v)
    .catch(null),
});
export const revokeAllRequest = z.object({
  address: walletField,
  signature: signatureField,
  nonce: inOwnWords(z.string().regex(NONCE), (v) =>
    v === undefined
      ? "nonce is required: the revoke-all challenge's nonce"
      : typeof v === "string" && NONCE.test(v)
        ? null
        : BAD_NONCE,
  ),
});
export type ChallengeParameters = z.infer<typeof challengeRequest>;
export type VerifyParameters = z.infer<typeof verifyRequest>;
export type RevokeAllParameters = z.infer<typeof revokeAllRequest>;

/** The domain sign-in messages name: 503 AUTH_DOMAIN_UNSET without one (before the request is read). */
export function signInDomain(d: Pick<SignInDeps, "config">): string {
  if (!d.config.authDomain) throw new Refusal("AUTH_DOMAIN_UNSET", "this server has no sign-in domain configured");
  return d.config.authDomain;
}

/** 451 SANCTIONED when the sanctions list names the address; unreadable list fails closed. */
export async function assertNotSanctioned(
  d: Pick<SignInDeps, "chain" | "config">,
  address: Address,
  field = "address",
): Promise<void> {
  let sanctioned: boolean;
  try {
    sanctioned = await d.chain.readContract({
      address: d.config.contracts.sanctionsList,
      abi: sanctionsListAbi,
      functionName: "isSanctioned",
      args: [address],
    });
  } catch (err) {
    throw new Refusal(
      "ENGINE_UNAVAILABLE",
      "the sanctions list could not be read; try again shortly",
      {},
      { cause: err, retryAfterS: 5 },
    );
  }
  if (sanctioned) throw new Refusal("SANCTIONED", `${field} ${address} is on the sanctions list`, { address, field });
}

/**
 * `host`: the Host the challenge was asked on (one the server answers for); a revoke-all challenge
 * is good only there. `clientAddr`: who asked (api/http/guards.ts). At most five are open per
 * wallet and client: a sixth retires that client's oldest, never another client's, so nobody can
 * keep a wallet from signing in by asking challenges for it.
 */
export async function createChallenge(d: SignInDeps, q: ChallengeParameters, { host, clientAddr }: SignInOrigin) {
  const domain = signInDomain(d);
  const { address } = q;
  const purpose: Purpose = q.purpose ?? "sign-in";
  await assertNotSanctioned(d, address);
  const issuedAt = now(d);
  const expiresAt = issuedAt + CHALLENGE_TTL_S;
  const nonce = newNonce();
  const statement = purpose === "revoke-all" ? REVOKE_ALL_STATEMENT : SIGN_IN_STATEMENT;
  const uri = `https://${domain}`;
  const message = createSiweMessage({
    domain,
    address,
    statement,
    uri,
    version: "1",
    chainId: d.config.chainId,
    nonce,
    issuedAt: new Date(issuedAt * 1000),
    expirationTime: new Date(expiresAt * 1000),
    ...(purpose === "revoke-all" ? { requestId: "revoke-all" } : {}),
  });
  await d.db.tx(async (tx) => {
    await tx.query(
      `INSERT INTO app.challenges (nonce, wallet, purpose, message, issued_at, expires_at, host, client_addr)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [nonce, address.toLowerCase(), purpose, message, issuedAt, expiresAt, host.toLowerCase(), clientAddr],
    );
    await tx.query(
      `UPDATE app.challenges SET used_at = $2 WHERE nonce IN (
         SELECT nonce FROM app.challenges WHERE wallet = $1 AND client_addr = $3 AND used_at IS NULL AND expires_at > $2
         ORDER BY issued_at DESC, nonce OFFSET ${MAX_OPEN_CHALLENGES})`,
      [address.toLowerCase(), issuedAt, clientAddr],
    );
  });
  return {
    address,
    message,
    nonce,
    domain,
    chain_id: d.config.chainId,
    issued_at: issuedAt,
    expires_at: expiresAt,
    then:
      purpose === "revoke-all"
        ? "Sign message with personal_sign and POST /api/v1/auth/revoke-all {address, signature, nonce} within 300 s."
        : "Check the domain, chain id 4663 and your address in message, sign it with personal_sign and " +
          "POST /api/v1/auth/verify {address, signature, nonce} within 300 s.",
    uri,
    version: "1",
    statement,
    purpose,
  };
}

/**
 * How many other clients' open challenges a verify without a nonce tries (newest first) after the
 * asking client's own (at most five). Each try is one signature recovery, ~1–3.5 ms of CPU with
 * viem here, so a verify costs at most 21 (≤ ~75 ms) however many challenges an attacker opened
 * for the wallet. Past the bound only the nonce finds a challenge; the refusal says so.
 */
export const MAX_TRIED_OTHERS = 16;

/**
 * Finds the open challenge (the one named; without a nonce the asking client's own, then the
 * MAX_TRIED_OTHERS newest of other clients', newest first) whose message the signature recovers to
 * `address`, and uses it up atomically. 401 CHALLENGE_EXPIRED when none is open, 401 BAD_SIGNATURE
 * when none matches (the challenges stay open for the real wallet).
 *
 * A revoke-all challenge is open only on the host that issued it (SPEC "Authentication" 4).
 * Asked on another served host it is CHALLENGE_EXPIRED, SPEC's "no open challenge for the
 * address": none is open there. Not BAD_SIGNATURE (the signature is good) nor UNKNOWN_HOST (421
 * is for a host the server does not answer for; this one it does).
 */
async function consumeChallenge(
  d: SignInDeps,
  address: Address,
  signature: Hex,
  purpose: Purpose,
  nonce: string | undefined,
  { host, clientAddr }: SignInOrigin,
): Promise<void> {
  const open = await openChallenges(d, address, purpose, nonce, host, clientAddr);
  const onHost = purpose === "revoke-all" ? " on this host" : "";
  if (open.length === 0) {
    throw new Refusal(
      "CHALLENGE_EXPIRED",
      `no open ${purpose} challenge for ${address}${onHost} ` +
        `(expired or used${onHost ? ", or issued on another host" : ""}): ask for a new one`,
    );
  }
  for (const c of open) {
    let signer: Address;
    try {
      signer = await recoverMessageAddress({ message: c.message, signature });
    } catch {
      break;
    }
    if (signer !== address) continue;
    const used = await d.db.query(
      "UPDATE app.challenges SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL RETURNING nonce",
      [c.nonce, now(d)],
    );
    if (used.length === 1) return;
    throw new Refusal("CHALLENGE_EXPIRED", "that challenge was just used: ask for a new one");
  }
  // Others' challenges were open: the signed one may be past the bound, or asked from another address.
  const crowded = nonce === undefined && open.some((c) => !c.own);
  throw new Refusal(
    "BAD_SIGNATURE",
    crowded
      ? "the signature does not recover to this address for the open challenges tried; other clients hold " +
          "open challenges for this wallet, so send the signed challenge's nonce with the signature"
      : "the signature does not recover to this address for any open challenge",
  );
}

/** The candidates consumeChallenge tries, in order; `own`: asked by this client. */
async function openChallenges(
  d: SignInDeps,
  address: Address,
  purpose: Purpose,
  nonce: string | undefined,
  host: string,
  clientAddr: string,
) {
  const params: unknown[] = [address.toLowerCase(), purpose, now(d), clientAddr];
  const onHost = purpose === "revoke-all" ? `AND host = $${params.push(host.toLowerCase())}` : "";
  const open = `SELECT nonce, message, issued_at, client_addr IS NOT DISTINCT FROM $4 AS own FROM app.challenges
    WHERE wallet = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3 ${onHost}`;
  if (nonce !== undefined)
    return d.db.query<{ nonce: string; message: string; own: boolean }>(
      `${open} AND nonce = $${params.push(nonce)}`,
      params,
    );
  return d.db.query<{ nonce: string; message: string; own: boolean }>(
    `(${open} AND client_addr IS NOT DISTINCT FROM $4 ORDER BY issued_at DESC, nonce LIMIT ${MAX_OPEN_CHALLENGES})
     UNION ALL (${open} AND client_addr IS DISTINCT FROM $4 ORDER BY issued_at DESC, nonce LIMIT ${MAX_TRIED_OTHERS})
     ORDER BY own DESC, issued_at DESC, nonce`,
    params,
  );
}

/** Partner agent lookup in the vault; `check` says why it could not be read. */
export async function partnerAgentOf(
  d: Pick<SignInDeps, "chain" | "config">,
  wallet: Address,
): Promise<{ agent: PartnerAgent | null; check: string }> {
  try {
    const vault = d.config.contracts.partnerAgentVault;
    const id = await d.chain.readContract({
      address: vault,
      abi: partnerAgentVaultAbi,
      functionName: "agentIdOf",
      args: [wallet],
    });
    if (id === 0n) return { agent: null, check: "ok" };
    const a = await d.chain.readContract({
      address: vault,
      abi: partnerAgentVaultAbi,
      functionName: "getAgent",
      args: [id],
    });
    return {
      agent: {
        agent_id: Number(id),
        token: getAddress(a.token),
        symbol: a.symbol,
        role: getAddress(a.agentWallet) === wallet ? "agentWallet" : "owner",
        name: a.name,
      },
      check: "ok",
    };
  } catch {
    return { agent: null, check: "partner list unreadable (chain read failed)" };
  }
}

async function enforceCap(
  d: SignInDeps,
  table: "accounts" | "api_keys",
  clientAddr: string,
  perAddressDay: number,
  serviceHour: number,
  code: "SIGNUP_CAPPED" | "KEYS_CAPPED",
) {
  const t = now(d);
  const [{ n: perAddress }] = (await d.db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM app.${table} WHERE client_addr = $1 AND created_at > $2`,
    [clientAddr, t - 86_400],
  )) as [{ n: string }];
  if (Number(perAddress) >= perAddressDay)
    throw new Refusal(code, `this address reached its daily cap (${perAddressDay})`, {}, { retryAfterS: 3600 });
  const [{ n: service }] = (await d.db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM app.${table} WHERE created_at > $1`,
    [t - 3600],
  )) as [{ n: string }];
  if (Number(service) >= serviceHour)
    throw new Refusal(code, `the service reached its hourly cap (${serviceHour})`, {}, { retryAfterS: 600 });
}

/**
 * Stores a new key for the wallet (in the sign-in's transaction), and its account the first time,
 * each within its caps (SIGNUP_CAPPED, KEYS_CAPPED).
 */
async function storeKey(d: SignInDeps, address: Address, keyHash: string, clientAddr: string, t: number) {
  const caps = d.caps ?? SIGN_IN_CAPS;
  const wallet = address.toLowerCase();
  let [account] = await d.db.query<{ id: string; name: string }>(
    "SELECT id::text, name FROM app.accounts WHERE wallet = $1",
    [wallet],
  );
  if (!account) {
    await enforceCap(d, "accounts", clientAddr, caps.accountsPerAddressDay, caps.accountsServiceHour, "SIGNUP_CAPPED");
    [account] = await d.db.query<{ id: string; name: string }>(
      `INSERT INTO app.accounts (wallet, name, client_addr, created_at) VALUES ($1, $2, $3, $4)
       RETURNING id::text, name`,
      [wallet, `wallet ${address.slice(0, 6)}…${address.slice(-4)}`, clientAddr, t],
    );
  }
  await enforceCap(d, "api_keys", clientAddr, caps.keysPerAddressDay, caps.keysServiceHour, "KEYS_CAPPED");
  const [key] = await d.db.query<{ id: string }>(
    `INSERT INTO app.api_keys (key_hash, wallet, account_id, client_addr, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text`,
    [keyHash, wallet, account!.id, clientAddr, t, t + KEY_TTL_S],
  );
  return { keyId: Number(key!.id), account: { id: Number(account!.id), name: account!.name } };
}

/** The wallet's partner agent; where only partners sign in, 503 when the list is unreadable, 403 for no partner. */
async function signInPartner(d: SignInDeps, address: Address) {
  const partner = await partnerAgentOf(d, address);
  if (!d.config.requirePartnerAgent) return partner;
  if (partner.check !== "ok")
    throw new Refusal(
      "PARTNER_UNAVAILABLE",
      "the partner agent list could not be read; try again shortly",
      {},
      { retryAfterS: 10 },
    );
  if (!partner.agent)
    throw new Refusal("NOT_PARTNER_AGENT", "this server signs in only partner agents' wallets and owners");
  return partner;
}

/** POST auth/verify: a signed sign-in challenge for a new API key (and the wallet's account, the first time). */
export async function verifySignIn(d: SignInDeps, q: VerifyParameters, from: SignInOrigin) {
  const { address, signature } = q;
  await assertNotSanctioned(d, address);
  if (q.nonce === null) throw new Refusal("BAD_REQUEST", BAD_NONCE);
  await consumeChallenge(d, address, signature, "sign-in", q.nonce, from);
  const partner = await signInPartner(d, address);
  const { clientAddr } = from;
  const t = now(d);
  const apiKey = KEY_PREFIX + randomBytes(32).toString("base64url");
  const row = await d.db.tx((tx) => storeKey({ ...d, db: tx }, address, hashKey(apiKey), clientAddr, t));
  const wallet = address.toLowerCase();
  return {
    api_key: apiKey,
    key_id: row.keyId,
    expires_at: t + KEY_TTL_S,
    wallet,
    account: row.account,
    partner_agent: partner.agent,
    partner_check: partner.check,
    note:
      "Shown once: only its SHA-256 is stored. Send it as Authorization: Bearer <api_key>. " +
      "It lasts 30 days; POST /api/v1/auth/revoke ends it sooner.",
  };
}

/**
 * Live keys seen in the last 2 s, by hash. A revocation clears this instance's entries at once;
 * other instances (npm run api side by side) stop honouring a revoked key within 2 s.
 */
export const KEY_CACHE_TTL_MS = 2_000;
const keyCache = new LRUCache<string, KeyRecord>({ max: 50_000, ttl: KEY_CACHE_TTL_MS });

function forgetKeys(match: (k: KeyRecord) => boolean) {
  for (const [hash, k] of keyCache.entries()) if (match(k)) keyCache.delete(hash);
}

/** Drops revoked keys from this instance's cache (here, or as announced by another instance). */
export function forgetRevoked(r: Revoked): void {
  if ("keyId" in r) forgetKeys((k) => k.keyId === r.keyId);
  else forgetKeys((k) => k.wallet.toLowerCase() === r.wallet.toLowerCase());
}

/** Forgets here, then tells the other instances; the revocation itself is already stored. */
async function announce(d: Pick<SignInDeps, "revocations">, r: Revoked) {
  forgetRevoked(r);
  // Stored already: a Redis that does not answer leaves other instances the cache's 2 s, no worse.
  await d.revocations?.publish(r).catch(() => {});
}

/** The live key behind a bearer token, or null (unknown, expired or revoked). */
export async function authenticate(d: Pick<SignInDeps, "db" | "clock">, apiKey: string): Promise<KeyRecord | null> {
  if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 128) return null;
  const hash = hashKey(apiKey);
  const hit = keyCache.get(hash);
  if (hit && hit.expiresAt > Math.floor(d.clock() / 1000)) return hit;
  const [r] = await d.db.query<{ id: string; wallet: string; account_id: string; name: string; expires_at: string }>(
    `SELECT k.id::text, k.wallet, k.account_id::text, a.name, k.expires_at::text
     FROM app.api_keys k JOIN app.accounts a ON a.id = k.account_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND k.expires_at > $2`,
    [hash, Math.floor(d.clock() / 1000)],
  );
  if (!r) return null;
  const key = {
    keyId: Number(r.id),
    wallet: r.wallet as Address,
    account: { id: Number(r.account_id), name: r.name },
    expiresAt: Number(r.expires_at),
  };
  keyCache.set(hash, key);
  return key;
}

export async function revokeKey(d: Pick<SignInDeps, "db" | "clock" | "revocations">, keyId: number): Promise<void> {
  await d.db.query("UPDATE app.api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [
    keyId,
    Math.floor(d.clock() / 1000),
  ]);
  await announce(d, { keyId });
}

/** `host`: the Host revoke-all arrived on; only a revoke-all challenge issued there is open to it. */
export async function revokeAll(d: SignInDeps, q: RevokeAllParameters, from: SignInOrigin) {
  const { address, signature } = q;
  await consumeChallenge(d, address, signature, "revoke-all", q.nonce, from);
  const t = now(d);
  const rows = await d.db.query(
    "UPDATE app.api_keys SET revoked_at = $2 WHERE wallet = $1 AND revoked_at IS NULL AND expires_at > $2 RETURNING id",
    [address.toLowerCase(), t],
  );
  await announce(d, { wallet: address.toLowerCase() });
  return {
    wallet: address.toLowerCase(),
    revoked: rows.length,
    note: "Every live key of this wallet is revoked; sessions are separate and stay as they are.",
  };
}
