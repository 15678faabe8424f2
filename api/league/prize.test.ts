import { describe, expect, it } from "vitest";
import { ledgerIds, splitIds, type MinedTrade } from "./prize.js";

const ledger = (...ids: string[]) => ids.map((id) => ({ trade: { id } }) as unknown as MinedTrade);

describe("the trade ids a live board keeps for its books route", () => {
  it("come back as each ledger's ids in its order, an empty ledger as none", () => {
    const ledgers = new Map([
      ["le_a", ledger("17", "3", "250000")],
      ["le_b", ledger()],
      ["le_c", ledger("9")],
    ]);
    const stored = JSON.parse(JSON.stringify(ledgerIds(ledgers)));
    expect(splitIds(stored)).toEqual({ le_a: ["17", "3", "250000"], le_b: [], le_c: ["9"] });
  });

  it("read an answer stored as lists before the texts as it is", () => {
    expect(splitIds({ le_a: ["4", "5"], le_b: [], le_c: "6,7" })).toEqual({
      le_a: ["4", "5"],
      le_b: [],
      le_c: ["6", "7"],
    });
  });
});
