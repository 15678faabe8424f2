import { describe, expect, it } from "vitest";
import type { Config } from "../../lib/config.js";
import { NATIVE_MAX_FAILURES, nativeTransfersOf } from "../../lib/league/native.js";
import type { Common } from "../ports/common.js";
import { transfersOf } from "../../lib/league/chain.js";
import { createTransferLog, nativeTry } from "./transfers.js";

const A = "0x00000000000000000000000000000000000000a1";
const FUNDER = "0x00000000000000000000000000000000000000f1";

/**
 * A node whose address A received 1 wei of ETH at each of `changes` (its balance steps there), with
 * a callTracer that fails for each block in `failing`.
 */
function tracingChain(changes: number[], failing: Set<number> = new Set()) {
  const traced: number[] = [];
  const chain = {
    getTransactionCount: async () => 0,
    getBalance: async ({ address, blockNumber }: { address: string; blockNumber: bigint }) =>
      BigInt(address.toLowerCase() === A ? changes.filter((b) => BigInt(b) <= blockNumber).length : 0),
    request: async ({ params }: { params: [string, unknown] }) => {
      const block = Number(BigInt(params[0]));
      traced.push(block);
      if (failing.has(block)) throw new Error("tracer timed out");
      if (!changes.includes(block)) return [];
      const txHash = `0x${block.toString(16).padStart(64, "0")}`;
      return [{ txHash, result: { type: "CALL", from: FUNDER, to: A, value: "0x1" } }];
    },
  };
  const config = { tokens: {}, startBlock: 1, nativeFromBlock: 1 } as unknown as Config;
  return { traced, log: createTransferLog({ config, chain: chain as unknown as Common["chain"] }) };
}

