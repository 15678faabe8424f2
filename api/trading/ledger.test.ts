import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freshStore } from "../../test/helpers/api.js";
import type { Address, Hex } from "viem";
import type { Db } from "../ports/store/db.js";
import {
  createLedger,
  DROP_AFTER_S,
  fingerprint,
  type Ledger,
  type PendingTrade,
  type StoredPlan,
  type TokenRef,
} from "./ledger.js";

const WALLET = "0x00000000000000000000000000000000000000Aa" as Address;
const USDG: TokenRef = {
  token: "USDG",
  address: "0x00000000000000000000000000000000000000a1" as Address,
  symbol: "USDG",
  name: "USD G",
  decimals: 6,
};
const WETH: TokenRef = {
  token: "WETH",
  address: "0x00000000000000000000000000000000000000e1" as Address,
  symbol: "WETH",
  name: "Wrapped Ether",
  decimals: 18,
};
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;

/** A plan of one swap transaction whose calldata carries `n` (so each plan has its own fingerprint). */
function plan(n: number, deadline: number): Omit<StoredPlan, "id" | "createdAt" | "usedAt"> {
  const tx = { to: "0x00000000000000000000000000000000000000Cc" as Address, data: hash(n), value: "0", chain_id: 4663 };
  return {
    keyId: 7,
    wallet: WALLET,
    kind: "trade",
    execution: "router",
    tokenIn: USDG,
    tokenOut: WETH,
    amountIn: "1000000",
    amountOutMin: "1",
    feeBps: 30,
    deadline,
    txs: [{ kind: "swap", tx }],
    summary: {},
  };
}
const pending = (n: number): PendingTrade => ({
  wallet: WALLET,
  keyId: 7,
  path: "trade",
  tokenIn: USDG,
  tokenOut: WETH,
  amountIn: "1000000",
  amountOutMin: "1",
  txHash: hash(n),
  rawTx: `0x02${n.toString(16).padStart(4, "0")}` as Hex,
});

/** The ledger on a real store of each kind, fresh for each test, with a clock the test moves (ms). */
let db: Db;
let nowMs: number;
let ledger: Ledger;
const nowS = () => Math.floor(nowMs / 1000);

