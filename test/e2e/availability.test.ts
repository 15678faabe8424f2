import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress, parseAbi, parseEther, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { putAhead } from "../helpers/priority.js";
import { freshenMarket, startIndexedDevnet } from "../helpers/stack.js";
import type { Devnet } from "../helpers/devnet.js";
import { airdropGasBurner, deployGasBurner } from "../helpers/hostile.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { SCREEN_DEFAULTS, type ScreenTuning } from "../../api/tokens/index.js";
import { weekOf } from "../../api/treasury/index.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { cappedMulticall } from "../../lib/chain.js";
import { fixtureBytecode } from "../../devnet/artifacts.js";
import { ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { mintableAbi } from "../../abis/erc20.js";

/**
 * Issue 26, points 1, 2 and 4 (treasury): a token the service does not control cannot slow or stop
 * anyone else. Gas-burning tokens (name and symbol burn 25M gas: seconds of node time uncapped) are
 * screened and airdropped to the platform wallet while a bystander trades; the week still closes.
 */
const CONFIRMATIONS = 3;
const NEVER = 3_600_000;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const opened: { close(): Promise<void> }[] = [];
const buybacks = getAddress("0x000000000000000000000000000000000000bb01");
const platform = () => api.config.feeRecipient;

async function serve(rpcUrl = dn.anvil.rpcUrl, screen?: ScreenTuning): Promise<Api> {
  const a = await serveApi({
    rpcUrl,
    db: store.db,
    clock,
    indexed: chain.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    config: { treasuryBuckets: { operations: dn.account(ACCOUNT_ROLES.operations).address, buybacks, treasury: null } },
    treasury: { confirmations: CONFIRMATIONS, intervalMs: NEVER, cacheMs: 1_000 },
    screen,
  });
  opened.push(a);
  return a;
}
const signIn = (a: Api) => agentOf(a, dn).signIn(privateKeyToAccount(generatePrivateKey()));
const get = (a: Api, path: string, key: string) =>
  a.call("GET", `/api/v1${path}`, undefined, { authorization: `Bearer ${key}` });
const deployToken = async (symbol: string): Promise<Address> =>
  (
    await dn.mined(
      await dn.walletFor(dn.deployer).deployContract({
        abi: parseAbi(["constructor(string, string, uint8)"]),
        bytecode: fixtureBytecode("TestToken", "TestToken"),
        args: [`Plain ${symbol}`, symbol, 18],
      }),
    )
  ).contractAddress!;

async function indexedTo() {
  const head = Number(await dn.pub.getBlockNumber({ cacheTime: 0 }));
  await chain.ix.waitFor(head);
  const reads = chain.ix.liveReads().reads;
  for (let i = 0; i < 100 && ((await reads.head())?.block ?? 0) < head; i++)
    await new Promise((r) => setTimeout(r, 100));
}

beforeAll(async () => {
  chain = await startIndexedDevnet({ before: freshenMarket });
  dn = chain.dn;
  offsetMs = Number((await dn.pub.getBlock()).timestamp) * 1000 - Date.now();
  store = await freshStore();
  api = await serve();
}, 180_000);
afterAll(async () => {
  for (const a of opened.reverse()) await a.close().catch(() => {});
  await store?.drop();
  await chain?.stop();
});

describe("screening a token the service does not control", () => {
  it("a failed screen spends no service-wide budget, and the unreadable token is answered from cache without a chain " +
    "call", async () => {
    const proxy = await startRpcProxy(dn.anvil.rpcUrl);
    opened.push({ close: () => proxy.close() });
    // A service-wide budget of one new screen an hour.
    const other = await serve(proxy.url, { ...SCREEN_DEFAULTS, newOverallBurst: 1, newOverallPerSecond: 1 / 3600 });
    const [burner, plain] = [await deployGasBurner(dn), await deployToken("PLN")];
    const [one, two] = [await signIn(other), await signIn(other)];
    const first = await get(other, `/tokens/${burner}`, one);
    expect([first.status, first.json?.error?.code], first.text).toEqual([404, "UNKNOWN_TOKEN"]);
    proxy.reset();
    const again = await get(other, `/tokens/${burner}`, two);
    expect([again.status, again.json?.error?.code], again.text).toEqual([404, "UNKNOWN_TOKEN"]);
    expect(proxy.counts.to[burner.toLowerCase()] ?? 0).toBe(0);
    // The service's budget of one new screen is still there for a token that can be read.
    const ok = await get(other, `/tokens/${plain}`, two);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ symbol: "PLN", screen_status: "SCREENED" });
  }, 60_000);

  it("a silent node answers 502 RPC_UNAVAILABLE on the tokens route, never 500", async () => {
    const proxy = await startRpcProxy(dn.anvil.rpcUrl);
    opened.push({ close: () => proxy.close() });
    const other = await serve(proxy.url);
    const key = await signIn(other);
    const [a, b] = [await deployToken("SIL1"), await deployToken("SIL2")];
    // A keyed read first: the wallet's clean sanctions answer is then trusted for a minute.
    expect((await get(other, "/tokens/USDG", key)).status).toBe(200);
    proxy.silent();
    try {
      for (const t of [a, b]) {
        const r = await get(other, `/tokens/${t}`, key);
        expect([r.status, r.json?.error?.code], r.text).toEqual([502, "RPC_UNAVAILABLE"]);
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    } finally {
      proxy.silent(false);
    }
  }, 60_000);
});

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const burners: Address[] = [];
const AIRDROP = parseEther("1000");