describe("the native ETH scan is bounded", () => {
  it("flags a block whose trace keeps failing after a few tries, and reads on past it", async () => {
    const { traced, log } = tracingChain([10, 150_000], new Set([10]));
    for (let n = 1; n < NATIVE_MAX_FAILURES; n++) {
      const r = await log.native([A], 160_000n);
      expect(r.unreadable).toBeNull();
      expect(r.behind).toMatch(new RegExp(`the trace of block 10 could not be read \\(${n} of ${NATIVE_MAX_FAILURES}`));
      expect(r.transfers).toEqual([]);
    }
    const last = await log.native([A], 160_000n);
    expect(last.behind).toBeNull();
    expect(last.unreadable).toBe(
      `native ETH moves not read after ${NATIVE_MAX_FAILURES} failed tries: the trace of block 10`,
    );
    expect(last.skipped).toEqual({ blocks: [10], ranges: [] });
    expect(last.transfers.map((t) => [t.block, t.from, t.to])).toEqual([[150_000, FUNDER, A]]);
    // Skipped: never traced again, and still flagged.
    const again = await log.native([A], 160_000n);
    expect(traced.filter((b) => b === 10)).toHaveLength(NATIVE_MAX_FAILURES);
    expect(again.unreadable).toBe(last.unreadable);
  });

  it("counts failures in a row: a block near the head that fails now and then is never skipped", async () => {
    // Within the last blocks, which every read traces again (a reorg may change them).
    const failing = new Set([159_990]);
    const { log } = tracingChain([159_990], failing);
    for (let round = 0; round < 3; round++) {
      for (let n = 1; n < NATIVE_MAX_FAILURES; n++)
        expect((await log.native([A], 160_000n)).behind).toMatch(/the trace of block 159990 could not be read/);
      failing.delete(159_990);
      const ok = await log.native([A], 160_000n);
      expect([ok.behind, ok.unreadable]).toEqual([null, null]);
      failing.add(159_990);
    }
  });

  it(
    "counts one failure per try however many of its reads meet the block (another group reading past it clears " +
      "nothing), within one budget of blocks",
    async () => {
      // A pass reads the entries' addresses, then again with a vault wallet (B) that is not one of them: one try.
      const B = "0x00000000000000000000000000000000000000b2";
      const { traced, log } = tracingChain([10, 150_000], new Set([10]));
      for (let n = 1; n < NATIVE_MAX_FAILURES; n++) {
        const attempt = nativeTry();
        expect((await log.native([A], 160_000n, attempt)).behind).toMatch(
          new RegExp(`\\(${n} of ${NATIVE_MAX_FAILURES}`),
        );
        const again = await log.native([A, B], 160_000n, attempt);
        expect(again.unreadable).toBeNull();
        expect(again.behind).toMatch(new RegExp(`block 10 could not be read \\(${n} of ${NATIVE_MAX_FAILURES}`));
      }
      const attempt = nativeTry();
      await log.native([A], 160_000n, attempt);
      expect((await log.native([A, B], 160_000n, attempt)).unreadable).toMatch(/the trace of block 10/);
      // Each try traced block 10 once per read that met it, and skipped it only at its NATIVE_MAX_FAILURES-th try.
      expect(traced.filter((b) => b === 10).length).toBeGreaterThanOrEqual(2 * (NATIVE_MAX_FAILURES - 1));
      // Another try's read between a try's two reads (the settler shares the log) does not make the first count again.
      const shared = tracingChain([10, 150_000], new Set([10]));
      const [live, settler] = [nativeTry(), nativeTry()];
      expect((await shared.log.native([A], 160_000n, live)).behind).toMatch(/\(1 of /);
      expect((await shared.log.native([A], 160_000n, settler)).behind).toMatch(/\(2 of /);
      const second = await shared.log.native([A, B], 160_000n, live);
      expect([second.unreadable, second.behind]).toEqual([null, expect.stringMatching(/\(2 of /)]);
      // One try's reads share its budget: a new address's scan from block 1 goes no further than the try allows.
      const bounded = tracingChain([10, 250_000, 420_000]);
      const one = nativeTry();
      await bounded.log.native([A], 150_000n, one);
      expect((await bounded.log.native([A, B], 450_000n, one)).behind).toMatch(
        /of 450000 \(at most 200000 blocks per read/,
      );
      expect(one.budget.left).toBeLessThanOrEqual(0n);
    },
  );

  it("scans at most NATIVE_BLOCKS_PER_READ blocks per read, keeping its progress; the rest is behind", async () => {
    const { log } = tracingChain([10, 250_000, 420_000]);
    const first = await log.native([A], 450_000n);
    expect(first.behind).toMatch(/read through block 200000 of 450000 \(at most 200000 blocks per read/);
    expect(first.transfers.map((t) => t.block)).toEqual([10]);
    const second = await log.native([A], 450_000n);
    expect(second.behind).toMatch(/read through block 400000 of 450000/);
    expect(second.transfers.map((t) => t.block)).toEqual([10, 250_000]);
    const third = await log.native([A], 450_000n);
    expect([third.behind, third.unreadable]).toEqual([null, null]);
    expect(third.transfers.map((t) => t.block)).toEqual([10, 250_000, 420_000]);
  });
});

/**
 * A random chain of `blocks` blocks where the league's addresses send ETH to each other and to strangers and
 * receive it (each send moves the sender's nonce, each receipt grows a balance, so no state comes back), and
 * whose blocks above `from` can be replaced (a reorganisation: other moves, other hashes). Answers what the scan
 * reads: nonces, balances (one by one, and through Multicall3's getEthBalance), block hashes, traces.
 */
const TOKEN = "0x00000000000000000000000000000000000000d1";

function randomChain(seed: number, league: string[]) {
  let x = seed;
  const rnd = (n: number) => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x % n;
  };
  const strangers = [0xe1, 0xe2, 0xe3].map((n) => `0x${n.toString(16).padStart(40, "0")}`);
  type Move = { from: string; to: string; value: bigint };
  const moves: Move[][] = [];
  const hashes: string[] = [];
  let version = 0;
  const grow = (until: number) => {
    while (moves.length <= until) {
      const b = moves.length;
      const list: Move[] = [];
      for (let i = rnd(4) === 0 ? 1 + rnd(2) : 0; i > 0; i--) {
        const all = [...league, ...strangers];
        const from = all[rnd(all.length)]!;
        const to = all.filter((a) => a !== from)[rnd(all.length - 1)]!;
        list.push({ from, to, value: BigInt(1 + rnd(1000)) });
      }
      moves.push(list);
      states = new Map();
      hashes.push(`0x${version.toString(16)}${b.toString(16).padStart(63, "0")}`);
    }
  };
  // Each address's state after each block, built again after a reorganisation.
  let states = new Map<string, { nonce: number; balance: bigint }[]>();
  const stateAt = (a: string, block: bigint) => {
    if (!states.has(a)) {
      let [nonce, balance] = [0, 1_000_000n];
      states.set(
        a,
        moves.map((list) => {
          for (const m of list) {
            if (m.from === a) [nonce, balance] = [nonce + 1, balance - m.value];
            if (m.to === a) balance += m.value;
          }
          return { nonce, balance };
        }),
      );
    }
    const list = states.get(a)!;
    return list[Math.min(Number(block), list.length - 1)]!;
  };
  const multicall3 = "0x00000000000000000000000000000000000000c3";
  // The same moves as TOKEN's Transfer logs.
  type LogFilter = { fromBlock: string; toBlock: string; topics: [string, string[] | null, string[]?] };
  const logsOf = (f: LogFilter) => {
    const topic = (a: string) => `0x${a.slice(2).padStart(64, "0")}`;
    const out = [];
    for (let b = Number(BigInt(f.fromBlock)); b <= Number(BigInt(f.toBlock)) && b < moves.length; b++)
      for (const [i, m] of moves[b]!.entries()) {
        if (f.topics[1] && !f.topics[1].includes(topic(m.from))) continue;
        if (f.topics[2] && !f.topics[2].includes(topic(m.to))) continue;
        out.push({
          address: TOKEN,
          topics: [f.topics[0], topic(m.from), topic(m.to)],
          data: `0x${m.value.toString(16)}`,
          transactionHash: `${hashes[b]!.slice(0, 60)}${i.toString(16).padStart(4, "0")}`,
          blockNumber: `0x${b.toString(16)}`,
          transactionIndex: `0x${i.toString(16)}`,
          logIndex: `0x${i.toString(16)}`,
        });
      }
    return out;
  };
  const chain = {
    chain: { contracts: { multicall3: { address: multicall3 } } },
    getTransactionCount: async ({ address, blockNumber }: { address: string; blockNumber: bigint }) =>
      stateAt(address.toLowerCase(), blockNumber).nonce,
    getBalance: async ({ address, blockNumber }: { address: string; blockNumber: bigint }) =>
      stateAt(address.toLowerCase(), blockNumber).balance,
    multicall: async ({ contracts, blockNumber }: { contracts: { args: [string] }[]; blockNumber: bigint }) =>
      contracts.map((c) => stateAt(c.args[0].toLowerCase(), blockNumber).balance),
    getBlock: async ({ blockNumber }: { blockNumber: bigint }) => ({ hash: hashes[Number(blockNumber)] }),
    request: async ({ method, params }: { method: string; params: [unknown, unknown] }) => {
      if (method === "eth_getLogs") return logsOf(params[0] as LogFilter);
      const b = Number(BigInt(params[0] as string));
      return (moves[b] ?? []).map((m, i) => ({
        txHash: `${hashes[b]!.slice(0, 60)}${i.toString(16).padStart(4, "0")}`,
        result: { type: "CALL", from: m.from, to: m.to, value: `0x${m.value.toString(16)}` },
      }));
    },
  };
  return {
    chain: chain as unknown as Common["chain"],
    grow,
    /** Blocks above `from` replaced by others. */
    reorg(from: number) {
      version++;
      moves.length = from + 1;
      hashes.length = from + 1;
      states = new Map();
    },
  };
}

describe("the native ETH scan kept between reads (issue 29 point 6)", () => {
  const league = [0xa1, 0xa2, 0xa3, 0xa4, 0xa5].map((n) => `0x${n.toString(16).padStart(40, "0")}`);
  const config = { tokens: { T: { address: TOKEN } }, startBlock: 1, nativeFromBlock: 1 } as unknown as Config;
  const keyed = (ts: { block: number; tx_hash: string; from: string; to: string; amount: bigint }[]) =>
    ts.map((t) => `${t.block} ${t.tx_hash} ${t.from}>${t.to} ${t.amount}`);

  it("answers what a read from scratch answers (native moves and logs), read after read, through reorgs", async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const c = randomChain(seed, league);
      const log = createTransferLog({ config, chain: c.chain });
      let head = 5;
      for (let round = 0; round < 40; round++) {
        head += [0, 1, 1, 2, 7, 30, 90][round % 7]!;
        c.grow(head);
        // Some reads at an older block (a decision at a season's last block), below the tips kept.
        const at = round % 5 === 4 && head > 40 ? head - 20 : head;
        // Now and then the last blocks are replaced (within REORG_DEPTH of the head).
        if (round % 6 === 3) {
          c.reorg(head - 1 - (round % 40));
          c.grow(head);
        }
        const kept = await log.native(league, BigInt(at));
        const scratch = await nativeTransfersOf(c.chain, league, 1n, BigInt(at));
        expect([kept.behind, kept.unreadable]).toEqual([null, null]);
        expect(keyed(kept.transfers), `seed ${seed} round ${round} at ${at}`).toEqual(keyed(scratch));
        // The token's Transfer logs, kept the same way (tips guarded by their block's hash).
        const logs = await log.read(league, BigInt(at));
        expect(keyed(logs), `logs: seed ${seed} round ${round}`).toEqual(
          keyed(await transfersOf(c.chain, league, 1n, BigInt(at), [TOKEN])),
        );
      }
    }
  });
});