describe.each(["pglite", "postgres"] as const)("the trading ledger on %s", (kind) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeEach(async () => {
    store = await freshStore(kind);
    db = store.db;
    nowMs = 1_800_000_000_000;
    ledger = createLedger({ db, clock: () => nowMs });
  });
  afterEach(() => store.drop());

  it("records a plan, found again by id and by its transaction's fingerprint for its own key only", async () => {
    const p = plan(1, nowS() + 600);
    const id = await ledger.savePlan(p);
    const stored = await ledger.planById(id);
    expect(stored).toMatchObject({
      id,
      keyId: 7,
      wallet: WALLET.toLowerCase(),
      tokenIn: USDG,
      tokenOut: WETH,
      deadline: p.deadline,
      createdAt: nowS(),
      usedAt: null,
      txs: p.txs,
    });
    expect(await ledger.planByFingerprint(7, fingerprint(p.txs[0]!.tx))).toMatchObject({
      plan: { id },
      idx: 0,
      kind: "swap",
    });
    expect(await ledger.planByFingerprint(8, fingerprint(p.txs[0]!.tx))).toBeNull();
    expect((await ledger.recentPlans(7)).map((r) => r.id)).toEqual([id]);
  });

  it("finds each transaction of a plan of several by its fingerprint, at its index and kind", async () => {
    const [approve, swap] = [plan(20, nowS() + 600).txs[0]!.tx, plan(21, nowS() + 600).txs[0]!.tx];
    const p = {
      ...plan(20, nowS() + 600),
      txs: [
        { kind: "approve", tx: approve },
        { kind: "swap", tx: swap },
        { kind: "fee", tx: approve },
      ],
    };
    const id = await ledger.savePlan(p);
    expect(await ledger.planByFingerprint(7, fingerprint(approve))).toMatchObject({
      plan: { id },
      idx: 0,
      kind: "approve",
    });
    expect(await ledger.planByFingerprint(7, fingerprint(swap))).toMatchObject({ plan: { id }, idx: 1, kind: "swap" });
    expect((await ledger.planById(id))!.txs).toEqual(p.txs);
    // The same transactions in a later plan of the key: the newest plan is the one found.
    const later = await ledger.savePlan(p);
    expect(await ledger.planByFingerprint(7, fingerprint(swap))).toMatchObject({ plan: { id: later }, idx: 1 });
  });

  it("records a client-built trade with its used plan once: the same bytes again keep nothing", async () => {
    const count = async () =>
      (await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.plans"))[0]!.n +
      "/" +
      (await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.trades"))[0]!.n;
    const p = { ...plan(30, nowS() + 60), kind: "fast" };
    const first = await ledger.recordClientBuilt(p, pending(30));
    expect(first).toEqual({ planId: expect.any(Number) });
    const { planId } = first as { planId: number };
    expect(await ledger.planById(planId)).toMatchObject({ id: planId, kind: "fast", usedAt: nowS(), txs: p.txs });
    expect(await ledger.tradeByHash(hash(30))).toMatchObject({ planId, keyId: 7, status: "pending", relay: "sending" });
    expect(await count()).toBe("1/1");
    // A repeat, and two more at once: no second trade, no plan left behind.
    expect(await ledger.recordClientBuilt(p, pending(30))).toBe(false);
    expect(await Promise.all([1, 2].map(() => ledger.recordClientBuilt(p, pending(30))))).toEqual([false, false]);
    expect(await count()).toBe("1/1");
    // Other bytes are another trade with a plan of their own.
    const other = await ledger.recordClientBuilt(p, pending(31));
    expect(other).toEqual({ planId: expect.any(Number) });
    expect((other as { planId: number }).planId).not.toBe(planId);
    expect(await count()).toBe("2/2");
  });

  it("claims a plan once for relay, and a lost send's bytes once for a resend", async () => {
    const id = await ledger.savePlan(plan(2, nowS() + 600));
    expect(await ledger.claimForRelay(id, pending(2))).toBe(true);
    expect(await ledger.claimForRelay(id, pending(3))).toBe(false); // the plan is used
    expect(await ledger.tradeByHash(hash(2))).toMatchObject({
      planId: id,
      keyId: 7,
      status: "pending",
      relay: "sending",
    });
    await ledger.markRelay(hash(2), "lost");
    expect(await ledger.claimResend(hash(2), { staleBefore: nowS() - 30 })).toBe(pending(2).rawTx);
    // The winner's send is under way again: nobody else gets the bytes.
    expect(await ledger.claimResend(hash(2), { staleBefore: nowS() - 30 })).toBeNull();
  });

  it("refuses a resend past the plan's deadline (the bytes could only revert)", async () => {
    const id = await ledger.savePlan(plan(4, nowS() + 60));
    expect(await ledger.claimForRelay(id, pending(4))).toBe(true);
    await ledger.markRelay(hash(4), "lost");
    nowMs += 120_000;
    expect(await ledger.claimResend(hash(4), { staleBefore: nowS() - 30 })).toBeNull();
    expect(await ledger.tradeByHash(hash(4))).toMatchObject({ relay: "lost" });
  });

  it("lists the wallet's trades newest first, a page at a time", async () => {
    for (const n of [10, 11, 12]) {
      const id = await ledger.savePlan(plan(n, nowS() + 600));
      expect(await ledger.claimForRelay(id, pending(n))).toBe(true);
      nowMs += 1_000;
    }
    const first = await ledger.list(WALLET, { limit: 2, before: null, refused: false });
    expect(first.trades.map((t) => t.tx_hash)).toEqual([hash(12), hash(11)]);
    expect(first.trades[0]).toMatchObject({
      path: "trade",
      status: "pending",
      amount_in: "1000000",
      amount_out: "1",
      amount_out_kind: "minimum",
      block: null,
      session_id: null,
    });
    expect(first.next_before).toBe(first.trades[1]!.id);
    const second = await ledger.list(WALLET, { limit: 2, before: first.next_before, refused: false });
    expect(second.trades.map((t) => t.tx_hash)).toEqual([hash(10)]);
    expect(second.next_before).toBeNull();
    // Past the drop window a pending trade is dropped: shown only with refused=1.
    nowMs += (DROP_AFTER_S + 10) * 1000;
    expect((await ledger.list(WALLET, { limit: 5, before: null, refused: false })).trades).toEqual([]);
    expect((await ledger.list(WALLET, { limit: 5, before: null, refused: true })).trades.map((t) => t.status)).toEqual([
      "dropped",
      "dropped",
      "dropped",
    ]);
  });

  it("records a refused trade with its code, listed only when refused ones are asked for", async () => {
    await ledger.recordRefused({
      wallet: WALLET,
      keyId: 7,
      path: "trade",
      code: "SLIPPAGE_TOO_HIGH",
      tokenIn: USDG,
      tokenOut: null,
      amountIn: "5",
      sessionId: "s1",
    });
    expect((await ledger.list(WALLET, { limit: 5, before: null, refused: false })).trades).toEqual([]);
    const { trades } = await ledger.list(WALLET, { limit: 5, before: null, refused: true });
    expect(trades).toEqual([
      {
        id: trades[0]!.id,
        time: nowS(),
        path: "trade",
        status: "refused",
        token_in: USDG,
        token_out: null,
        amount_in: "5",
        amount_out: null,
        amount_out_kind: null,
        amount_out_min: null,
        tx_hash: null,
        block: null,
        session_id: "s1",
        code: "SLIPPAGE_TOO_HIGH",
      },
    ]);
    // A refused call traded nothing: its token is not among the wallet's traded tokens.
    expect(await ledger.tradedTokens(WALLET, [], 10)).toEqual([]);
  });
});
