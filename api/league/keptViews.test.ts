import type { Hex, PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { FINALITY_BLOCKS } from "../../lib/finality.js";
import { keptView, selfContained, viewAt } from "./keptViews.js";

const LIST = "0x00000000000000000000000000000000000000bb";
/** A view of its own storage: CALLDATALOAD, SLOAD, MSTORE, RETURN. */
const MAPPING: Hex = "0x6000355460005260206000f3fe";
/** EIP-1167's minimal proxy: every call DELEGATECALLs another contract's code. */
const PROXY: Hex = `0x363d3d373d3d3d363d73${"bb".repeat(20)}5af43d82803e903d91602b57fd5bf3`;
const F = FINALITY_BLOCKS;

/**
 * A sanctions list whose listed addresses at each block are `listedAt(block)`, with its storage root named by that
 * set (eth_getProof fails where `proofs` says no); `reading` hooks each read (a reorganisation just before it).
 */
function list(
  listedAt: (block: number) => Set<string>,
  proofs = (_block: number) => true,
  reading = () => {},
  code: Hex = MAPPING,
) {
  const reads: { keys: string[]; block: number }[] = [];
  const proved: number[] = [];
  const chain = {
    getCode: async () => code,
    getProof: async ({ blockNumber }: { blockNumber: bigint }) => {
      const b = Number(blockNumber);
      proved.push(b);
      if (!proofs(b)) throw new Error("the method eth_getProof does not exist");
      const root = `0x${[...listedAt(b)].sort().join("")}`;
      return { storageHash: root, codeHash: "0xc0de" };
    },
  } as unknown as PublicClient;
  const read = async (keys: string[], block: bigint) => {
    reading();
    reads.push({ keys, block: Number(block) });
    return new Map(keys.map((k) => [k, listedAt(Number(block)).has(k)]));
  };
  return { chain, read, reads, proved };
}

const at = async (l: ReturnType<typeof list>, kept: ReturnType<typeof keptView<string, boolean>>, b: number) =>
  viewAt(l.chain, kept, { contract: LIST, block: BigInt(b), keys: ["a", "b", "c"] }, l.read);

describe("view answers kept while their contract is unchanged (issue 29 point 6)", () => {
  it(
    "keeps answers read at the final block, reads only new keys while the state stays, and reads at the block itself " +
      "while it differs from the final one",
    async () => {
      // "b" is listed from block 200 on.
      const l = list((b) => new Set(b >= 200 ? ["a", "b"] : ["a"]));
      const kept = keptView<string, boolean>();
      expect([...(await viewAt(l.chain, kept, { contract: LIST, block: 100n, keys: ["a", "b"] }, l.read))]).toEqual([
        ["a", true],
        ["b", false],
      ]);
      expect((await at(l, kept, 101)).get("c")).toBe(false);
      expect(l.reads).toEqual([
        { keys: ["a", "b"], block: 100 - F },
        { keys: ["c"], block: 101 - F },
      ]);
      // The list changed at 200: until that is final, every pass reads at its own block and keeps nothing.
      for (const b of [200, 201, 200 + F - 1]) expect((await at(l, kept, b)).get("b")).toBe(true);
      expect(l.reads.slice(2).map((r) => r.block)).toEqual([200, 201, 200 + F - 1]);
      // Final now: every key read again there, and kept.
      expect((await at(l, kept, 200 + F)).get("b")).toBe(true);
      l.proved.length = 0;
      expect((await at(l, kept, 200 + F + 1)).get("b")).toBe(true);
      expect(l.reads.slice(5)).toEqual([{ keys: ["a", "b", "c"], block: 200 }]);
      // Every key kept and the block's state the kept one: only the block's state was asked, not the final one's.
      expect(l.proved).toEqual([200 + F + 1]);
      // A key not kept yet: both states, and the key read at the final block.
      l.proved.length = 0;
      await viewAt(l.chain, kept, { contract: LIST, block: BigInt(202 + F), keys: ["a", "d"] }, l.read);
      expect(l.proved.sort((x, y) => x - y)).toEqual([202, 202 + F]);
      expect(l.reads.at(-1)).toEqual({ keys: ["d"], block: 202 });
    },
  );

  it("files no fork's answers under another's state: a reorganisation between proof and read", async () => {
    // Fork A lists "b" at block 100; after the proofs at 100 and before the read the head moves to fork B, where
    // it is listed at 101. Kept at the head, B's answer would have been filed under A's state, met again at 101.
    let fork = "A";
    const listed = (b: number) => new Set(b >= (fork === "A" ? 100 : 101) ? ["a", "b"] : ["a"]);
    const l = list(listed, undefined, () => (fork = "B"));
    const kept = keptView<string, boolean>();
    expect((await at(l, kept, 100)).get("b")).toBe(false);
    // Fork B's block 101 has the same state fork A's 100 had: its answer is read there, not taken from the last pass.
    expect((await at(l, kept, 101)).get("b")).toBe(true);
  });

  it("files a read that outlived its pass under the state it was read in, not a later pass's", async () => {
    // "b" is listed from block 200 on. A pass at 199 reads "b" at its final block (199 - F: not listed) and hangs there
    // (a pass that failed beside it left it running); a pass at 200 + F finds the final state moved, reads "b" at 200
    // (listed) and keeps it. Then the hung read comes back with 199 - F's answer, for the state it was read in.
    const l = list((b) => new Set(b >= 200 ? ["a", "b"] : ["a"]));
    let release = () => {};
    const hung = new Promise<void>((r) => (release = r));
    const slow = async (keys: string[], block: bigint) => {
      if (block === BigInt(199 - F)) await hung;
      return l.read(keys, block);
    };
    const kept = keptView<string, boolean>();
    const view = (block: number, keys: string[]) =>
      viewAt(l.chain, kept, { contract: LIST, block: BigInt(block), keys }, slow);
    await view(198, ["a"]);
    const stale = view(199, ["a", "b"]);
    await new Promise((r) => setTimeout(r, 10));
    expect((await view(200 + F, ["a", "b"])).get("b")).toBe(true);
    release();
    expect((await stale).get("b")).toBe(false);
    // The next pass, in the same state: "b" as it was read there.
    expect((await view(201 + F, ["a", "b"])).get("b")).toBe(true);
  });

  it("keeps nothing where the node does not answer eth_getProof, nor an answer that could not be read", async () => {
    const l = list(
      () => new Set(["a"]),
      (b) => b >= 50,
    );
    const kept = keptView<string, boolean>();
    for (const b of [10, 11]) await at(l, kept, b);
    expect(l.reads.map((r) => r.block)).toEqual([10, 11]);
    const unread = keptView<string, boolean>();
    const nulls = async (keys: string[], block: bigint) => {
      l.reads.push({ keys, block: Number(block) });
      return new Map(keys.map((k) => [k, k === "b" ? null : k === "a"]));
    };
    for (const b of [100, 101]) {
      const got = await viewAt(l.chain, unread, { contract: LIST, block: BigInt(b), keys: ["a", "b"] }, nulls);
      expect(got.get("b")).toBeNull();
    }
    // "a" kept from the first pass; "b" (unread) asked again.
    expect(l.reads.slice(2).map((r) => r.keys)).toEqual([["a", "b"], ["b"]]);
  });

  it("reads a proxy's view at every pass and keeps nothing: its answers are another contract's code", async () => {
    const l = list(() => new Set(["a"]), undefined, undefined, PROXY);
    const kept = keptView<string, boolean>();
    for (const b of [100, 101]) expect((await at(l, kept, b)).get("a")).toBe(true);
    expect(l.reads.map((r) => r.block)).toEqual([100, 101]);
    expect(kept.answers.size).toBe(0);
  });
});

describe("selfContained: code that reads nothing but its own storage and input", () => {
  it("tells a mapping's view from a proxy, a call out and the block; skips PUSH data and the trailer", () => {
    expect(selfContained(MAPPING)).toBe(true);
    expect(selfContained(PROXY)).toBe(false);
    // PUSH2 0xf1f4 (data, not CALL or DELEGATECALL), POP.
    expect(selfContained("0x61f1f450")).toBe(true);
    // TIMESTAMP, NUMBER, STATICCALL, BALANCE, each alone.
    for (const op of ["42", "43", "fa", "31"]) expect(selfContained(`0x6000${op}50`), op).toBe(false);
    // A trailer: CBOR map a2 ... whose bytes hold f1 and f4, its length (0x0006) in the last two bytes.
    expect(selfContained("0x600054a264f1f4f1f40006")).toBe(true);
    expect(selfContained("0x")).toBe(false);
  });
});
