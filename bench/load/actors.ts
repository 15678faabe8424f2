/**
 * The load test's population: what each kind of actor sets up and then does in a loop until the run
 * ends. Every actor is a wallet of its own behind a loopback address of its own (client.ts); trades
 * are signed locally with the actor's own nonce, relayed through the service and waited for on the
 * chain, and each one the chain mined is remembered for the audit.
 */
import {
  createWalletClient,
  http,
  parseEther,
  serializeSignature,
  type Chain,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Answer, Client } from "./client.js";

export type Account = ReturnType<typeof privateKeyToAccount>;
/** What the actors share: the chain, the run's clock and its stop signal. */
export type World = {
  pub: PublicClient;
  rpcUrl: string;
  chain: Chain;
  fund(address: Hex, eth: bigint): Promise<void>;
  stopped(): boolean;
  /** Sleeps `ms` or until the run stops. */
  pause(ms: number): Promise<void>;
};
export type TradeKind = "rest" | "session";
/** A trade an agent relayed: whose (the wallet and its key), who signed it, what the chain made of it. */
export type Trade = {
  kind: TradeKind;
  wallet: Hex;
  key: string;
  signer: Hex;
  hash: Hex;
  status: "success" | "reverted" | "lost";
};

const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

/** A fresh wallet with ETH, signed in through `client`: its key. */
export async function signedIn(w: World, client: Client, eth = parseEther("5")) {
  const account = privateKeyToAccount(generatePrivateKey());
  await w.fund(account.address, eth);
  const ch = await client.call("POST", "/auth/challenge", "POST /auth/challenge", { address: account.address });
  if (ch.status !== 200) throw new Error(`challenge ${ch.status} ${JSON.stringify(ch.json)}`);
  const v = await client.call("POST", "/auth/verify", "POST /auth/verify", {
    address: account.address,
    signature: await account.signMessage({ message: ch.json.message }),
  });
  if (v.status !== 200) throw new Error(`verify ${v.status} ${JSON.stringify(v.json)}`);
  return { account, key: v.json.api_key as string };
}

