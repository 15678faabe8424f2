import type { PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { keptView, viewAt } from "./keptViews.js";

const LIST = "0x00000000000000000000000000000000000000bb";

/** A contract whose storage root is `roots[block]` (eth_getProof fails where `roots` has none). */
function node(roots: Record<number, string>) {
  const chain = {
    getProof: async ({ blockNumber }: { blockNumber: bigint }) => {
      const root = roots[Number(blockNumber)];
      if (!root) throw new Error("the method eth_getProof does not exist");
      return { storageHash: root, codeHash: "0xc0de" };
    },
  };
  return chain as unknown as PublicClient;
}

/** A view over `listed` that counts the keys it is asked (null for a key in `unread`). */
function view(listed: Set<string>, unread: Set<string> = new Set()) {
  const asked: string[] = [];
  const read = async (keys: string[]) => {
    asked.push(...keys);
    return new Map(keys.map((k) => [k, unread.has(k) ? null : listed.has(k)]));
  };
  return { asked, read };
}

describe("view answers kept while their contract is unchanged (issue 29 point 6)", () => {
  it("reads only new keys while the storage root stays, and every key once it moves", async () => {
    const kept = keptView<string, boolean>();
    const chain = node({ 1: "0xaa", 2: "0xaa", 3: "0xbb" });
    const listed = new Set(["a"]);
    const v = view(listed);
    expect([...(await viewAt(chain, kept, { contract: LIST, block: 1n, keys: ["a", "b"] }, v.read))]).toEqual([
      ["a", true],
      ["b", false],
    ]);
    expect(await viewAt(chain, kept, { contract: LIST, block: 2n, keys: ["a", "b", "c"] }, v.read)).toEqual(
      new Map([
        ["a", true],
        ["b", false],
        ["c", false],
      ]),
    );
    expect(v.asked).toEqual(["a", "b", "c"]);
    // The list changed (b added): its root moved, and every answer is read again.
    listed.add("b");
    expect((await viewAt(chain, kept, { contract: LIST, block: 3n, keys: ["a", "b", "c"] }, v.read)).get("b")).toBe(
      true,
    );
    expect(v.asked).toEqual(["a", "b", "c", "a", "b", "c"]);
  });

  it("keeps nothing where the node does not answer eth_getProof, nor an answer that could not be read", async () => {
    const kept = keptView<string, boolean>();
    const v = view(new Set(["a"]), new Set(["b"]));
    const silent = node({});
    for (const block of [1n, 2n]) await viewAt(silent, kept, { contract: LIST, block, keys: ["a", "b"] }, v.read);
    expect(v.asked).toEqual(["a", "b", "a", "b"]);
    const proven = node({ 3: "0xaa", 4: "0xaa" });
    for (const block of [3n, 4n]) {
      const got = await viewAt(proven, kept, { contract: LIST, block, keys: ["a", "b"] }, v.read);
      expect(got.get("b")).toBeNull();
    }
    // "a" kept from block 3; "b" (unread) asked again at 4.
    expect(v.asked.slice(4)).toEqual(["a", "b", "b"]);
  });
});
