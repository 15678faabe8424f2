import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as viem from "viem";
import {
  fromRlp,
  hexToBigInt,
  keccak256,
  numberToHex,
  parseEther,
  parseTransaction,
  serializeTransaction,
  toHex,
  toRlp,
  type Address,
  type Hex,
  type TransactionSerializableEIP1559,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashAuthorization, recoverAuthorizationAddress as viemRecoverAuthorization } from "viem/utils";
import * as secp from "../../lib/secp.js";
import { loadNative, secpWith } from "../../lib/secp.js";
import { fastBody, type FastOpts } from "../helpers/fast.js";
import { pendingGrant, typedDataOf, walletSignatures } from "../helpers/sessions.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";

/**
 * ATTACK on lib/secp (libsecp256k1 behind viem's recovery functions): crafted signatures (high-s,
 * recovery bits out of range, r or s zero or at least n, r above n and below p, compact and
 * malformed lengths, other messages, other chains, legacy and EIP-7702 transactions) sent to the
 * real service on a devnet: sign-in, fast mode, live/submit and session switch-on. Each is
 * answered as viem would answer it: a signature viem does not recover to the caller is refused
 * with the route's code, no key is issued, no transaction relayed, no session switched on.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
type Res = { status: number; json: any };

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
const word = (x: bigint): Hex => numberToHex(x, { size: 32 });
/** An RLP integer: no leading zero byte, zero as the empty string. */
const rlpInt = (x: bigint): Hex =>
  x === 0n ? "0x" : (`0x${x.toString(16).padStart(2 * Math.ceil(x.toString(16).length / 2), "0")}` as Hex);
/** The two backends the service can run on, in this process: native libsecp256k1 and viem's JavaScript. */
const native = secpWith(loadNative());
const js = secpWith(null);
const outcome = (p: Promise<unknown>) =>
  p.then(
    (ok) => ({ ok }),
    (err: Error) => ({ err: err.message.split("\n")[0] }),
  );
const codeOf = (r: Res) => ({ status: r.status, code: r.json?.error?.code });

/** A 65-byte signature's crafted twins, each named: what the routes must answer as viem does. */
function hexVariants(sig: Hex): [string, Hex][] {
  const r = hexToBigInt(`0x${sig.slice(2, 66)}`);
  const s = hexToBigInt(`0x${sig.slice(66, 130)}`);
  const v = Number.parseInt(sig.slice(130), 16);
  const other = v === 27 ? 28 : 27;
  const of = (rx: bigint, sx: bigint, vx: number) =>
    `${word(rx)}${word(sx).slice(2)}${vx.toString(16).padStart(2, "0")}` as Hex;
  return [
    ["recovery bit flipped", of(r, s, other)],
    ["v as raw yParity (0 or 1)", of(r, s, v - 27)],
    ["v = 2", of(r, s, 2)],
    ["v = 29", of(r, s, 29)],
    ["v = 37 (EIP-155 style)", of(r, s, 37)],
    ["v = 255", of(r, s, 255)],
    ["high-s, same v", of(r, N - s, v)],
    ["high-s twin (n - s, v flipped)", of(r, N - s, other)],
    ["r = 0", of(0n, s, v)],
    ["s = 0", of(r, 0n, v)],
    ["r = n", of(N, s, v)],
    ["s = n", of(r, N, v)],
    ["r = n + 1 (below p)", of(N + 1n, s, v)],
    ["r = p - 1", of(P - 1n, s, v)],
    ["r = 2^256 - 1", of(2n ** 256n - 1n, s, v)],
    ["s = n - 1", of(r, N - 1n, v)],
    ["r = 1, s = 1", of(1n, 1n, v)],
  ];
}

/** The variants viem recovers to `who` over `hash` (the ones a route may accept); every other one it must refuse. */
async function viemAccepts(hash: Hex, variants: [string, Hex][], who: Address) {
  const out: string[] = [];
  for (const [name, signature] of variants) {
    const got = await viem.recoverAddress({ hash, signature }).catch(() => null);
    // The native backend and viem's JavaScript recover the same address or refuse alike.
    expect(await outcome(native.recoverAddress({ hash, signature })), name).toEqual(
      await outcome(js.recoverAddress({ hash, signature })),
    );
    if (got === who) out.push(name);
  }
  return out;
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ store: "pglite", before: freshenMarket });
}, 180_000);
afterAll(() => stack?.stop());