describe("a bystander while others screen gas burners and poll the treasury after an airdrop of one", () => {
  it("keeps every health, quote and prepare answer 200", async () => {
    const wallet = await dn.freshWallet(parseEther("10"));
    const agent = agentOf(api, dn);
    const key = await agent.signIn(wallet);
    const attackers = [await signIn(api), await signIn(api)];
    for (let i = 0; i < 6; i++) burners.push(await deployGasBurner(dn, { symbol: `BURN${i}` }));
    await airdropGasBurner(dn, burners[0]!, platform(), AIRDROP);
    // Income the week's split must move: its transfers are the closer's own reads and sends.
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.token("USDG"),
        abi: mintableAbi,
        functionName: "mint",
        args: [platform(), parseUnits("5", 6)],
      }),
    );
    await indexedTo();

    const round = async () => {
      const t0 = performance.now();
      const statuses = [
        (await api.call("GET", "/api/v1/health")).status,
        (await agent.post("/live/quote", { token_in: "ETH", token_out: "USDG", notional_usd: 100 }, key)).status,
        (
          await agent.post(
            "/live/prepare",
            { wallet: wallet.address, token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.01").toString() },
            key,
          )
        ).status,
      ];
      return { statuses, ms: performance.now() - t0 };
    };
    const warm: Awaited<ReturnType<typeof round>>[] = [];
    for (let i = 0; i < 4; i++) warm.push(await round());
    expect(
      warm.flatMap((r) => r.statuses).every((s) => s === 200),
      JSON.stringify(warm),
    ).toBe(true);

    // Two callers, each screening a gas burner and reading the treasury about three times a second
    // while `attacking`. The bystander's rounds alternate between quiet and attacked spells, so a
    // machine busier in one part of the run than another weighs on both sides alike.
    let attacking = false;
    let stop = false;
    const attack = (k: string, offset: number) =>
      (async () => {
        const seen: number[] = [];
        for (let i = offset; !stop; i += 2) {
          if (!attacking) {
            await new Promise((r) => setTimeout(r, 20));
            continue;
          }
          seen.push((await get(api, `/tokens/${burners[i % burners.length]}`, k)).status);
          seen.push((await api.call("GET", "/api/v1/treasury")).status);
          await new Promise((r) => setTimeout(r, 300));
        }
        return seen;
      })();
    const attacks = attackers.map((k, i) => attack(k, i));
    const before: Awaited<ReturnType<typeof round>>[] = [];
    const during: Awaited<ReturnType<typeof round>>[] = [];
    // The bound is the service's own: this process (the API, the attackers, the bystander) and its chain ahead of the
    // files beside it. A CI run once saw 44.6 ms quiet and 96.7 under attack while the other worker started stacks;
    // alone, 20-28 ms both.
    const back = putAhead([process.pid, dn.anvil.process.pid!]);
    try {
      for (let i = 0; i < 10; i++) {
        attacking = false;
        await new Promise((r) => setTimeout(r, 400)); // the attackers' requests in flight end
        before.push(await round());
        attacking = true;
        await new Promise((r) => setTimeout(r, 400));
        during.push(await round(), await round());
      }
    } finally {
      back?.();
    }
    stop = true;
    const seen = (await Promise.all(attacks)).flat();
    const statuses = [...before, ...during].flatMap((r) => r.statuses);
    expect(
      statuses.filter((s) => s !== 200),
      JSON.stringify({ before, during }),
    ).toEqual([]);
    // The attackers were answered too: an unreadable token is 404 UNKNOWN_TOKEN, the treasury 200.
    expect(seen.length).toBeGreaterThan(20);
    expect(
      seen.filter((s) => s !== 200 && s !== 404),
      JSON.stringify(seen),
    ).toEqual([]);
    const [p50Before, p50During] = [median(before.map((r) => r.ms)), median(during.map((r) => r.ms))];
    console.log(
      `bystander round p50: ${p50Before.toFixed(0)} ms quiet, ${p50During.toFixed(0)} ms under attack ` +
        `(ahead of other workers: ${back !== null})`,
    );
    // Issue 26: within 2x of the bystander's own latency, on the same machine, in the same run.
    expect(
      p50During,
      JSON.stringify({ before: before.map((r) => Math.round(r.ms)), during: during.map((r) => Math.round(r.ms)) }),
    ).toBeLessThan(p50Before * 2);
  }, 180_000);
});

