import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeAbiParameters, decodeFunctionData, encodeFunctionData, keccak256, parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import type { Indexer } from "../helpers/indexer.js";
import { serveApi, type Api } from "../helpers/api.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { agentOf, type PlanTx } from "../helpers/agent.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { httpSequencer } from "../../api/ports/sequencer.js";
import { startSequencerStandIn } from "../../devnet/sequencerStandIn.js";
import { freePort } from "../../devnet/anvil.js";
import { Command, universalRouterAbi } from "../../abis/universalRouter.js";
import { inputs } from "../../lib/router/encode.js";
import { closeMetrics, relayOutcomes, serveMetrics } from "../../lib/metrics.js";

/** live/submit: only what was built for this key, signed by its wallet, relayed once. */
let dn: Devnet;
let ix: Indexer;
let store: Stack["store"];
let api: Api;
let agent: ReturnType<typeof agentOf>;
type Account = ReturnType<typeof privateKeyToAccount>;

async function planFor(
  a: Account,
  key: string,
  eth = "0.02",
  a2 = api,
): Promise<{ tx: PlanTx; plan_id: number; fee: { amount: string }; amount_out_min: string }> {
  const r = await a2.call(
    "POST",
    "/api/v1/live/prepare",
    { wallet: a.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther(eth).toString() },
    { authorization: `Bearer ${key}` },
  );
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

/** The same router call with one command's input replaced. */
function withInput(data: Hex, command: number, input: Hex): Hex {
  const { args } = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, ins, deadline] = args as unknown as [Hex, Hex[], bigint];
  const at = (commands.slice(2).match(/../g) ?? []).findIndex((b) => parseInt(b, 16) === command);
  const next = [...ins];
  next[at] = input;
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, next, deadline] });
}
function inputOf(data: Hex, command: number): Hex {
  const { args } = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, ins] = args as unknown as [Hex, Hex[]];
  return ins[(commands.slice(2).match(/../g) ?? []).findIndex((b) => parseInt(b, 16) === command)]!;
}
const submit = (body: unknown, key: string, a = api) =>
  a.call("POST", "/api/v1/live/submit", body, { authorization: `Bearer ${key}` });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ store: "postgres" });
  ({ dn, ix, store, api, agent } = stack);
}, 120_000);
afterAll(() => stack?.stop());

