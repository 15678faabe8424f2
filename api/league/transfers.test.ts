import { describe, expect, it } from "vitest";
import type { Config } from "../../lib/config.js";
import { NATIVE_MAX_FAILURES } from "../../lib/league/native.js";
import type { Common } from "../ports/common.js";
import { createTransferLog } from "./transfers.js";

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