describe("the treasury with an airdropped gas burner", () => {
  it("closes its week: the burner recorded unreadable and carried, the split sent, while the burners are " +
    "screened", async () => {
    expect(burners.length).toBeGreaterThan(0);
    const week = weekOf(Math.floor(clock() / 1000));
    const ts = week.end + 3_600;
    await dn.test.setNextBlockTimestamp({ timestamp: BigInt(ts) });
    await dn.test.mine({ blocks: CONFIRMATIONS + 2 });
    offsetMs = ts * 1000 - Date.now();
    await indexedTo();
    const key = await signIn(api);
    // Someone screens the burners while the week closes: neither stops the other.
    const screens = Promise.all(burners.slice(0, 3).map((b) => get(api, `/tokens/${b}`, key)));
    // The first pass sends the split; the week is recorded by the pass after the split is deep enough.
    expect(await api.app.services.treasury.closer.closeDue()).toEqual([]);
    for (const s of await screens) expect([200, 404]).toContain(s.status);
    await dn.test.mine({ blocks: CONFIRMATIONS });
    await indexedTo();
    const closed = await api.app.services.treasury.closer.closeDue();
    expect(closed).toHaveLength(1);
    const row = closed[0]!;
    const burn = row.tokens.find((t) => t.token.toLowerCase() === burners[0]!.toLowerCase());
    expect(burn).toMatchObject({
      symbol: "?",
      status: "unpriced",
      outside: AIRDROP.toString(),
      carried_out: AIRDROP.toString(),
      value_usd: null,
      mark: null,
    });
    const usdg = row.tokens.find((t) => t.symbol === "USDG")!;
    expect(usdg.status).toBe("split");
    expect(row.transfers.map((t) => `${t.bucket}:${t.symbol}`).sort()).toEqual(["buybacks:USDG", "operations:USDG"]);
    for (const t of row.transfers)
      expect((await dn.pub.getTransactionReceipt({ hash: t.tx_hash })).status).toBe("success");
    // The record serves it, the burner's row included.
    await api.app.services.treasury.reader.refresh();
    const t = (await api.call("GET", "/api/v1/treasury")).json;
    expect(t.integrity).toMatchObject({ ok: true, rows: 1, head: row.hash });
  }, 180_000);
});

describe("a batch that reads a token the service does not control", () => {
  it(
    "caps the whole eth_call: the burner's call fails on its own, the pinned calls before it answer (viem's plain " +
      "multicall burns 29M gas for it)",
    async () => {
      const burner = await deployGasBurner(dn);
      const pinned = {
        address: dn.universe.contracts.multicall3,
        abi: parseAbi(["function getCurrentBlockTimestamp() view returns (uint256)"]),
        functionName: "getCurrentBlockTimestamp",
      } as const;
      const burning = {
        address: burner,
        abi: parseAbi(["function name() view returns (string)"]),
        functionName: "name",
      } as const;
      // Without a cap the node runs the burner to the end and it answers: seconds of node time for one caller.
      const plain = await dn.pub.multicall({ contracts: [pinned, burning], allowFailure: true });
      expect(plain[1]!.status).toBe("success");
      const capped = await cappedMulticall(dn.pub, { contracts: [pinned, burning] });
      expect(capped[0]!.status).toBe("success");
      expect(capped[0]!.result as bigint).toBeGreaterThan(0n);
      expect(capped[1]!.status).toBe("failure");
    },
  );
});