const api = () => stack.api;
const keysOf = async (a: Address) =>
  (await stack.store.db.query("SELECT id FROM app.api_keys WHERE wallet = $1", [a.toLowerCase()])).length;
const tradesOf = async (a: Address) =>
  (
    await stack.store.db.query("SELECT id FROM app.trades WHERE lower(wallet) = $1 AND tx_hash IS NOT NULL", [
      a.toLowerCase(),
    ])
  ).length;
/** Neither these bytes nor anything else of the wallet's reached the chain. */
async function notRelayed(a: Address, raws: Hex[], nonce: number) {
  for (const raw of raws)
    await expect(stack.dn.pub.getTransaction({ hash: keccak256(raw) }), raw.slice(0, 20)).rejects.toThrow();
  expect(await stack.dn.pub.getTransactionCount({ address: a, blockTag: "pending" })).toBe(nonce);
  expect(await tradesOf(a)).toBe(0);
}

describe("sign-in (auth/verify)", () => {
  /** A challenge for `a`; its message, nonce and the message's EIP-191 hash. */
  async function challenge(a: Account) {
    const ch = await api().call("POST", "/api/v1/auth/challenge", { address: a.address });
    expect(ch.status).toBe(200);
    return { message: ch.json.message as string, nonce: ch.json.nonce as string };
  }
  const verify = (a: Account, signature: string, nonce?: string) =>
    api().call("POST", "/api/v1/auth/verify", { address: a.address, signature, ...(nonce ? { nonce } : {}) });

  /** Proves: a key only for twins viem recovers to the wallet; any other twin is 401 BAD_SIGNATURE, no key. */
  it("issues a key only for what viem recovers to the wallet; other twins are BAD_SIGNATURE", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const first = await challenge(a);
    const good = await a.signMessage({ message: first.message });
    const variants = hexVariants(good);
    const accepted = await viemAccepts(viem.hashMessage(first.message), variants, a.address);
    // viem reads v 0/1 as 27/28 and neither normalises nor refuses high-s: these two (and only these) are the wallet's.
    expect(accepted).toEqual(["v as raw yParity (0 or 1)", "high-s twin (n - s, v flipped)"]);
    for (const [name, signature] of variants) {
      const ch = await challenge(a);
      const twin = hexVariants(await a.signMessage({ message: ch.message })).find(([n]) => n === name)![1];
      const before = await keysOf(a.address);
      const r = await verify(a, twin, ch.nonce);
      if (accepted.includes(name)) {
        expect(r.status, name).toBe(200);
        expect(await keysOf(a.address)).toBe(before + 1);
        // The challenge is used: neither the twin nor the original signs in again with it.
        expect(codeOf(await verify(a, twin, ch.nonce))).toEqual({ status: 401, code: "CHALLENGE_EXPIRED" });
        continue;
      }
      expect(codeOf(r), `${name} ${signature}`).toEqual({ status: 401, code: "BAD_SIGNATURE" });
      expect(await keysOf(a.address), name).toBe(before);
      // The challenge stays open for the real wallet's signature.
      expect((await verify(a, await a.signMessage({ message: ch.message }), ch.nonce)).status, name).toBe(200);
    }
  }, 120_000);

  /** Proves: signatures of the wrong signer or message are 401 BAD_SIGNATURE; compact or odd lengths 400; no key. */
  it("refuses other signers' and other messages' signatures; compact and odd lengths are 400", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const old = await challenge(a);
    const ch = await challenge(a);
    const bad: [string, Hex][] = [
      ["another wallet's signature of the challenge", await other.signMessage({ message: ch.message })],
      ["the wallet's signature of another open challenge", await a.signMessage({ message: old.message })],
      ["the raw hash signed without EIP-191", await a.sign({ hash: keccak256(toHex(ch.message)) })],
      ["the EIP-191 hash signed as a message", await a.signMessage({ message: { raw: viem.hashMessage(ch.message) } })],
    ];
    for (const [name, signature] of bad)
      expect(codeOf(await verify(a, signature, ch.nonce)), name).toEqual({ status: 401, code: "BAD_SIGNATURE" });
    const good = await a.signMessage({ message: ch.message });
    const compact = viem.serializeCompactSignature(viem.signatureToCompactSignature(viem.parseSignature(good)));
    for (const malformed of [compact, `${good}00`, good.slice(0, 131), good.slice(2), "0x"])
      expect(codeOf(await verify(a, malformed, ch.nonce)), malformed).toEqual({ status: 400, code: "BAD_REQUEST" });
    expect(await keysOf(a.address)).toBe(0);
    expect((await verify(a, good, ch.nonce)).status).toBe(200);
  }, 60_000);
});

