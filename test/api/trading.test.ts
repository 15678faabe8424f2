import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { startIndexer, type Indexer } from "../helpers/indexer.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { RateLimiter } from "../../api/rateLimit.js";
import { erc20Abi } from "../../abis/erc20.js";

let dn: Devnet;
let ix: Indexer;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
type Account = ReturnType<typeof privateKeyToAccount>;

async function signIn(a: Account): Promise<string> {
  const ch = (await api.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
  return (await api.call("POST", "/api/v1/auth/verify", { address: a.address, signature: await a.signMessage({ message: ch.message }) })).json.api_key;
}
const post = (path: string, body: unknown, key: string) => api.call("POST", `/api/v1${path}`, body, { authorization: `Bearer ${key}` });
const get = (path: string, key: string) => api.call("GET", `/api/v1${path}`, undefined, { authorization: `Bearer ${key}` });

/** Signs a plan transaction the way an agent does: its own nonce and fees, our to/data/value. */
async function sign(a: Account, tx: { to: Address; data: Hex; value: string; chain_id: number }, nonceOffset = 0) {
  const nonce = (await dn.pub.getTransactionCount({ address: a.address, blockTag: "pending" })) + nonceOffset;
  const fees = await dn.pub.estimateFeesPerGas();
  return a.signTransaction({ chainId: tx.chain_id, to: tx.to, data: tx.data, value: BigInt(tx.value), nonce, gas: 1_000_000n, maxFeePerGas: fees.maxFeePerGas * 2n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas });
}

async function waitMined(key: string, hash: Hex) {
  await dn.mined(hash);
  const block = await dn.pub.getBlockNumber();
  await ix.waitFor(block);
  for (let i = 0; i < 50; i++) {
    const t = (await get("/me/trades", key)).json.trades.find((x: any) => x.tx_hash === hash);
    if (t && t.status !== "pending") return t;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("trade never left pending");
}

beforeAll(async () => {
  dn = await startDevnet();
  ix = await startIndexer({ anvilPort: dn.anvil.port, backend: "postgres" });
  await ix.waitFor(await dn.pub.getBlockNumber());
  store = await freshStore("pglite");
  api = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, indexed: ix.liveReads().reads, limiter: new RateLimiter(Date.now, 10_000, false) });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await ix?.cleanup();
  await dn?.stop();
});

describe("ETH -> USDG, end to end", () => {
  it("prepares, signs locally, submits, and sees the trade mined with the actual amount out", async () => {
    const a = await dn.freshWallet(parseEther("10"));
    const key = await signIn(a);
    const q = await post("/live/quote", { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.1").toString() }, key);
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    const p = await post("/live/prepare", { wallet: a.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.1").toString() }, key);
    expect(p.status, JSON.stringify(p.json)).toBe(200);
    console.log(JSON.stringify(q.json, null, 1).slice(0, 3000));
    console.log(JSON.stringify(p.json, null, 1).slice(0, 5000));
    expect(p.json.ready).toBe(true);
    const raw = await sign(a, p.json.tx);
    const s = await post("/live/submit", { raw_tx: raw }, key);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = await waitMined(key, s.json.tx_hash);
    console.log(JSON.stringify(t));
    expect(t.status).toBe("mined");
    expect(t.amount_out_kind).toBe("actual");
  });
});
