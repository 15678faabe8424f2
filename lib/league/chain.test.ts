import type { PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { TRANSFER_TOPIC } from "../tradeOutcome.js";
import { transfersOf, WHOLE_READ_MAX_LOGS } from "./chain.js";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const topic = (a: string) => `0x${a.slice(2).padStart(64, "0")}`;
const [TOKEN, A, B] = [addr(0xd1), addr(0xa1), addr(0xb1)];

/**
 * A node with `busy` Transfers among strangers in blocks 1,000-1,099 and one from A to B in block 1,100, which
 * answers a getLogs with at most `cap` logs and no error (as some RPC front-ends do), applying the topic lists.
 */
function cappedNode(busy: number, cap: number) {
  const logs = [
    ...Array.from({ length: busy }, (_, i) => ({
      from: addr(0x10000 + i),
      to: addr(0x20000 + i),
      block: 1_000 + (i % 100),
    })),
    { from: A, to: B, block: 1_100 },
  ].map((m, i) => ({
    address: TOKEN,
    topics: [TRANSFER_TOPIC, topic(m.from), topic(m.to)],
    data: "0x01",
    transactionHash: `0x${i.toString(16).padStart(64, "0")}`,
    blockNumber: `0x${m.block.toString(16)}`,
    transactionIndex: "0x0",
    logIndex: `0x${i.toString(16)}`,
  }));
  const requests: unknown[][] = [];
  const chain = {
    request: async ({
      params,
    }: {
      params: [{ fromBlock: string; toBlock: string; topics: (string[] | string | null)[] }];
    }) => {
      const f = params[0];
      requests.push(f.topics);
      const [lo, hi] = [Number(BigInt(f.fromBlock)), Number(BigInt(f.toBlock))];
      const within = (list: string[] | string | null | undefined, t: string) =>
        !list || (Array.isArray(list) ? list.includes(t) : list === t);
      return logs
        .filter((l) => Number(BigInt(l.blockNumber)) >= lo && Number(BigInt(l.blockNumber)) <= hi)
        .filter((l) => within(f.topics[1], l.topics[1]!) && within(f.topics[2], l.topics[2]!))
        .slice(0, cap);
    },
  };
  return { chain: chain as unknown as PublicClient, requests };
}

describe("transfers over a short range: one read of every Transfer, filtered here", () => {
  it("finds the league's transfer in one request on a quiet range", async () => {
    const { chain, requests } = cappedNode(10, 10_000);
    const found = await transfersOf(chain, [A, B], 1_000n, 1_100n, [TOKEN]);
    expect(found.map((t) => [t.from, t.to])).toEqual([[A, B]]);
    expect(requests).toEqual([[TRANSFER_TOPIC]]);
  });

  it("does not trust an answer as long as a cap: the topic lists find what a cut answer left out", async () => {
    const { chain, requests } = cappedNode(12_000, 10_000);
    const found = await transfersOf(chain, [A, B], 1_000n, 1_100n, [TOKEN]);
    expect(found.map((t) => [t.from, t.to])).toEqual([[A, B]]);
    // The whole read, then the two topic lists (from in the list, to in the list).
    expect(requests.length).toBe(3);
    // Anything from the threshold up is read again: a node capping at the threshold itself is covered.
    const at = cappedNode(WHOLE_READ_MAX_LOGS, WHOLE_READ_MAX_LOGS);
    expect((await transfersOf(at.chain, [A, B], 1_000n, 1_100n, [TOKEN])).length).toBe(1);
  });
});