/** A typed transaction's bytes with its signature fields replaced (any values, as RLP integers). */
function resign(raw: Hex, y: bigint, r: bigint, s: bigint, rBytes?: Hex): Hex {
  const fields = fromRlp(`0x${raw.slice(4)}`, "hex") as Hex[];
  const body = toRlp([...fields.slice(0, -3), rlpInt(y), rBytes ?? rlpInt(r), rlpInt(s)]);
  return `${raw.slice(0, 4)}${body.slice(2)}` as Hex;
}

/** The crafted signature fields of a signed EIP-1559 (or 7702) transaction, each named. */
function txVariants(raw: Hex): [string, Hex][] {
  const t = parseTransaction(raw as viem.TransactionSerializedEIP1559);
  const [y, r, s] = [BigInt(t.yParity!), hexToBigInt(t.r!), hexToBigInt(t.s!)];
  return [
    ["yParity flipped", resign(raw, y ^ 1n, r, s)],
    ["high-s, same yParity", resign(raw, y, r, N - s)],
    ["yParity 2", resign(raw, 2n, r, s)],
    ["yParity 27", resign(raw, 27n, r, s)],
    ["yParity 255", resign(raw, 255n, r, s)],
    ["r = 0", resign(raw, y, 0n, s)],
    ["s = 0", resign(raw, y, r, 0n)],
    ["r = n", resign(raw, y, N, s)],
    ["s = n", resign(raw, y, r, N)],
    ["r = n + 1 (below p)", resign(raw, y, N + 1n, s)],
    ["r = 2^256 - 1", resign(raw, y, 2n ** 256n - 1n, s)],
    ["r 33 bytes (a leading zero)", resign(raw, y, r, s, `0x00${word(r).slice(2)}`)],
    ["r = 1, s = 1", resign(raw, y, 1n, 1n)],
  ];
}

/** Each variant's signer as the native backend and as viem's JavaScript read it: the same, or both refuse. */
async function sameSigner(raws: [string, Hex][]) {
  for (const [name, raw] of raws) {
    const serializedTransaction = raw as viem.TransactionSerialized;
    expect(await outcome(native.recoverTransactionAddress({ serializedTransaction })), name).toEqual(
      await outcome(viem.recoverTransactionAddress({ serializedTransaction })),
    );
  }
}