/** Signs the service's plan transaction with the signer's next nonce (kept locally, re-read after a refusal). */
class Signer {
  private nonce: number | null = null;
  constructor(
    readonly account: Account,
    private readonly w: World,
  ) {}
  async sign(tx: { to: Hex; data: Hex; value: string; chain_id: number; gas?: number }): Promise<Hex> {
    this.nonce ??= await this.w.pub.getTransactionCount({ address: this.account.address, blockTag: "pending" });
    const block = await this.w.pub.getBlock();
    const base = block.baseFeePerGas ?? 1_000_000_000n;
    return this.account.signTransaction({
      chainId: tx.chain_id,
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      nonce: this.nonce,
      gas: BigInt(Math.max(tx.gas ?? 0, 1_000_000)),
      maxFeePerGas: base * 2n + 1_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
  }
  /** The relay took it: the nonce is spent. Refused or unknown: read it again next time. */
  settle(relayed: boolean): void {
    this.nonce = relayed && this.nonce !== null ? this.nonce + 1 : null;
  }
}

/** Relays signed bytes and waits for the chain's verdict; a relayed trade is recorded whatever it became. */
async function relayAndWait(
  w: World,
  client: Client,
  signer: Signer,
  raw: Hex,
  key: string,
  record: Omit<Trade, "hash" | "status" | "signer">,
  trades: Trade[],
): Promise<Answer> {
  const sent = await client.call("POST", "/live/submit", "POST /live/submit", { raw_tx: raw }, key);
  signer.settle(sent.status === 200);
  if (sent.status !== 200) return sent;
  const hash = sent.json.tx_hash as Hex;
  const receipt = await w.pub
    .waitForTransactionReceipt({ hash, timeout: 90_000, pollingInterval: 1_000 })
    .catch(() => null);
  trades.push({ ...record, signer: signer.account.address, hash, status: receipt ? receipt.status : "lost" });
  if (!receipt) signer.settle(false);
  return sent;
}

/** A REST agent: quote, prepare ETH -> USDG, sign, submit, wait; then think for a while. */
export async function restAgent(w: World, client: Client, trades: Trade[], thinkS: [number, number]) {
  const { account, key } = await signedIn(w, client);
  const signer = new Signer(account, w);
  return async () => {
    while (!w.stopped()) {
      const notional = Math.round(rand(10, 40));
      const order = { token_in: "ETH", token_out: "USDG", notional_usd: notional };
      await client.call("POST", "/live/quote", "POST /live/quote", order, key);
      const plan = await client.call(
        "POST",
        "/live/prepare",
        "POST /live/prepare",
        { wallet: account.address, ...order, slippage_bps: 100 },
        key,
      );
      if (plan.status === 200 && plan.json.tx && !w.stopped()) {
        const raw = await signer.sign(plan.json.tx);
        await relayAndWait(w, client, signer, raw, key, { kind: "rest", wallet: account.address, key }, trades);
      }
      await w.pause(rand(...thinkS) * 1000);
    }
  };
}

/** The typed data of an answer as viem signs it (the salt travels as a decimal string). */
const typedDataOf = (t: any) => ({ ...t, message: { ...t.message, salt: BigInt(t.message.salt) } });

/**
 * A session granted by `owner` to `executor` and switched on, its setup steps (the 7702 upgrade, any
 * approvals) sent by the owner: the session id.
 */
export async function grantSession(
  w: World,
  client: Client,
  owner: { account: Account; key: string },
  executor: Hex,
  limits: Record<string, unknown>,
): Promise<string> {
  const start = await client.call(
    "POST",
    "/live/session/grant",
    "POST /live/session/grant",
    { wallet: owner.account.address, executor, expires_in_s: 7_200, ...limits },
    owner.key,
  );
  if (start.status !== 200) throw new Error(`grant ${start.status} ${JSON.stringify(start.json)}`);
  const s = start.json;
  const a = s.sign.authorization;
  const auth = a
    ? await owner.account.signAuthorization({
        contractAddress: a.contract_address,
        chainId: a.chain_id,
        nonce: a.nonce,
      })
    : null;
  const curve: Record<string, Hex> = {};
  for (const r of s.sign.curve_roots)
    curve[r.delegation_hash] = await owner.account.signTypedData(typedDataOf(r.typed_data));
  const on = await client.call(
    "POST",
    "/live/session/grant",
    "POST /live/session/grant",
    {
      session_id: s.session_id,
      delegation_signature: await owner.account.signTypedData(typedDataOf(s.sign.delegation.typed_data)),
      ...(auth ? { authorization_signature: serializeSignature(auth) } : {}),
      ...(s.sign.curve_roots.length ? { curve_root_signatures: curve } : {}),
    },
    owner.key,
  );
  if (on.status !== 200) throw new Error(`switch-on ${on.status} ${JSON.stringify(on.json)}`);
  await runSetup(w, owner.account, s.setup.steps, auth);
  return s.session_id as string;
}

async function runSetup(w: World, account: Account, steps: any[], auth: any) {
  const wallet = createWalletClient({ chain: w.chain, transport: http(w.rpcUrl), account });
  for (const step of steps) {
    const hash =
      step.kind === "upgrade"
        ? await wallet.sendTransaction({ to: account.address, data: "0x", authorizationList: [auth] })
        : await wallet.sendTransaction({
            to: step.tx.to,
            data: step.tx.data,
            value: BigInt(step.tx.value),
            nonce: await w.pub.getTransactionCount({ address: account.address, blockTag: "latest" }),
          });
    const r = await w.pub.waitForTransactionReceipt({ hash, pollingInterval: 500 });
    if (r.status !== "success") throw new Error(`setup step ${step.kind} reverted`);
  }
}

/** A session executor: its owner grants it a session; it trades through it, signing each redeem itself. */
export async function sessionExecutor(w: World, client: Client, trades: Trade[], thinkS: [number, number]) {
  const owner = await signedIn(w, client);
  const exec = await signedIn(w, client, parseEther("1"));
  const sessionId = await grantSession(w, client, owner, exec.account.address, {
    max_trade_usd: 50,
    max_day_usd: 5_000,
    max_trades: 10_000,
  });
  const signer = new Signer(exec.account, w);
  return async () => {
    while (!w.stopped()) {
      const body = { session_id: sessionId, token_in: "ETH", token_out: "USDG", notional_usd: Math.round(rand(5, 30)) };
      const r = await client.call("POST", "/live/session/trade", "POST /live/session/trade", body, exec.key);
      if (r.status === 200 && r.json.tx && !w.stopped()) {
        const raw = await signer.sign(r.json.tx);
        const record = { kind: "session" as const, wallet: owner.account.address, key: owner.key };
        await relayAndWait(w, client, signer, raw, exec.key, record, trades);
      }
      await w.pause(rand(...thinkS) * 1000);
    }
  };
}

export const RULE_AGENT = {
  brain: "rule",
  params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 },
  pairs: ["ETH/USDG"],
  limits: { max_trade_usd: 20, max_day_usd: 400, max_position_usd: 8_000 },
};

/** An owner with `count` hosted paper agents on the rule brain: their ids. */
export async function paperOwner(w: World, client: Client, count: number, intervalS: number) {
  const owner = await signedIn(w, client, parseEther("0.01"));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await client.call("POST", "/hosted", "POST /hosted", { ...RULE_AGENT, interval_s: intervalS }, owner.key);
    if (r.status !== 201) throw new Error(`hosted paper ${r.status} ${JSON.stringify(r.json)}`);
    ids.push(r.json.id);
  }
  return { owner, ids };
}

