import { describe, expect, it } from "vitest";
import type { PublicClient } from "viem";
import {
  cannotAnswer,
  nativeMovesOf,
  NATIVE_TOKEN,
  NONCES_AT_ONCE,
  seenDespite,
  statesAt,
  type CallFrame,
} from "./native.js";
import { linksOf, prizeStandings, sharesOf, type BookNumbers, type PrizeEntry } from "./rules.js";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const OWNER = addr(0xa1);
const [W1, W2, W3] = [addr(0xb1), addr(0xb2), addr(0xb3)];
const SPLITTER = addr(0xc1);
const FORWARDER = addr(0xc2);
const REVERTS = addr(0xc3);
const LIBRARY = addr(0xc4);
const HUB = addr(0xeeee);

/**
 * A callTracer trace as anvil answers it (debug_traceBlockByNumber, one transaction): the owner
 * pays a forwarder, which pays a splitter, which pays W1 and W2 in internal calls; a payment to a
 * contract that reverts moves nothing, nor does anything under it; a delegatecall shows its
 * caller's value without moving it.
 */
const trace: CallFrame = {
  type: "CALL",
  from: OWNER,
  to: FORWARDER,
  value: "0x64",
  calls: [
    {
      type: "CALL",
      from: FORWARDER,
      to: SPLITTER,
      value: "0x64",
      calls: [
        { type: "CALL", from: SPLITTER, to: W1, value: "0x32" },
        { type: "DELEGATECALL", from: SPLITTER, to: LIBRARY, value: "0x64" },
        {
          type: "CALL",
          from: SPLITTER,
          to: REVERTS,
          value: "0x32",
          error: "execution reverted",
          calls: [{ type: "CALL", from: REVERTS, to: W3, value: "0x32" }],
        },
        { type: "STATICCALL", from: SPLITTER, to: W3 },
        { type: "CALL", from: SPLITTER, to: W2, value: "0x0" },
        { type: "CALL", from: SPLITTER, to: W2, value: "0x19" },
      ],
    },
  ],
};
const at = { tx_hash: "0xabc", block: 7, tx_index: 2 };

function entry(i: number, wallet: string, owner: string): PrizeEntry {
  return {
    entry_id: `le_${i}`,
    agent_id: i,
    wallet,
    owner,
    agent_wallet: addr(0xd0 + i),
    token: addr(1),
    symbol: `A${i}`,
    name: `Agent ${i}`,
    confirmed: true,
    confirmed_at: 10,
    entered_at: i,
    left_at: null,
    house: false,
    sanctioned: false,
    vault_wallet: addr(0xd0 + i),
  };
}
const book = (profit: number): BookNumbers => ({
  profit_usd: profit,
  score: profit,
  return_pct: null,
  max_dd_pct: null,
  capital_usd: 0,
  trades: 5,
  active_days: 3,
  unvalued: 0,
  open_unpriced: 0,
  price_outliers: 0,
  uncredited_usd: 0,
  unmarked_realised_usd: 0,
});

describe("native ETH moves from a callTracer trace", () => {
  it("keeps each value-carrying call that did not revert, nested ones included, in call order", () => {
    const all = new Set([OWNER, W1, W2, W3, FORWARDER, SPLITTER, REVERTS, LIBRARY]);
    const moves = nativeMovesOf(trace, at, all);
    expect(moves.map((m) => [m.from, m.to, m.amount])).toEqual([
      [OWNER, FORWARDER, 100n],
      [FORWARDER, SPLITTER, 100n],
      [SPLITTER, W1, 50n],
      [SPLITTER, W2, 25n],
    ]);
    expect(moves.every((m) => m.token === NATIVE_TOKEN && m.tx_hash === "0xabc" && m.block === 7)).toBe(true);
    // Before the transaction's logs (log_index 0 and up), in call order.
    expect(moves.every((m, i) => m.log_index < 0 && (i === 0 || m.log_index > moves[i - 1]!.log_index))).toBe(true);
  });

  it("keeps only the moves that touch the addresses asked about", () => {
    expect(nativeMovesOf(trace, at, new Set([W2, W3])).map((m) => [m.from, m.to])).toEqual([[SPLITTER, W2]]);
    expect(nativeMovesOf({ ...trace, error: "out of gas" }, at, new Set([OWNER, W1]))).toEqual([]);
  });

  it("links three wallets that one owner funded in ETH into one cluster with one paid place", () => {
    // The owner funds W1, W2, W3 in internal calls of one transaction; twelve entries trade.
    const funding: CallFrame = {
      type: "CALL",
      from: OWNER,
      to: SPLITTER,
      value: "0x3",
      calls: [W1, W2, W3].map((to) => ({ type: "CALL", from: SPLITTER, to, value: "0x1" })),
    };
    const entries = [
      entry(1, W1, addr(0xe1)),
      entry(2, W2, addr(0xe2)),
      entry(3, W3, addr(0xe3)),
      ...Array.from({ length: 9 }, (_, i) => entry(4 + i, addr(0xf0 + i), addr(0x1f0 + i))),
    ];
    const addresses = new Set(entries.flatMap((e) => [e.wallet, e.owner, e.agent_wallet]));
    const moves = nativeMovesOf(funding, at, addresses);
    const links = linksOf(entries, moves, new Set([HUB]));
    expect(links.map((l) => [l.kind, l.a, l.b])).toEqual([
      ["funder", "le_1", "le_2"],
      ["funder", "le_1", "le_3"],
    ]);
    expect(links[0]!.evidence).toMatchObject({ from: SPLITTER, token: NATIVE_TOKEN, tx_hash: "0xabc" });
    const st = prizeStandings({
      entries,
      books: new Map(entries.map((e, i) => [e.entry_id, book(100 - i)])),
      links,
      decided: true,
      ends: 1_000,
      checked_at: 1_000,
      shares: sharesOf(1_000_000n),
    });
    expect(st.rows.filter((r) => r.place !== null).map((r) => r.entry_id)).toEqual(["le_1", "le_4", "le_5"]);
    expect(st.outcome.active_clusters).toBe(10);
    // Through a hub (an exchange) the same funding links nothing.
    const viaHub = nativeMovesOf(
      { ...funding, to: HUB, calls: funding.calls!.map((c) => ({ ...c, from: HUB })) },
      at,
      addresses,
    );
    expect(linksOf(entries, viaHub, new Set([HUB]))).toEqual([]);
  });

  it("flags rule LINKS, never passes it, when the node could not answer", () => {
    const entries = [entry(1, W1, OWNER)];
    const rules = (unread: string | null) =>
      prizeStandings({
        entries,
        books: new Map([["le_1", book(1)]]),
        links: [],
        decided: true,
        ends: 1_000,
        checked_at: 1_000,
        shares: null,
        links_unread: unread,
      }).rows[0]!.eligibility;
    expect(rules(null).rules.find((r) => r.rule === "LINKS")!.status).toBe("pass");
    const flagged = rules("the node does not answer debug_traceBlockByNumber");
    expect(flagged.rules.find((r) => r.rule === "LINKS")).toMatchObject({
      status: "flag",
      reason: expect.stringMatching(/debug_traceBlockByNumber.*held for review/),
    });
    expect(flagged.eligible).toBe(false);
  });

  it("tells a node without the method from a failed request", () => {
    expect(cannotAnswer(Object.assign(new Error("x"), { code: -32601 }))).toBe(true);
    expect(cannotAnswer(new Error("outer", { cause: Object.assign(new Error("inner"), { code: -32601 }) }))).toBe(true);
    expect(cannotAnswer(new Error("missing trie node 0xabc (path )"))).toBe(true);
    expect(cannotAnswer(new Error("fetch failed"))).toBe(false);
  });
});