describe("NOT_AS_BUILT", () => {
  it("names the changed field: recipient, amount, fee, router, value", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await agent.signIn(a);
    const p = await planFor(a, key);
    const [token, , min] = decodeAbiParameters(
      [{ type: "address" }, { type: "address" }, { type: "uint256" }],
      inputOf(p.tx.data, Command.SWEEP),
    );
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    const cases: [string, PlanTx, string][] = [
      [
        "recipient",
        { ...p.tx, data: withInput(p.tx.data, Command.SWEEP, inputs.sweep(token, thief, min)) },
        "recipient",
      ],
      [
        "amount",
        {
          ...p.tx,
          data: withInput(
            p.tx.data,
            Command.SWEEP,
            inputs.sweep(token, "0x0000000000000000000000000000000000000001", 0n),
          ),
        },
        "amount_out_min",
      ],
      [
        "fee",
        {
          ...p.tx,
          data: withInput(
            p.tx.data,
            Command.TRANSFER,
            inputs.transfer("0x0000000000000000000000000000000000000000", api.config.feeRecipient, 1n),
          ),
        },
        "fee_amount",
      ],
      [
        "fee recipient",
        {
          ...p.tx,
          data: withInput(
            p.tx.data,
            Command.TRANSFER,
            inputs.transfer("0x0000000000000000000000000000000000000000", thief, BigInt(p.fee.amount)),
          ),
        },
        "fee_recipient",
      ],
      ["router", { ...p.tx, to: dn.token("WETH") }, "to"],
      ["value", { ...p.tx, value: parseEther("0.03").toString() }, "value"],
    ];
    for (const [name, tx, field] of cases) {
      const r = await submit({ raw_tx: await agent.sign(a, tx) }, key);
      expect(r.status, name).toBe(422);
      expect(r.json.error.code, name).toBe("NOT_AS_BUILT");
      expect(
        r.json.error.diffs.map((d: any) => d.field),
        name,
      ).toEqual([field]);
      expect(r.json.error.plan_id).toBe(p.plan_id);
    }
    const recipientDiff = (await submit({ raw_tx: await agent.sign(a, cases[0]![1]) }, key)).json.error.diffs[0];
    expect(recipientDiff).toEqual({ field: "recipient", built: "msg.sender", signed: thief.toLowerCase() });
    // Nothing was relayed and the real plan still goes through.
    const ok = await submit({ raw_tx: await agent.sign(a, p.tx) }, key);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect((await dn.mined(ok.json.tx_hash)).status).toBe("success");
  });

  it("a plan is relayed once; the same signed bytes again answer the same hash without a second relay", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await agent.signIn(a);
    const p = await planFor(a, key);
    const raw = await agent.sign(a, p.tx);
    const first = await submit({ raw_tx: raw }, key);
    expect(first.status).toBe(200);
    await dn.mined(first.json.tx_hash);
    const again = await submit({ raw_tx: raw }, key);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ tx_hash: first.json.tx_hash, repeat: true });
    // The same plan signed again with the next nonce would trade twice: refused.
    const second = await submit({ raw_tx: await agent.sign(a, p.tx) }, key);
    expect(second.status).toBe(422);
    expect(second.json.error.code).toBe("NOT_AS_BUILT");
    expect(second.json.error.diffs[0]).toMatchObject({ field: "plan", signed: "already relayed" });
    const trades = (await agent.get("/me/trades", key)).json.trades;
    expect(trades.filter((t: any) => t.tx_hash === first.json.tx_hash)).toHaveLength(1);
  });

  it("only the key's own plans, signed by its wallet", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const keyA = await agent.signIn(a);
    const keyA2 = await agent.signIn(a);
    const p = await planFor(a, keyA);
    // Another key of the same wallet did not build it.
    const other = await submit({ raw_tx: await agent.sign(a, p.tx) }, keyA2);
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe("NOT_AS_BUILT");
    // Signed by someone else.
    const b = await dn.freshWallet(parseEther("1"));
    const wrong = await submit({ raw_tx: await agent.sign(b, p.tx) }, keyA);
    expect(wrong.status).toBe(403);
    expect(wrong.json.error.code).toBe("WALLET_MISMATCH");
    for (const bad of [{}, { raw_tx: "0x1234" }, { raw_tx: "nothex" }, { raw_tx: "0x02", extra: 1 }, { raw_txs: [] }]) {
      const r = await submit(bad, keyA);
      expect([400, 422], JSON.stringify(bad)).toContain(r.status);
      expect(["BAD_REQUEST", "SUBMIT_REJECTED"]).toContain(r.json.error.code);
    }
  });
});

