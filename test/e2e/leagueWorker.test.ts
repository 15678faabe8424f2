import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAbi, parseEther, zeroAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import { calendarAt, type season as seasonAt } from "../../lib/league/calendar.js";
import { TRANSFER_TOPIC } from "../../lib/tradeOutcome.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startStack, untilFinal, type Stack } from "../helpers/stack.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";
import { serveApi } from "../helpers/api.js";
import { registerAgent as registerPartner } from "../helpers/league.js";

/**
 * Issue 26, points 4 and 5, over HTTP on a devnet: the league's standings are computed by the
 * worker (one instance here; leagueLease.test.ts has two) and served stale while the next is computed; a flood of reads
 * starts no
 * computation; transfer links are read from the last block read; a board with no entry answers
 * from a constant; a season whose sanctions list or vault cannot be read at its decision block is
 * not decided until both can be, and then decided on what they say.
 *
 * The API under test reads the chain through a proxy (its getLogs are seen) and its worker is
 * driven by the test (`cacheMs: 0`: no timer); a hook counts and can hold each computation.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
const fresh = () => privateKeyToAccount(generatePrivateKey());

let stack: Stack;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const chainNow = async () => Number((await stack.dn.pub.getBlock()).timestamp);
let proxy: Awaited<ReturnType<typeof startRpcProxy>>;
let api: Awaited<ReturnType<typeof serveApi>>;
let season: ReturnType<typeof seasonAt>;
/** Every computation the worker started, by key, in order. */
const computed: string[] = [];
/** While set, each computation waits for it (a recompute held open). */
let gate: Promise<void> | null = null;
/** The fromBlock of every Transfer getLogs the API sent. */
const transferReads: number[] = [];
const players: { owner: Account; wallet: Account; agentWallet: Address; id: number; key: string; entry: string }[] = [];

async function warp(ts: number) {
  const { dn } = stack;
  await dn.test.setNextBlockTimestamp({ timestamp: BigInt(ts) });
  await dn.test.mine({ blocks: 1 });
  offsetMs = ts * 1000 - Date.now();
  await stack.ix.waitFor(await dn.pub.getBlockNumber());
}

const registerAgent = (owner: Address, wallet: Address, symbol: string) =>
  registerPartner(stack.dn, owner, wallet, symbol);

const standings = (q = "") => api.call("GET", `/api/v1/league/standings${q}`);
const computedOf = (key: string) => computed.filter((k) => k === key).length;

beforeAll(async () => {
  stack = await startStack({ clock, league: { settleIntervalMs: 0, cacheMs: 0 }, hostedScheduler: { intervalMs: 0 } });
  const { dn } = stack;
  offsetMs = (await chainNow()) * 1000 - Date.now();
  season = calendarAt(await chainNow()).next;
  proxy = await startRpcProxy(dn.anvil.rpcUrl, {
    onCall: (m) => {
      const p = (m.params as { topics?: unknown[]; fromBlock?: string }[] | undefined)?.[0];
      if (m.method === "eth_getLogs" && p?.topics?.[0] === TRANSFER_TOPIC) transferReads.push(Number(p.fromBlock));
    },
  });
  api = await serveApi({
    rpcUrl: proxy.url,
    db: stack.store.db,
    clock,
    indexed: stack.ix.liveReads().reads,
    limiter: new RateLimiter(clock, 10_000, false),
    league: {
      settleIntervalMs: 0,
      cacheMs: 0,
      onCompute: async (key: string) => {
        computed.push(key);
        await gate;
      },
    },
    hostedScheduler: { intervalMs: 0 },
  });
  // Two prize entries, each confirmed by its owner's signed statement; they play the next season.
  for (const n of [1, 2]) {
    const wallet = fresh();
    const owner = fresh();
    const agentWallet = fresh().address;
    const id = await registerAgent(owner.address, agentWallet, `W${n}`);
    const key = await stack.agent.signIn(wallet);
    const st = await stack.agent.post("/league/statement", { agent_id: id }, key);
    expect(st.status, st.text).toBe(200);
    const e = await stack.agent.post(
      "/league/enter",
      { agent_id: id, nonce: st.json.nonce, signature: await owner.signMessage({ message: st.json.message }) },
      key,
    );
    expect(e.status, e.text).toBe(201);
    players.push({ owner, wallet, agentWallet, id, key, entry: e.json.entry_id });
  }
  await warp(season.starts + 3_600);
}, 300_000);