describe("fast mode (live/fast): crafted signatures on the signed transaction", () => {
  const eth: FastOpts = { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.01") };
  const post = (body: Record<string, unknown>, key: string) => stack.agent.post("/live/fast", body, key);

  /** Proves: each crafted signature field is refused with its code, nothing reaches the chain; the original passes. */
  it("refuses each crafted twin (BAD_REQUEST, WALLET_MISMATCH or TX_ENCODING) and relays nothing", async () => {
    const a = await stack.dn.freshWallet(parseEther("2"));
    const key = await stack.agent.signIn(a);
    const nonce = await stack.dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" });
    const ok = await fastBody(stack, a, key, eth);
    const variants = txVariants(ok.raw);
    await sameSigner(variants);
    const want: Record<string, string> = {
      "yParity flipped": "WALLET_MISMATCH",
      // The high-s check comes first in SPEC's order; the other signer is listed after it.
      "high-s, same yParity": "TX_ENCODING",
      "r = 1, s = 1": "WALLET_MISMATCH",
    };
    for (const [name, raw] of variants) {
      const r = await post({ ...ok.body, raw_tx: raw }, key);
      const code = want[name] ?? "BAD_REQUEST";
      expect(codeOf(r), `${name}: ${JSON.stringify(r.json).slice(0, 300)}`).toEqual({
        status: code === "BAD_REQUEST" ? 400 : code === "WALLET_MISMATCH" ? 403 : 422,
        code,
      });
    }
    await notRelayed(
      a.address,
      variants.map(([, raw]) => raw),
      nonce,
    );
    // The untouched transaction passes every check: the refusals above are the signatures'.
    const check = await post({ ...ok.body, check_only: true }, key);
    expect(check.status, JSON.stringify(check.json)).toBe(200);
    expect(check.json.relayed).toBe(false);
  }, 120_000);

  /** Proves: the wallet's own legacy, 7702 and other-chain signatures are TX_TYPE or CHAIN_ID, never relayed. */
  it("refuses legacy (EIP-155 and pre-155), EIP-7702 and other-chain transactions the wallet signed", async () => {
    const a = await stack.dn.freshWallet(parseEther("2"));
    const key = await stack.agent.signIn(a);
    const nonce = await stack.dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" });
    const ok = await fastBody(stack, a, key, eth);
    const { to, data, value, gas } = ok.tx;
    const legacy = { type: "legacy", to, data, value, gas, nonce, gasPrice: ok.tx.maxFeePerGas } as const;
    const unprotected = serializeTransaction(legacy);
    const pre155 = viem.parseSignature(await a.sign({ hash: keccak256(unprotected) }));
    const auth = await a.signAuthorization({ contractAddress: to!, chainId: 4663, nonce: nonce + 1 });
    const authBad = { ...auth, yParity: 27 };
    const cases: [string, Hex, string][] = [
      ["legacy, EIP-155", await a.signTransaction({ ...legacy, chainId: 4663 }), "TX_TYPE"],
      [
        "legacy, no chain id (v 27/28)",
        serializeTransaction(legacy, { ...pre155, v: 27n + BigInt(pre155.yParity!) }),
        "TX_TYPE",
      ],
      ["EIP-7702 with an authorization", await a.signTransaction(tx7702(ok.tx, [auth])), "TX_TYPE"],
      ["EIP-7702, authorization yParity 27", await a.signTransaction(tx7702(ok.tx, [authBad])), "TX_TYPE"],
      ["EIP-1559 on chain 1", await a.signTransaction({ ...ok.tx, chainId: 1 }), "CHAIN_ID"],
    ];
    await sameSigner(cases.map(([n, raw]) => [n, raw]));
    for (const [name, raw, code] of cases) {
      const r = await post({ ...ok.body, raw_tx: raw }, key);
      expect(codeOf(r), `${name}: ${JSON.stringify(r.json).slice(0, 300)}`).toEqual({ status: 422, code });
    }
    await notRelayed(
      a.address,
      cases.map(([, raw]) => raw),
      nonce,
    );
  }, 120_000);
});

const tx7702 = (t: TransactionSerializableEIP1559, authorizationList: viem.SignedAuthorizationList) =>
  ({ ...t, type: "eip7702", authorizationList }) as viem.TransactionSerializableEIP7702;

describe("live/submit: crafted signatures on a transaction built for the key", () => {
  const submit = (raw: Hex, key: string) => stack.agent.post("/live/submit", { raw_tx: raw }, key);

  /** Proves: crafted fields are SUBMIT_REJECTED or WALLET_MISMATCH, replays off-chain NOT_AS_BUILT; nothing sent. */
  it("refuses each crafted twin (SUBMIT_REJECTED or WALLET_MISMATCH), and other chains as NOT_AS_BUILT", async () => {
    const a = await stack.dn.freshWallet(parseEther("2"));
    const key = await stack.agent.signIn(a);
    const nonce = await stack.dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" });
    const p = await stack.agent.post(
      "/live/prepare",
      { wallet: a.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.01").toString() },
      key,
    );
    expect(p.status, JSON.stringify(p.json)).toBe(200);
    const raw = await stack.agent.sign(a, p.json.tx);
    const t = parseTransaction(raw as viem.TransactionSerializedEIP1559);
    const variants = txVariants(raw);
    await sameSigner(variants);
    const signerChanged = ["yParity flipped", "high-s, same yParity", "r = 1, s = 1"];
    for (const [name, bytes] of variants) {
      const r = await submit(bytes, key);
      const want = signerChanged.includes(name)
        ? { status: 403, code: "WALLET_MISMATCH" }
        : { status: 422, code: "SUBMIT_REJECTED" };
      expect(codeOf(r), `${name}: ${JSON.stringify(r.json).slice(0, 300)}`).toEqual(want);
    }
    // Signed by the wallet, but for another chain or with no chain id at all: not what was built.
    const { to, data, value, gas } = t;
    // The fields alone (viem would sign the parsed r, s, v along with them).
    const { r: _r, s: _s, v: _v, yParity: _y, ...fields } = t;
    const legacy = { type: "legacy", to, data, value, gas, nonce, gasPrice: t.maxFeePerGas } as const;
    const unprotected = serializeTransaction(legacy);
    const sig = viem.parseSignature(await a.sign({ hash: keccak256(unprotected) }));
    const replays: [string, Hex][] = [
      ["legacy, no chain id (v 27/28)", serializeTransaction(legacy, { ...sig, v: 27n + BigInt(sig.yParity!) })],
      ["EIP-1559 on chain 1", await a.signTransaction({ ...(fields as TransactionSerializableEIP1559), chainId: 1 })],
    ];
    await sameSigner(replays);
    for (const [name, bytes] of replays)
      expect(codeOf(await submit(bytes, key)), name).toEqual({ status: 422, code: "NOT_AS_BUILT" });
    await notRelayed(
      a.address,
      [...variants, ...replays].map(([, b]) => b),
      nonce,
    );
  }, 120_000);
});

describe("session switch-on (live/session/grant): the delegation and the EIP-7702 authorization", () => {
  const statusOf = async (id: string) =>
    (await stack.store.db.query<{ status: string }>("SELECT status FROM app.sessions WHERE id = $1", [id]))[0]!.status;

  /** Proves: crafted or misdirected signatures are BAD_SIGNATURE, the session stays off; the real ones switch it on. */
  it("refuses crafted delegation and authorization signatures, then switches on the real ones", async () => {
    const { wallet, key, start } = await pendingGrant(stack, {});
    expect(start.sign.authorization).toBeTruthy();
    const { body } = await walletSignatures(wallet, start);
    const other = privateKeyToAccount(generatePrivateKey());
    const a = start.sign.authorization;
    const authHash = hashAuthorization({
      contractAddress: a.contract_address,
      chainId: a.chain_id,
      nonce: a.nonce,
    });
    const authVariants = hexVariants(body.authorization_signature!);
    const accepted = await viemAccepts(authHash, authVariants, wallet.address);
    // viem recovers the wallet from these two twins of each signature: the route may take them, as viem does.
    expect(accepted).toEqual(["v as raw yParity (0 or 1)", "high-s twin (n - s, v flipped)"]);
    const delegationHash = viem.hashTypedData(typedDataOf(start.sign.delegation.typed_data));
    const delegationVariants = hexVariants(body.delegation_signature);
    expect(await viemAccepts(delegationHash, delegationVariants, wallet.address)).toEqual(accepted);
    const signAuth = (w: Account, o: { contractAddress?: Address; chainId?: number; nonce?: number }) =>
      w
        .signAuthorization({ contractAddress: a.contract_address, chainId: a.chain_id, nonce: a.nonce, ...o })
        .then(viem.serializeSignature);
    const crafted: [string, Record<string, unknown>][] = [
      ...delegationVariants
        .filter(([n]) => !accepted.includes(n))
        .map(([n, s]): [string, Record<string, unknown>] => [`delegation: ${n}`, { delegation_signature: s }]),
      ...authVariants
        .filter(([n]) => !accepted.includes(n))
        .map(([n, s]): [string, Record<string, unknown>] => [`authorization: ${n}`, { authorization_signature: s }]),
      ["authorization by another wallet", { authorization_signature: await signAuth(other, {}) }],
      ["authorization on chain 0 (every chain)", { authorization_signature: await signAuth(wallet, { chainId: 0 }) }],
      ["authorization on chain 1", { authorization_signature: await signAuth(wallet, { chainId: 1 }) }],
      [
        "authorization to another contract",
        { authorization_signature: await signAuth(wallet, { contractAddress: other.address }) },
      ],
      ["authorization at another nonce", { authorization_signature: await signAuth(wallet, { nonce: a.nonce + 5 }) }],
      ["authorization: compact (EIP-2098)", { authorization_signature: compactOf(body.authorization_signature!) }],
      ["authorization: empty", { authorization_signature: "0x" }],
      ["delegation signed as the authorization", { authorization_signature: body.delegation_signature }],
    ];
    for (const [name, over] of crafted) {
      const r = await stack.agent.post("/live/session/grant", { ...body, ...over }, key);
      expect(r.json?.error?.code, `${name}: ${JSON.stringify(r.json).slice(0, 300)}`).toBe("BAD_SIGNATURE");
      expect(r.status, name).toBeGreaterThanOrEqual(400);
      expect(await statusOf(start.session_id), name).not.toBe("active");
    }
    // The native backend and viem agree on every authorization the route recovered above.
    for (const [name, over] of crafted.filter(([, o]) => "authorization_signature" in o)) {
      const p = {
        authorization: { address: a.contract_address, chainId: a.chain_id, nonce: a.nonce },
        signature: over.authorization_signature as Hex,
      };
      expect(await outcome(native.recoverAuthorizationAddress(p)), name).toEqual(
        await outcome(viemRecoverAuthorization(p)),
      );
    }
    const on = await stack.agent.post("/live/session/grant", body, key);
    expect(on.status, JSON.stringify(on.json)).toBe(200);
    expect(await statusOf(start.session_id)).toBe("active");
  }, 120_000);
});

const compactOf = (sig: Hex) =>
  viem.serializeCompactSignature(viem.signatureToCompactSignature(viem.parseSignature(sig)));

describe("lib/secp in this process: the service's backend and viem's JavaScript on crafted edge signatures", () => {
  /** Hashes at and around the group order, every shape of signature viem takes, and what it refuses. */
  it("recover the same key or refuse alike (hashes >= n, offset buffers, odd v and yParity types)", async () => {
    expect(secp.secpBackend).toBe("native");
    const pk = keccak256(toHex("secp attack"));
    const cases: { hash: Hex | Uint8Array; signature: any }[] = [];
    for (const h of [0n, 1n, N - 1n, N, N + 1n, 2n ** 256n - 1n]) {
      const hash = word(h);
      const s = await signHash(hash, pk);
      cases.push({ hash, signature: viem.serializeSignature(s) });
      for (const yParity of [0n, 1n, 27, 28, 2, -1, "0", "1", true, null, 1.5, Number.NaN])
        cases.push({ hash, signature: { r: s.r, s: s.s, yParity } });
      for (const v of [0n, 1n, 27n, 28n, 29n, 34n, 35n, 36n, 37n, 38n, 2n ** 70n, -1n, 27, 37, "27"])
        cases.push({ hash, signature: { r: s.r, s: s.s, v } });
      cases.push({ hash, signature: { r: `0x${s.r.slice(2).replace(/^0+/, "")}`, s: s.s, yParity: s.yParity } });
      cases.push({ hash, signature: { r: hexToBigInt(s.r), s: hexToBigInt(s.s), yParity: s.yParity } });
      // A 65-byte view into a larger buffer at an odd offset: the binding must read the view, not the buffer.
      const big = Buffer.alloc(200, 0xab);
      Buffer.from(viem.serializeSignature(s).slice(2), "hex").copy(big, 7);
      cases.push({ hash: Buffer.from(hash.slice(2), "hex"), signature: big.subarray(7, 72) });
      for (const r of [1n, 2n, N - 1n, P - N - 1n])
        for (const yParity of [0, 1]) cases.push({ hash, signature: { r: word(r), s: s.s, yParity } });
    }
    let differ = 0;
    for (const k of cases) {
      const [a, b] = [await outcome(viem.recoverPublicKey(k)), await outcome(native.recoverPublicKey(k))];
      if (JSON.stringify(a) !== JSON.stringify(b)) differ++;
    }
    expect(cases.length).toBeGreaterThan(200);
    expect(differ).toBe(0);
  });
});

async function signHash(hash: Hex, privateKey: Hex) {
  return privateKeyToAccount(privateKey).sign({ hash }).then(viem.parseSignature);
}