describe("the sequencer", () => {
  it("SUBMIT_REJECTED when it refuses (nonce already used); the plan stays usable", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const key = await agent.signIn(a);
    const p = await planFor(a, key);
    const stale = await agent.sign(a, p.tx, { nonce: 0 });
    // Use nonce 0 first with a plain transfer.
    await dn.mined(await dn.walletFor(a).sendTransaction({ to: a.address, value: 1n, nonce: 0 }));
    const r = await submit({ raw_tx: stale }, key);
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("SUBMIT_REJECTED");
    const ok = await submit({ raw_tx: await agent.sign(a, p.tx) }, key);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
  });

  it("502 SEQUENCER_UNREACHABLE when nobody answers (closed port, or a sequencer that hangs)", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const closed = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
      sequencer: httpSequencer(`http://127.0.0.1:${await freePort()}`, 500),
    });
    const standIn = await startSequencerStandIn(dn.anvil.rpcUrl);
    standIn.mode("silent");
    const hanging = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
      sequencer: httpSequencer(standIn.url, 500),
    });
    try {
      for (const app of [closed, hanging]) {
        const ag = agentOf(app, dn);
        const key = await ag.signIn(a);
        // Another amount for each: a trade whose answer was lost stays pending, and the same bytes again would be its
        // repeat.
        const p = await planFor(a, key, app === closed ? "0.02" : "0.03", app);
        const r = await submit({ raw_tx: await ag.sign(a, p.tx) }, key, app);
        expect(r.status).toBe(502);
        expect(r.json.error.code).toBe("SEQUENCER_UNREACHABLE");
        expect(r.json.error.message).toMatch(/receipt/);
        expect(r.headers.get("retry-after")).toBeTruthy();
      }
      expect(standIn.received).toHaveLength(1);
    } finally {
      await closed.close();
      await hanging.close();
      await standIn.close();
    }
  });

  it("403 SUBMIT_DISABLED on a server that does not relay", async () => {
    const off = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
      config: { submitEnabled: false },
    });
    try {
      const a = await dn.freshWallet(parseEther("1"));
      const key = await agentOf(off, dn).signIn(a);
      const r = await submit({ raw_tx: "0x02" }, key, off);
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe("SUBMIT_DISABLED");
    } finally {
      await off.close();
    }
  });

  it("a relayed trade never mined within an hour is dropped (listed only with refused=1)", async () => {
    const standIn = await startSequencerStandIn(dn.anvil.rpcUrl);
    standIn.mode("blackhole");
    let offset = 0;
    const clock = () => Date.now() + offset;
    const app = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(clock, 10_000, false),
      sequencer: httpSequencer(standIn.url, 500),
      clock,
    });
    try {
      const a = await dn.freshWallet(parseEther("5"));
      const ag = agentOf(app, dn);
      const key = await ag.signIn(a);
      const p = await planFor(a, key, "0.02", app);
      const raw = await ag.sign(a, p.tx);
      const r = await submit({ raw_tx: raw }, key, app);
      expect(r.status).toBe(200);
      expect(r.json.tx_hash).toBe(keccak256(raw));
      // Pending: the amount out is the plan's minimum (as prepare answered it), not yet an actual.
      expect(BigInt(p.amount_out_min)).toBeGreaterThan(0n);
      expect((await ag.get("/me/trades", key)).json.trades[0]).toMatchObject({
        status: "pending",
        amount_out_kind: "minimum",
        amount_out: p.amount_out_min,
        amount_out_min: p.amount_out_min,
      });
      offset = 3_601_000;
      expect((await ag.get("/me/trades", key)).json.trades).toEqual([]);
      expect((await ag.get("/me/trades?refused=1", key)).json.trades[0]).toMatchObject({
        status: "dropped",
        tx_hash: keccak256(raw),
      });
      // The relay watcher (same service clock) finds no receipt for it: still dropped after a pass, and counted
      // dropped once (pit_relay_outcomes_total), however many passes see it. The store is the file's: an hour on,
      // any other test's trade still pending without a receipt is dropped too, so the first pass counts at least
      // this one and the second pass counts none.
      const dropped = async () =>
        (await relayOutcomes.get()).values.find((v) => v.labels.outcome === "dropped")?.value ?? 0;
      const droppedBefore = await dropped();
      await app.app.services.watcher.tick();
      const droppedOnce = await dropped();
      await app.app.services.watcher.tick();
      expect((await ag.get("/me/trades?refused=1", key)).json.trades[0]).toMatchObject({
        status: "dropped",
        block: null,
      });
      expect(droppedOnce - droppedBefore).toBeGreaterThanOrEqual(1);
      expect(await dropped()).toBe(droppedOnce);
    } finally {
      await app.app.stop();
      await app.close();
      await standIn.close();
    }
  });
});

/** A scrape as `name{labels}` -> value (samples only; comment lines dropped). */
async function scrape(url: string): Promise<{ text: string; value: (series: string) => number }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = new Map(
    text
      .split("\n")
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))] as const),
  );
  return { text, value: (series) => samples.get(series) ?? 0 };
}

/** Every family docs/running.md "Metrics" lists (issue 32 point 3). */
const FAMILIES = [
  "pit_http_request_duration_seconds",
  "pit_refusals_total",
  "pit_relay_outcomes_total",
  "pit_cosigner_decisions_total",
  "pit_hosted_tick_lag_seconds",
  "pit_hosted_ticks_total",
  "pit_ai_spend_usd_total",
  "pit_ai_calls_total",
  "pit_worker_passes_total",
  "pit_worker_last_pass_timestamp_seconds",
  "pit_treasury_weeks_closed_total",
  "pit_views_lag_blocks",
];