afterAll(async () => {
  await api?.close();
  await proxy?.close();
  await stack?.stop();
});

describe("league standings: one worker, stale answers, no reader-started recompute", () => {
  it("a board with no entry answers from a constant: nothing is computed for it", async () => {
    const r = await standings(`?board=practice&season=${season.number}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      board: "practice",
      season: season.number,
      status: "open",
      rows: [],
      outcome: null,
      places: null,
      amounts_atoms: null,
      decided: false,
    });
    expect(computedOf(`practice:${season.number}`)).toBe(0);
  });

  it("the first readers share one computation; a flood starts none; readers get the last answer while the next is " +
    "computed; links are read from the last block read", async () => {
    const key = `prize:${season.number}`;
    // The first readers of a key wait for its first computation, all for the same one.
    const first = await Promise.all(Array.from({ length: 20 }, () => standings()));
    expect(first.map((r) => r.status)).toEqual(first.map(() => 200));
    expect(computedOf(key)).toBe(1);
    const answer = first[0]!.json;
    expect(answer).toMatchObject({
      board: "prize",
      season: season.number,
      status: "open",
      amounts_basis: "estimate",
      decided: false,
    });
    expect(answer.rows).toHaveLength(2);
    // Transfer links read for the first time: from the start block.
    expect(transferReads.length).toBeGreaterThan(0);
    expect(Math.min(...transferReads)).toBe(api.config.startBlock);
    const firstReads = transferReads.length;

    // A flood of readers starts no computation and reads nothing from the chain's logs.
    const flood = await Promise.all(Array.from({ length: 200 }, () => standings()));
    expect(flood.map((r) => r.status)).toEqual(flood.map(() => 200));
    expect(computedOf(key)).toBe(1);
    expect(transferReads.length).toBe(firstReads);

    // The worker's next pass, held open: readers get the last answer meanwhile, and start nothing.
    await warp(season.starts + 7_200);
    let release!: () => void;
    gate = new Promise<void>((r) => (release = r));
    const pass = api.app.services.league.boards.runOnce();
    for (let i = 0; i < 200 && computedOf(key) < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect(computedOf(key)).toBe(2);
    const during = await Promise.all(Array.from({ length: 200 }, () => standings()));
    expect(during.map((r) => r.status)).toEqual(during.map(() => 200));
    expect(new Set(during.map((r) => r.json.valued_at))).toEqual(new Set([answer.valued_at]));
    expect(during[0]!.json.rows).toEqual(answer.rows);
    expect(computedOf(key)).toBe(2);
    gate = null;
    release();
    await pass;
    // Then the new answer is served; the pass computed this key once.
    const after = await standings();
    expect(after.status, after.text).toBe(200);
    expect(after.json.valued_at).toBeGreaterThan(answer.valued_at);
    expect(computedOf(key)).toBe(2);
    // The second computation read transfer logs only after the blocks already read.
    const later = transferReads.slice(firstReads);
    expect(later.length).toBeGreaterThan(0);
    expect(Math.min(...later)).toBeGreaterThan(api.config.startBlock);
    // Still nothing computed for the empty practice board.
    expect(computedOf(`practice:${season.number}`)).toBe(0);
  }, 120_000);
});

describe("the vault's and the sanctions list's answers kept between passes (issue 29 point 6)", () => {
  it("a prize wallet the vault moves to a listed address fails SANCTIONS in the next pass, and passes once both are " +
    "undone; each pass asks the contracts' state (eth_getProof)", async () => {
    const { dn } = stack;
    const boards = api.app.services.league.boards;
    const p = players[0]!;
    const owner = dn.walletFor(dn.deployer);
    const write = async (address: Address, fn: string, args: unknown[]) =>
      dn.mined(await owner.writeContract({ address, abi: parseAbi([fn]), args } as never));
    const vault = dn.universe.contracts.partnerAgentVault;
    const list = dn.universe.contracts.sanctionsList;
    // The rule as computed at a block past the last write (the API's block number may lag by its 100-ms cache).
    const sanctions = async () => {
      const after = Number(await dn.pub.getBlockNumber());
      for (let i = 0; i < 50; i++) {
        await dn.test.mine({ blocks: 1 });
        expect(await boards.runOnce()).toBe(1);
        const rows = (await standings()).json.rows as Record<string, any>[];
        const e = rows.find((r) => r.entry_id === p.entry)!.eligibility;
        if (e.checked_block > after) return e.rules.find((r: { rule: string }) => r.rule === "SANCTIONS").status;
      }
      throw new Error(`no pass computed past block ${after}`);
    };
    const proofs = () => proxy.counts.methods.eth_getProof ?? 0;
    const asked = proofs();
    expect(await sanctions()).toBe("pass");
    expect(await sanctions()).toBe("pass");
    expect(proofs()).toBeGreaterThan(asked);
    const listed = fresh().address;
    await write(vault, "function setAgentWallet(uint256 id, address agentWallet)", [BigInt(p.id), listed]);
    await write(list, "function addToSanctionsList(address[] addrs)", [[listed]]);
    expect(await sanctions()).toBe("fail");
    await write(list, "function removeFromSanctionsList(address[] addrs)", [[listed]]);
    expect(await sanctions()).toBe("pass");
    // Listed again while the vault still points there, then the vault moves back: each change shows.
    await write(list, "function addToSanctionsList(address[] addrs)", [[listed]]);
    expect(await sanctions()).toBe("fail");
    await write(vault, "function setAgentWallet(uint256 id, address agentWallet)", [BigInt(p.id), p.agentWallet]);
    expect(await sanctions()).toBe("pass");
  }, 120_000);
});

describe("native ETH links (issue 29)", () => {
  it("an owner's plain ETH to another entry's agent wallet links the two; a pass over no new block traces nothing " +
    "again; a node that cannot trace flags rule LINKS on every row", async () => {
    const { dn } = stack;
    const [a, b] = [players[0]!, players[1]!];
    const boards = api.app.services.league.boards;
    await dn.test.setBalance({ address: a.owner.address, value: parseEther("1") });
    const hash = await dn.walletFor(a.owner).sendTransaction({ to: b.agentWallet, value: parseEther("0.1") });
    await dn.mined(hash);
    // Past the reorg depth: the transfer's block is kept, not read again.
    await dn.test.mine({ blocks: 70 });
    await warp(season.starts + 10_800);
    await boards.runOnce();
    const rows = (await standings()).json.rows as Record<string, any>[];
    const row = (p: { entry: string }) => rows.find((r) => r.entry_id === p.entry)!;
    expect(row(b).cluster).toBe(row(a).cluster);
    expect(row(b).cluster_links).toEqual([
      {
        kind: "transfer",
        with: a.entry,
        evidence: {
          from: a.owner.address.toLowerCase(),
          to: b.agentWallet.toLowerCase(),
          tx_hash: hash,
          block: Number((await dn.pub.getTransactionReceipt({ hash })).blockNumber),
          token: zeroAddress,
        },
      },
    ]);
    expect(row(a).eligibility.rules.find((r: { rule: string }) => r.rule === "LINKS").status).toBe("pass");
    // The next pass, no new block: nothing traced again.
    const traced = () => proxy.counts.methods.debug_traceBlockByNumber ?? 0;
    const before = traced();
    expect(before).toBeGreaterThan(0);
    await boards.runOnce();
    expect(traced()).toBe(before);

    // Another instance on the same store whose node does not answer debug_traceBlockByNumber.
    const noTrace = await startRpcProxy(dn.anvil.rpcUrl, { refuse: ["debug_traceBlockByNumber"] });
    const other = await serveApi({
      rpcUrl: noTrace.url,
      db: stack.store.db,
      clock,
      indexed: stack.ix.liveReads().reads,
      limiter: new RateLimiter(clock, 10_000, false),
      league: { settleIntervalMs: 0, cacheMs: 0 },
      hostedScheduler: { intervalMs: 0 },
    });
    try {
      // This instance gives up the standings lease; the other computes.
      await boards.stop();
      await warp(season.starts + 11_000);
      expect(await other.app.services.league.boards.runOnce()).toBe(1);
      const flagged = (await other.call("GET", "/api/v1/league/standings")).json.rows as Record<string, any>[];
      expect(flagged).toHaveLength(2);
      for (const r of flagged) {
        expect(r.eligibility.rules.find((x: { rule: string }) => x.rule === "LINKS")).toMatchObject({
          status: "flag",
          reason: expect.stringMatching(/debug_traceBlockByNumber.*held for review/),
        });
        expect(r.eligibility.eligible).toBe(false);
      }
      expect(noTrace.counts.methods.debug_traceBlockByNumber).toBeGreaterThan(0);
    } finally {
      await other.close();
      await noTrace.close();
    }
  }, 180_000);
});

describe("a season is decided only on complete reads", () => {
  it("an unreadable vault or sanctions list at the decision block leaves the season undecided; once readable it is " +
    "decided on what the list says", async () => {
    const { dn } = stack;
    const settler = api.app.services.league.settler;
    // Player 2's owner is listed during the season.
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[players[1]!.owner.address]],
      }),
    );
    await warp(season.ends + 60);
    // Ended, and the indexer past its end, but the end not yet FINALITY_BLOCKS deep: not decided (nothing it counts
    // may still be reorganised away).
    expect(await settler.runOnce()).toEqual({
      decided: [],
      waiting: `season ${season.number}: the season's end is ` + `not ${FINALITY_BLOCKS} blocks deep yet`,
    });
    await untilFinal(stack, season.ends);
    const decidedRows = async () =>
      (await stack.store.db.query("SELECT board FROM app.league_results WHERE season = $1", [season.number])).length;
    const revert = "0x60006000fd";
    for (const contract of [dn.universe.contracts.partnerAgentVault, dn.universe.contracts.sanctionsList]) {
      const code = await dn.pub.getCode({ address: contract });
      await dn.test.setCode({ address: contract, bytecode: revert });
      try {
        // Retried on every pass, never decided while the read fails.
        for (let i = 0; i < 2; i++) {
          const r = await settler.runOnce().catch((err: Error) => ({ decided: [] as number[], waiting: err.message }));
          expect(r.decided).toEqual([]);
          expect(r.waiting).toMatch(contract === dn.universe.contracts.sanctionsList ? /sanctions/ : /vault/);
        }
        expect(await decidedRows()).toBe(0);
        expect((await standings(`?season=${season.number}`)).json.decided).toBe(false);
      } finally {
        await dn.test.setCode({ address: contract, bytecode: code! });
      }
    }
    // Readable again: the next pass decides, with the list's own answers and no flag from a failed read.
    const r = await settler.runOnce();
    expect(r.decided).toEqual([season.number]);
    const st = await standings(`?season=${season.number}`);
    expect(st.json).toMatchObject({ status: "closed", decided: true, amounts_basis: "decided" });
    const rule = (n: number, name: string) =>
      st.json.rows
        .find((x: { entry_id: string }) => x.entry_id === players[n]!.entry)
        .eligibility.rules.find((x: { rule: string }) => x.rule === name);
    expect([rule(0, "SANCTIONS").status, rule(1, "SANCTIONS").status]).toEqual(["pass", "fail"]);
    expect([rule(0, "PAYABLE").status, rule(1, "PAYABLE").status]).toEqual(["pass", "pass"]);
  }, 180_000);
});
