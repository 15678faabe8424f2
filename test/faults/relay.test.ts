import { keccak256, parseEther } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { httpSequencer } from "../../api/ports/sequencer.js";
import { startSequencerStandIn } from "../../devnet/sequencerStandIn.js";
import { agentOf, type PlanTx } from "../helpers/agent.js";
import { serveApi, type Api } from "../helpers/api.js";
import { startStack, type Stack } from "../helpers/stack.js";

/**
 * Issue 12 faults 3 and 6 and the relay's half of 2: a relayed trade is written with its hash
 * before it is sent, so a lost answer, concurrent callers on two instances, or a node that forgot
 * the transaction never lose it, relay it twice, or answer a false NOT_AS_BUILT.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
let stack: Stack;
const extra: Api[] = [];
const standIns: Awaited<ReturnType<typeof startSequencerStandIn>>[] = [];
beforeAll(async () => {
  stack = await startStack({ store: "postgres" });
}, 120_000);
afterAll(async () => {
  for (const a of extra) await a.close();
  for (const s of standIns) await s.close();
  await stack?.stop();
});

/** Another API instance on the same app store (its own connection pool), relaying through `sequencerUrl`. */
async function instance(sequencerUrl: string, ownPool = false): Promise<Api> {
  const db = ownPool ? await stack.store.reopen() : stack.store.db;
  const api = await serveApi({
    rpcUrl: stack.dn.anvil.rpcUrl,
    db,
    indexed: stack.ix.liveReads().reads,
    limiter: new RateLimiter(Date.now, 10_000, false),
    sequencer: httpSequencer(sequencerUrl, 500),
  });
  extra.push(api);
  return api;
}
async function standIn(mode: "forward" | "lost" | "blackhole") {
  const s = await startSequencerStandIn(stack.dn.anvil.rpcUrl);
  s.mode(mode);
  standIns.push(s);
  return s;
}
async function signedPlan(api: Api, a: Account) {
  const ag = agentOf(api, stack.dn);
  const key = await ag.signIn(a);
  const p = await ag.post(
    "/live/prepare",
    { wallet: a.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.02").toString() },
    key,
  );
  expect(p.status, JSON.stringify(p.json)).toBe(200);
  return { ag, key, raw: await ag.sign(a, p.json.tx as PlanTx) };
}
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the relay under faults", () => {
  it(
    "an answer lost after the sequencer took the trade: 502, then mined in me/trades and counted; the same bytes " +
      "again are a repeat",
    async () => {
      const seq = await standIn("lost");
      const lossy = await instance(seq.url);
      const a = await stack.dn.freshWallet(parseEther("5"));
      const { ag, key, raw } = await signedPlan(lossy, a);
      const first = await ag.post("/live/submit", { raw_tx: raw }, key);
      expect([first.status, first.json.error?.code]).toEqual([502, "SEQUENCER_UNREACHABLE"]);

      const trades = await until(
        () => ag.get("/me/trades", key),
        (r) => r.json.trades[0]?.status === "mined",
      );
      expect(trades.json.trades).toHaveLength(1);
      expect(trades.json.trades[0]).toMatchObject({
        status: "mined",
        tx_hash: keccak256(raw),
        amount_out_kind: "actual",
      });
      // What the volume tier adds up: the mined trade's outcome.
      expect(await lossy.app.services.ledger.minedSince(a.address, 0)).toHaveLength(1);

      const again = await ag.post("/live/submit", { raw_tx: raw }, key);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json).toMatchObject({ tx_hash: keccak256(raw), as_built: true, repeat: true });
      expect(seq.received).toHaveLength(1);
    },
  );

  it(
    "20 identical signed transactions at once over two instances: one relay, 20 equal hashes, no refused " + "rows",
    async () => {
      const seq = await standIn("forward");
      const [one, two] = [await instance(seq.url), await instance(seq.url, true)];
      const a = await stack.dn.freshWallet(parseEther("5"));
      const { key, raw } = await signedPlan(one, a);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          agentOf(i % 2 ? two : one, stack.dn).post("/live/submit", { raw_tx: raw }, key),
        ),
      );
      for (const r of answers) {
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        expect(r.json.tx_hash).toBe(keccak256(raw));
      }
      expect(answers.filter((r) => r.json.repeat === false)).toHaveLength(1);
      expect(seq.received).toEqual([raw]);
      const listed = (await agentOf(one, stack.dn).get("/me/trades?refused=1", key)).json.trades;
      expect(listed).toHaveLength(1);
      expect(listed[0].tx_hash).toBe(keccak256(raw));
    },
  );

  it(
    "a sent trade the node does not know (lost on the way, or forgotten by a restored node) is sent again and " +
      "mined",
    async () => {
      const seq = await standIn("blackhole");
      const dropping = await instance(seq.url);
      const a = await stack.dn.freshWallet(parseEther("5"));
      const { ag, key, raw } = await signedPlan(dropping, a);
      const r = await ag.post("/live/submit", { raw_tx: raw }, key);
      expect([r.status, r.json.repeat]).toEqual([200, false]);
      expect(await stack.dn.pub.getTransaction({ hash: keccak256(raw) }).catch(() => null)).toBeNull();
      // The store's watcher (the first instance holds its lease) sends the kept bytes again.
      const trades = await until(
        () => ag.get("/me/trades", key),
        (t) => t.json.trades[0]?.status === "mined",
        30_000,
      );
      expect(trades.json.trades[0]).toMatchObject({ status: "mined", tx_hash: keccak256(raw) });
      expect(seq.received).toEqual([raw]);
    },
  );

  it(
    "bytes the node already holds (the agent broadcast them too) are a relayed trade, not a refusal: listed and " +
      "mined",
    async () => {
      const direct = await instance(stack.dn.anvil.rpcUrl);
      const a = await stack.dn.freshWallet(parseEther("5"));
      const { ag, key, raw } = await signedPlan(direct, a);
      await stack.dn.test.setAutomine(false);
      try {
        await stack.dn.pub.sendRawTransaction({ serializedTransaction: raw });
        const r = await ag.post("/live/submit", { raw_tx: raw }, key);
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        expect(r.json).toMatchObject({ tx_hash: keccak256(raw), repeat: false });
      } finally {
        await stack.dn.test.setAutomine(true);
        await stack.dn.test.mine({ blocks: 1 });
      }
      const trades = await until(
        () => ag.get("/me/trades", key),
        (t) => t.json.trades[0]?.status === "mined",
      );
      expect(trades.json.trades[0]).toMatchObject({ status: "mined", tx_hash: keccak256(raw) });
    },
  );

  it("the same bytes already mined by someone else (nonce too low at the node) are a relayed trade too", async () => {
    const direct = await instance(stack.dn.anvil.rpcUrl);
    const a = await stack.dn.freshWallet(parseEther("5"));
    const { ag, key, raw } = await signedPlan(direct, a);
    await stack.dn.mined(await stack.dn.pub.sendRawTransaction({ serializedTransaction: raw }));
    const r = await ag.post("/live/submit", { raw_tx: raw }, key);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const trades = await until(
      () => ag.get("/me/trades", key),
      (t) => t.json.trades[0]?.status === "mined",
    );
    expect(trades.json.trades[0]).toMatchObject({ status: "mined", tx_hash: keccak256(raw) });
  });

  it("a repeat after the plan's deadline sends nothing again (the bytes could only revert)", async () => {
    const seq = await standIn("blackhole");
    const dropping = await instance(seq.url);
    const late = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: stack.ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
      sequencer: httpSequencer(seq.url, 500),
      clock: () => Date.now() + 600_000,
    });
    extra.push(late);
    const a = await stack.dn.freshWallet(parseEther("5"));
    const { ag, key, raw } = await signedPlan(dropping, a);
    expect((await ag.post("/live/submit", { raw_tx: raw }, key)).status).toBe(200);
    await stack.store.db.query("UPDATE app.trades SET relay = 'lost' WHERE tx_hash = $1", [keccak256(raw)]);
    const again = await agentOf(late, stack.dn).post("/live/submit", { raw_tx: raw }, key);
    expect(again.json).toMatchObject({ tx_hash: keccak256(raw), repeat: true });
    expect(seq.received).toEqual([raw]);
  });
});
