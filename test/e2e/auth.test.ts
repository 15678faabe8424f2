import { createHash } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getAddress } from "viem";
import type { Devnet } from "../helpers/devnet.js";
import { serveApi, type Api, type StoreKind } from "../helpers/api.js";
import { startServedDevnet, type Served } from "../helpers/stack.js";
import { SIGN_IN_CAPS } from "../../api/auth/signin.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { sanctionsListAbi } from "../../abis/fixtures.js";

type Account = ReturnType<typeof privateKeyToAccount>;

/** A JSON POST to `api` naming another Host it serves (fetch always sends the URL's own host). */
function postOnHost(api: Api, host: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: api.port,
        path,
        method: "POST",
        headers: { host, "content-type": "application/json", "content-length": Buffer.byteLength(data) },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

describe.each<StoreKind>(["pglite", "postgres"])("sign-in and keys on %s", (kind) => {
  let dn: Devnet;
  let store: Served["store"];
  let api: Api;
  let served: Served;
  let now = Date.now();
  const clock = () => now;

  beforeAll(async () => {
    served = await startServedDevnet({ store: kind, clock });
    ({ dn, store, api } = served);
  });
  afterAll(() => served?.stop());

  async function signIn(a: Account, target: Api = api) {
    const ch = await target.call("POST", "/api/v1/auth/challenge", { address: a.address });
    expect(ch.status).toBe(200);
    const signature = await a.signMessage({ message: ch.json.message });
    return target.call("POST", "/api/v1/auth/verify", { address: a.address, signature });
  }

  it("issues a wallet-bound key for an EIP-4361 challenge signed with personal_sign", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const ch = await api.call("POST", "/api/v1/auth/challenge", { address: a.address.toLowerCase() });
    expect(ch.status).toBe(200);
    const c = ch.json;
    expect(c).toMatchObject({
      address: a.address,
      domain: api.config.authDomain,
      chain_id: 4663,
      version: "1",
      purpose: "sign-in",
    });
    expect(c.expires_at - c.issued_at).toBe(300);
    expect(c.message).toContain(
      `${api.config.authDomain} wants you to sign in with your Ethereum account:\n${a.address}`,
    );
    expect(c.message).toContain("Chain ID: 4663");
    expect(c.message).toContain(`Nonce: ${c.nonce}`);
    expect(c.message).toContain("Terms of Use");
    expect(c.message).toContain("Expiration Time:");
    expect(typeof c.then).toBe("string");

    const signature = await a.signMessage({ message: c.message });
    const v = await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature });
    expect(v.status).toBe(200);
    expect(v.json.api_key).toMatch(/^pit_w_[A-Za-z0-9_-]{43}$/);
    expect(v.json).toMatchObject({ wallet: a.address.toLowerCase(), partner_agent: null, partner_check: "ok" });
    expect(v.json.expires_at).toBe(Math.floor(now / 1000) + 2_592_000);
    expect(v.json.account).toEqual({ id: expect.any(Number), name: expect.any(String) });
    expect(typeof v.json.key_id).toBe("number");

    // Only the SHA-256 is stored.
    const rows = await store.db.query<{ key_hash: string }>("SELECT key_hash FROM app.api_keys WHERE id = $1", [
      v.json.key_id,
    ]);
    expect(rows[0]!.key_hash).toBe(createHash("sha256").update(v.json.api_key).digest("hex"));
    const dump = JSON.stringify(await store.db.query("SELECT * FROM app.api_keys"));
    expect(dump).not.toContain(v.json.api_key);

    const me = await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${v.json.api_key}` });
    expect(me.status).toBe(200);
    expect(me.json).toEqual({
      wallet: a.address.toLowerCase(),
      account: v.json.account,
      key_id: v.json.key_id,
      expires_at: v.json.expires_at,
      partner_agent: null,
    });

    // Same wallet again: same account, a second key.
    const again = await signIn(a);
    expect(again.json.account).toEqual(v.json.account);
    expect(again.json.key_id).not.toBe(v.json.key_id);
  });

  it("refuses a replayed or expired challenge and a wrong or malformed signature", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const ch = await api.call("POST", "/api/v1/auth/challenge", { address: a.address });
    const signature = await a.signMessage({ message: ch.json.message });
    expect((await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature })).status).toBe(200);
    const replay = await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature });
    expect([replay.status, replay.json.error.code]).toEqual([401, "CHALLENGE_EXPIRED"]);

    const ch2 = await api.call("POST", "/api/v1/auth/challenge", { address: a.address });
    const other = privateKeyToAccount(generatePrivateKey());
    const wrong = await api.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: await other.signMessage({ message: ch2.json.message }),
    });
    expect([wrong.status, wrong.json.error.code]).toEqual([401, "BAD_SIGNATURE"]);
    const malformed = await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature: "0x1234" });
    expect([malformed.status, malformed.json.error.code]).toEqual([400, "BAD_REQUEST"]);
    const badAddress = await api.call("POST", "/api/v1/auth/challenge", { address: "0xnothex" });
    expect([badAddress.status, badAddress.json.error.code]).toEqual([400, "BAD_REQUEST"]);

    // The challenge survived the wrong signature, but not 300 seconds.
    now += 301_000;
    const late = await api.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: await a.signMessage({ message: ch2.json.message }),
    });
    expect([late.status, late.json.error.code]).toEqual([401, "CHALLENGE_EXPIRED"]);
  });

  it("tries the newest open challenge first, or exactly the named one, and keeps five open at most", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const first = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
    const second = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
    const sigFirst = await a.signMessage({ message: first.message });
    const named = await api.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: sigFirst,
      nonce: second.nonce,
    });
    expect([named.status, named.json.error.code]).toEqual([401, "BAD_SIGNATURE"]);
    expect((await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature: sigFirst })).status).toBe(
      200,
    );

    const b = privateKeyToAccount(generatePrivateKey());
    const six = [];
    for (let i = 0; i < 6; i++) {
      now += 1000;
      six.push((await api.call("POST", "/api/v1/auth/challenge", { address: b.address })).json);
    }
    const open = await store.db.query("SELECT nonce FROM app.challenges WHERE wallet = $1 AND used_at IS NULL", [
      b.address.toLowerCase(),
    ]);
    expect(open).toHaveLength(5);
    const oldest = await api.call("POST", "/api/v1/auth/verify", {
      address: b.address,
      signature: await b.signMessage({ message: six[0].message }),
    });
    expect(oldest.status).toBe(401);
    const newest = await api.call("POST", "/api/v1/auth/verify", {
      address: b.address,
      signature: await b.signMessage({ message: six[5].message }),
      nonce: six[5].nonce,
    });
    expect(newest.status).toBe(200);
  });

  it("lets no other client retire a wallet's challenges: B asking many for W leaves W's own open", async () => {
    const proxied = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      config: { trustedProxyHeader: "x-forwarded-for", trustedProxies: ["127.0.0.1", "::1", "::ffff:127.0.0.1"] },
    });
    try {
      const w = privateKeyToAccount(generatePrivateKey());
      const ask = (client: string) =>
        proxied.call("POST", "/api/v1/auth/challenge", { address: w.address }, { "x-forwarded-for": client });
      const own = (await ask("198.51.100.20")).json;
      for (let i = 0; i < 8; i++) {
        now += 1000;
        expect((await ask("203.0.113.66")).status).toBe(200);
      }
      // W signs its own challenge and sends it without a nonce, as the SDK does.
      const v = await proxied.call(
        "POST",
        "/api/v1/auth/verify",
        { address: w.address, signature: await w.signMessage({ message: own.message }) },
        { "x-forwarded-for": "198.51.100.20" },
      );
      expect(v.status).toBe(200);
      expect(v.json.wallet).toBe(w.address.toLowerCase());
    } finally {
      await proxied.close();
    }
  });

  it("revokes one key, and all of a wallet's keys by signature", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const k1 = (await signIn(a)).json.api_key;
    const k2 = (await signIn(a)).json.api_key;
    const k3 = (await signIn(a)).json;
    const revoke = await api.call("POST", "/api/v1/auth/revoke", undefined, { authorization: `Bearer ${k3.api_key}` });
    expect(revoke.json).toEqual({ revoked: true, key_id: k3.key_id, wallet: a.address.toLowerCase() });
    const after = await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${k3.api_key}` });
    expect([after.status, after.json.error.code]).toEqual([401, "UNAUTHORIZED"]);

    // A sign-in challenge cannot revoke-all, and a revoke-all challenge cannot sign in.
    const signInCh = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
    const cross = await api.call("POST", "/api/v1/auth/revoke-all", {
      address: a.address,
      signature: await a.signMessage({ message: signInCh.message }),
      nonce: signInCh.nonce,
    });
    expect([cross.status, cross.json.error.code]).toEqual([401, "CHALLENGE_EXPIRED"]);
    const ra = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address, purpose: "revoke-all" })).json;
    expect(ra.purpose).toBe("revoke-all");
    expect(ra.message).toContain("Revoke every API key");
    const sig = await a.signMessage({ message: ra.message });
    const notSignIn = await api.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: sig,
      nonce: ra.nonce,
    });
    expect([notSignIn.status, notSignIn.json.error.code]).toEqual([401, "CHALLENGE_EXPIRED"]);
    const noNonce = await api.call("POST", "/api/v1/auth/revoke-all", { address: a.address, signature: sig });
    expect(noNonce.status).toBe(400);
    const done = await api.call("POST", "/api/v1/auth/revoke-all", {
      address: a.address,
      signature: sig,
      nonce: ra.nonce,
    });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ wallet: a.address.toLowerCase(), revoked: 2 });
    for (const k of [k1, k2])
      expect((await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${k}` })).status).toBe(401);
    const replay = await api.call("POST", "/api/v1/auth/revoke-all", {
      address: a.address,
      signature: sig,
      nonce: ra.nonce,
    });
    expect(replay.json.error.code).toBe("CHALLENGE_EXPIRED");
  });

  it("takes a revoke-all only on the host that issued its challenge", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const key = (await signIn(a)).json.api_key;
    // Asked on 127.0.0.1:<port>; the server also answers for localhost:<port>.
    const ra = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address, purpose: "revoke-all" })).json;
    const revokeAll = { address: a.address, signature: await a.signMessage({ message: ra.message }), nonce: ra.nonce };
    const elsewhere = await postOnHost(api, `localhost:${api.port}`, "/api/v1/auth/revoke-all", revokeAll);
    expect([elsewhere.status, elsewhere.json.error?.code]).toEqual([401, "CHALLENGE_EXPIRED"]);
    expect((await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` })).status).toBe(200);
    // Still open on its own host.
    const here = await postOnHost(api, `127.0.0.1:${api.port}`, "/api/v1/auth/revoke-all", revokeAll);
    expect([here.status, here.json.revoked]).toEqual([200, 1]);
    expect((await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` })).status).toBe(401);
  });

  it("locks an address out of authentication attempts, not out of its live keys", async () => {
    const limited = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      limiter: new RateLimiter(clock, 1000, true),
    });
    try {
      const key = (await signIn(privateKeyToAccount(generatePrivateKey()), limited)).json.api_key;
      const me = (k: string) => limited.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${k}` });
      for (let i = 0; i < 20; i++) expect((await me("pit_w_not-a-key")).status).toBe(401);
      const locked = await me("pit_w_not-a-key");
      expect([locked.status, locked.json.error.code]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await me(key)).status).toBe(200);
      // Signing in is an authentication attempt: still locked.
      const b = privateKeyToAccount(generatePrivateKey());
      const ch = (await limited.call("POST", "/api/v1/auth/challenge", { address: b.address })).json;
      const verify = await limited.call("POST", "/api/v1/auth/verify", {
        address: b.address,
        signature: await b.signMessage({ message: ch.message }),
      });
      expect([verify.status, verify.json.error.code]).toEqual([429, "RATE_LIMITED"]);
    } finally {
      await limited.close();
    }
  });

  it(
    "counts a wrong sign-in signature as a failed authentication; a locked-out address's sign-ins spend none of its " +
      "sign-in budget",
    async () => {
      const limited = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: store.db,
        clock,
        limiter: new RateLimiter(clock, 1000, true),
      });
      try {
        const a = privateKeyToAccount(generatePrivateKey());
        const ch = (await limited.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
        const other = privateKeyToAccount(generatePrivateKey());
        const wrong = await limited.call("POST", "/api/v1/auth/verify", {
          address: a.address,
          signature: await other.signMessage({ message: ch.message }),
        });
        expect([wrong.status, wrong.json.error.code]).toEqual([401, "BAD_SIGNATURE"]);
        // The wrong signature was the first of the address's 20 failures: 19 bad keys lock it out.
        const me = () => limited.call("GET", "/api/v1/auth/me", undefined, { authorization: "Bearer pit_w_not-a-key" });
        for (let i = 0; i < 19; i++) expect((await me()).status).toBe(401);
        expect((await me()).status).toBe(429);
        // More sign-ins than the sign-in bucket holds (10): each refused by the lockout, none spending that bucket.
        const refusals = new Set<string>();
        for (let i = 0; i < 12; i++) {
          const r = await limited.call("POST", "/api/v1/auth/verify", {
            address: a.address,
            signature: await a.signMessage({ message: ch.message }),
          });
          refusals.add(`${r.status} ${r.json.error.code} ${r.json.error.message}`);
        }
        expect([...refusals]).toEqual([
          "429 RATE_LIMITED too many failed authentications from this address; retry after the pause",
        ]);
      } finally {
        await limited.close();
      }
    },
  );

  it("reads the partner agent vault, and restricts sign-in to partner agents when configured", async () => {
    const agentWallet = devnetAccount(8);
    const owner = devnetAccount(7);
    const asWallet = await signIn(agentWallet as unknown as Account);
    expect(asWallet.json.partner_agent).toEqual({
      agent_id: 1,
      token: dn.universe.devnet!.fixtures.launchToken,
      symbol: "PLD",
      role: "agentWallet",
      name: "Demo Agent",
    });
    expect((await signIn(owner as unknown as Account)).json.partner_agent.role).toBe("owner");

    const restricted = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      config: { requirePartnerAgent: true },
    });
    const stranger = await signIn(privateKeyToAccount(generatePrivateKey()), restricted);
    expect([stranger.status, stranger.json.error.code]).toEqual([403, "NOT_PARTNER_AGENT"]);
    expect((await signIn(owner as unknown as Account, restricted)).status).toBe(200);
    await restricted.close();

    // A vault that cannot be read: 503 PARTNER_UNAVAILABLE when restricted, partner_check otherwise.
    const contracts = {
      ...dn.universe.contracts,
      partnerAgentVault: getAddress("0x000000000000000000000000000000000000dEaD"),
    };
    const broken = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      config: { requirePartnerAgent: true, contracts },
    });
    const unavailable = await signIn(owner as unknown as Account, broken);
    expect([unavailable.status, unavailable.json.error.code]).toEqual([503, "PARTNER_UNAVAILABLE"]);
    expect(unavailable.headers.get("retry-after")).toBeTruthy();
    await broken.close();
    const open = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, clock, config: { contracts } });
    const unread = await signIn(owner as unknown as Account, open);
    expect(unread.status).toBe(200);
    expect(unread.json.partner_agent).toBeNull();
    expect(unread.json.partner_check).not.toBe("ok");
    await open.close();
  });

  it("refuses sanctioned wallets, blocked countries and a server without a sign-in domain", async () => {
    const sanctioned = dn.universe.devnet!.accounts.sanctioned!;
    const s = await api.call("POST", "/api/v1/auth/challenge", { address: sanctioned });
    expect([s.status, s.json.error.code]).toEqual([451, "SANCTIONED"]);
    expect(s.json.error.address).toBe(sanctioned);

    const geo = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      config: { countryHeader: "cf-ipcountry" },
    });
    const a = privateKeyToAccount(generatePrivateKey());
    for (const code of ["IR", "ir", "UA-43", "KP"]) {
      const r = await geo.call("POST", "/api/v1/auth/challenge", { address: a.address }, { "cf-ipcountry": code });
      expect([r.status, r.json.error.code]).toEqual([451, "COUNTRY_BLOCKED"]);
    }
    expect(
      (await geo.call("POST", "/api/v1/auth/challenge", { address: a.address }, { "cf-ipcountry": "UA" })).status,
    ).toBe(200);
    expect((await geo.call("GET", "/api/v1/config", undefined, { "cf-ipcountry": "CU" })).status).toBe(451);
    await geo.close();

    const noDomain = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, clock, config: { authDomain: null } });
    const d = await noDomain.call("POST", "/api/v1/auth/challenge", { address: a.address });
    expect([d.status, d.json.error.code]).toEqual([503, "AUTH_DOMAIN_UNSET"]);
    await noDomain.close();
  });

  it("lets a key whose wallet became sanctioned revoke itself, and nothing else", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const key = (await signIn(a)).json.api_key;
    const list = dn.universe.contracts.sanctionsList;
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: list,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[a.address]],
      }),
    );
    const me = await api.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` });
    expect([me.status, me.json.error.code]).toEqual([451, "SANCTIONED"]);
    const revoke = await api.call("POST", "/api/v1/auth/revoke", undefined, { authorization: `Bearer ${key}` });
    expect(revoke.status).toBe(200);
  });

  it("caps new accounts and new keys per address", async () => {
    /** Rows this client address made in the last day. */
    const today = async (table: "accounts" | "api_keys") =>
      (
        await store.db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM app.${table} WHERE client_addr = '127.0.0.1' AND created_at > $1`,
          [Math.floor(now / 1000) - 86400],
        )
      ).map((r) => Number(r.n))[0]!;
    /** An app on the same store whose caps are SPEC's but for `caps`. */
    const cappedAt = (caps: Partial<typeof SIGN_IN_CAPS>) =>
      serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: store.db,
        clock,
        cosigner: null,
        executors: null,
        signInCaps: { ...SIGN_IN_CAPS, ...caps },
      });
    const a = privateKeyToAccount(generatePrivateKey());
    const accounts = await cappedAt({ accountsPerAddressDay: (await today("accounts")) + 1 });
    try {
      expect((await signIn(a, accounts)).status).toBe(200);
      const b = await signIn(privateKeyToAccount(generatePrivateKey()), accounts);
      expect([b.status, b.json.error.code]).toEqual([429, "SIGNUP_CAPPED"]);
      expect(Number(b.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await accounts.close();
    }
    const keys = await cappedAt({ keysPerAddressDay: await today("api_keys") });
    try {
      const k = await signIn(a, keys);
      expect([k.status, k.json.error.code]).toEqual([429, "KEYS_CAPPED"]);
    } finally {
      await keys.close();
    }
  });

  it("keeps keys across a restart of the app on the same store", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const key = (await signIn(a)).json.api_key;
    const db2 = await store.reopen();
    const restarted = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: db2, clock });
    const me = await restarted.call("GET", "/api/v1/auth/me", undefined, { authorization: `Bearer ${key}` });
    expect(me.status).toBe(200);
    expect(me.json.wallet).toBe(a.address.toLowerCase());
    await restarted.close();
  });
});