describe("metrics (issue 32 point 3)", () => {
  it("a scrape after a trade finds each family, moved by the trade, on loopback only; none on PORT", async () => {
    // The process's metrics listener, as npm start and npm run api open it (here: the kernel picks the port).
    const ops = await serveMetrics({ port: 0, name: "test" });
    const url = `http://127.0.0.1:${(ops!.address() as { port: number }).port}/metrics`;
    try {
      const before = await scrape(url);
      const a = await dn.freshWallet(parseEther("5"));
      const key = await agent.signIn(a);
      const p = await planFor(a, key);
      const r = await submit({ raw_tx: await agent.sign(a, p.tx) }, key);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      await dn.mined(r.json.tx_hash);
      const refused = await submit({ raw_tx: "0x02" }, key);
      expect(refused.status).toBe(422);
      const code = refused.json.error.code;
      // A co-signing the co-signer refuses (it holds no such root): a decision by rule.
      await expect(
        api.signers!.cosigner.cosign({
          delegationHash: keccak256("0x01"),
          execution: { target: a.address, value: 0n, callData: "0x" },
          declared: { feeBps: 0 },
        }),
      ).rejects.toMatchObject({ code: "REFUSED" });
      let status: string | undefined;
      for (let i = 0; i < 100 && status !== "mined"; i++) {
        if (i) await new Promise((res) => setTimeout(res, 100));
        const trades = (await agent.get("/me/trades", key)).json.trades;
        status = trades.find((x: any) => x.tx_hash === r.json.tx_hash)?.status;
      }
      expect(status, "the relay watcher's outcome").toBe("mined");
      const after = await scrape(url);

      for (const family of FAMILIES) expect(after.text, family).toContain(`# TYPE ${family} `);
      const moved = (series: string) => after.value(series) - before.value(series);
      // At least this trade (an earlier test's trade may be recorded in between too).
      expect(moved('pit_relay_outcomes_total{outcome="mined"}')).toBeGreaterThanOrEqual(1);
      for (const outcome of ["reverted", "dropped", "resent"])
        expect(after.text).toContain(`pit_relay_outcomes_total{outcome="${outcome}"}`);
      const submitted = 'method="POST",route="/api/v1/live/submit",status="200"';
      expect(moved(`pit_http_request_duration_seconds_count{${submitted}}`)).toBe(1);
      expect(moved(`pit_http_request_duration_seconds_bucket{le="+Inf",${submitted}}`)).toBe(1);
      expect(moved(`pit_refusals_total{code="${code}"}`)).toBe(1);
      expect(moved('pit_cosigner_decisions_total{decision="refused",rule="TRADE_REFUSED"}')).toBe(1);
      expect(after.value('pit_worker_passes_total{worker="relay_watcher",outcome="ran"}')).toBeGreaterThan(0);
      for (const series of [
        'pit_hosted_ticks_total{outcome="committed"}',
        'pit_ai_spend_usd_total{funding="service"}',
        'pit_ai_spend_usd_total{funding="own"}',
        'pit_worker_passes_total{worker="treasury_closer",outcome="ran"}',
        'pit_worker_passes_total{worker="league_settler",outcome="ran"}',
      ])
        expect(after.text).toContain(`${series} `);
      // The views trail the chain by a handful of blocks here (the indexer follows the devnet).
      const lag = /^pit_views_lag_blocks (-?\d+)$/m.exec(after.text);
      expect(lag, after.text.slice(0, 2_000)).not.toBeNull();
      expect(Number(lag![1])).toBeLessThan(30);
      // Labels are patterns, statuses, codes and outcomes: never an address, a hash, a key or an id.
      const ours = after.text.split("\n").filter((l) => l.startsWith("pit_"));
      expect(ours.filter((l) => /0x[0-9a-f]{8}|\/\d+[/"]/i.test(l))).toEqual([]);

      // The public API port has no /metrics; the listener answers nothing but GET /metrics.
      const pub = await api.call("GET", "/metrics");
      expect([pub.status, pub.json?.error?.code]).toEqual([404, "NOT_FOUND"]);
      expect((await fetch(url.replace("/metrics", "/"))).status).toBe(404);
      expect((await fetch(url, { method: "POST" })).status).toBe(404);
    } finally {
      await closeMetrics(ops);
    }
  });
});