describe("league:verify leaves out what the service's bounded scan skipped", () => {
  it("drops moves in a skipped block, and in a skipped range those only its addresses would have seen", () => {
    const m = (block: number, from: string, to: string) =>
      ({ from, to, token: NATIVE_TOKEN, amount: 1n, tx_hash: "0x1", block, tx_index: 0, log_index: -1 }) as const;
    const [a, b, x] = ["0xa", "0xb", "0xe"];
    const moves = [m(5, x, a), m(7, x, a), m(7, a, b), m(9, x, b)];
    const skips = { blocks: [5], ranges: [{ from: 6, to: 8, addresses: [a] }] };
    expect(seenDespite(moves, skips, new Set([a, b])).map((t) => [t.block, t.from, t.to])).toEqual([
      [7, a, b],
      [9, x, b],
    ]);
  });
});

describe("the scan's nonce probes go through a batch reader where given (issue 29 point 6)", () => {
  const addresses = [W1, W2, W3];
  /** A client answering each address's nonce (its last byte) and balance (ten times that), counting its calls. */
  /** `fail` from the call numbered `failFrom` on (the first, unless given). */
  const node = (fail?: Error, failFrom = 0) => {
    const calls = { nonces: 0 };
    const client = {
      getTransactionCount: async ({ address }: { address: string }) => {
        if (fail && calls.nonces++ >= failFrom) throw fail;
        if (!fail) calls.nonces++;
        return Number.parseInt(address.slice(-2), 16);
      },
      getBalance: async ({ address }: { address: string }) => 10n * BigInt(Number.parseInt(address.slice(-2), 16)),
    };
    return { calls, client: client as unknown as PublicClient };
  };
  const expected = new Map(
    addresses.map((a) => [a, `${Number.parseInt(a.slice(-2), 16)}:${10 * Number.parseInt(a.slice(-2), 16)}`]),
  );

  it("reads every nonce through the reader, none one by one", async () => {
    const [chain, reader] = [node(), node()];
    expect(await statesAt(chain.client, addresses, 5n, reader.client)).toEqual(expected);
    expect([chain.calls.nonces, reader.calls.nonces]).toEqual([0, 3]);
  });

  it("reads one by one when the node refuses the batch, and the states are the same", async () => {
    const [chain, reader] = [node(), node(new Error("batch too large"))];
    expect(await statesAt(chain.client, addresses, 5n, reader.client)).toEqual(expected);
    expect(chain.calls.nonces).toBe(3);
  });

  it("reads one by one only the nonces a failed batch left: the parts already answered stand", async () => {
    const many = Array.from(
      { length: NONCES_AT_ONCE * 2 + 7 },
      (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`,
    );
    // The second part's batch fails (a node that timed out on it): the first part's answers are kept.
    const [chain, reader] = [node(), node(new Error("request timed out"), NONCES_AT_ONCE)];
    const states = await statesAt(chain.client, many, 5n, reader.client);
    expect(states.size).toBe(many.length);
    for (const a of many) expect(states.get(a)!.split(":")[0]).toBe(String(Number.parseInt(a.slice(-2), 16)));
    expect(chain.calls.nonces).toBe(many.length - NONCES_AT_ONCE);
  });

  it("reads one by one whatever the batch's refusal says, and a node without the state says so there", async () => {
    // A gateway's refusal of batches can read like missing state: the reads one by one decide.
    const [chain, refusing] = [node(), node(new Error("batch requests are not supported"))];
    expect(await statesAt(chain.client, addresses, 5n, refusing.client)).toEqual(expected);
    const [pruned, reader] = [node(new Error("missing trie node 0xab")), node(new Error("missing trie node 0xab"))];
    await expect(statesAt(pruned.client, addresses, 5n, reader.client)).rejects.toThrow(/missing trie node/);
  });
});