/**
 * An owner with one live hosted agent: created (paused, with its executor), the executor given gas,
 * a session granted to it, attached, and the agent resumed.
 */
export async function liveOwner(w: World, client: Client, intervalS: number) {
  const owner = await signedIn(w, client);
  const made = await client.call(
    "POST",
    "/hosted",
    "POST /hosted",
    { ...RULE_AGENT, interval_s: intervalS, mode: "live" },
    owner.key,
  );
  if (made.status !== 201) throw new Error(`hosted live ${made.status} ${JSON.stringify(made.json)}`);
  const id = made.json.id as string;
  await w.fund(made.json.executor, parseEther("1"));
  const sessionId = await grantSession(w, client, owner, made.json.executor, {
    max_trade_usd: 20,
    max_day_usd: 400,
    max_trades: 1_000,
  });
  const attach = await client.call(
    "POST",
    `/hosted/${id}/session`,
    "POST /hosted/:id/session",
    { session_id: sessionId },
    owner.key,
  );
  if (attach.status !== 200) throw new Error(`attach ${attach.status} ${JSON.stringify(attach.json)}`);
  const resumed = await client.call("POST", `/hosted/${id}/resume`, "POST /hosted/:id/resume", {}, owner.key);
  if (resumed.status !== 200) throw new Error(`resume ${resumed.status} ${JSON.stringify(resumed.json)}`);
  return { owner, id, executor: made.json.executor as Hex };
}

/** A reader of the public pages' data and its own account: one read, then a short pause. */
export async function reader(w: World, client: Client, hostedIds: string[], hostedKey: string) {
  const { key } = await signedIn(w, client, parseEther("0.01"));
  const reads: [string, string, string | undefined][] = [
    ["/league", "GET /league", undefined],
    ["/league/standings", "GET /league/standings", undefined],
    ["/league/standings?board=practice", "GET /league/standings", undefined],
    ["/treasury", "GET /treasury", undefined],
    ["/stats", "GET /stats", undefined],
    ["/tokens?q=T", "GET /tokens", key],
    ["/tokens/ETH", "GET /tokens/:token", key],
    ["/me/portfolio", "GET /me/portfolio", key],
    ["/me/trades", "GET /me/trades", key],
  ];
  return async () => {
    while (!w.stopped()) {
      const [path, route, k] = reads[Math.floor(Math.random() * reads.length)]!;
      await client.call("GET", path, route, undefined, k);
      if (hostedIds.length && Math.random() < 0.2) {
        const id = hostedIds[Math.floor(Math.random() * hostedIds.length)]!;
        await client.call("GET", `/hosted/${id}/logs?limit=20`, "GET /hosted/:id/logs", undefined, hostedKey);
      }
      await w.pause(rand(1, 3) * 1000);
    }
  };
}
