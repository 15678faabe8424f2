import { describe, expect, it } from "vitest";
import {
  decodeFunctionData,
  EstimateGasExecutionError,
  ExecutionRevertedError,
  erc20Abi,
  keccak256,
  parseTransaction,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type Hex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { localPlatformSigner } from "../ports/platformSigner.js";
import { openMigratedMemory } from "../ports/store/memory.js";
import type { Db } from "../ports/store/db.js";
import { payOwed, type PayDeps } from "./pay.js";

const TOKEN = "0x00000000000000000000000000000000000000aa";
const LIST = "0x00000000000000000000000000000000000000bb";
const R1 = "0x0000000000000000000000000000000000000111";
const R2 = "0x0000000000000000000000000000000000000222";
const account = privateKeyToAccount(`0x${"11".repeat(32)}`);
const signer = localPlatformSigner(account);

type Receipt = { transactionHash: Hex; status: "success" | "reverted"; blockNumber: bigint; nonce: number };

/**
 * The reserve wallet's chain as the payouts see it: a nonce, a pool that mines at once or holds
 * what is sent (`mine`), receipts by hash, the transfers that moved the token, and viem's habit of
 * answering a wait with the receipt of the transaction that replaced the one waited for.
 */
function fakeChain() {
  const c = {
    nonce: 5,
    mine: true,
    fee: 10n ** 9n,
    receiptsDown: false,
    listed: new Set<string>(),
    frozen: new Set<string>(),
    paused: false,
    pool: new Map<Hex, Hex>(),
    receipts: new Map<Hex, Receipt>(),
    paid: [] as { to: string; amount: bigint }[],
  };
  const mineRaw = (raw: Hex) => {
    const tx = parseTransaction(raw);
    if (tx.nonce !== c.nonce) throw new Error(`nonce too low: ${tx.nonce} < ${c.nonce}`);
    const hash = keccak256(raw);
    c.receipts.set(hash, {
      transactionHash: hash,
      status: "success",
      blockNumber: BigInt(100 + c.nonce),
      nonce: c.nonce,
    });
    c.nonce++;
    c.pool.delete(hash);
    if (tx.to?.toLowerCase() === TOKEN && tx.data) {
      const { args } = decodeFunctionData({ abi: erc20Abi, data: tx.data });
      c.paid.push({ to: (args[0] as string).toLowerCase(), amount: args[1] as bigint });
    }
    return hash;
  };
  const client = {
    getTransactionCount: async () => c.nonce,
    getTransactionReceipt: async ({ hash }: { hash: Hex }) => {
      if (c.receiptsDown) throw new Error("HTTP request failed: 503");
      const r = c.receipts.get(hash);
      if (!r) throw new TransactionReceiptNotFoundError({ hash });
      return r;
    },
    sendRawTransaction: async ({ serializedTransaction: raw }: { serializedTransaction: Hex }) => {
      if (parseTransaction(raw).nonce! < c.nonce) throw new Error("nonce too low");
      if (c.mine) return mineRaw(raw);
      c.pool.set(keccak256(raw), raw);
      return keccak256(raw);
    },
    waitForTransactionReceipt: async ({ hash }: { hash: Hex }) => {
      const own = c.receipts.get(hash);
      if (own) return own;
      // viem answers a replaced transaction with its replacement's receipt (same sender and nonce).
      const raw = c.pool.get(hash);
      const nonce = raw ? parseTransaction(raw).nonce : undefined;
      const other = [...c.receipts.values()].find((r) => r.nonce === nonce);
      if (other) return other;
      throw new WaitForTransactionReceiptTimeoutError({ hash });
    },
    // Fees move between passes: a transaction signed again is not the same bytes.
    estimateFeesPerGas: async () => ({ maxFeePerGas: (c.fee += 1n), maxPriorityFeePerGas: 10n ** 8n }),
    getChainId: async () => 4663,
    // A token that freezes some recipients: the transfer's estimate reverts (the reserve itself always receives).
    estimateGas: async ({ data }: { data: Hex }) => {
      const { args } = decodeFunctionData({ abi: erc20Abi, data });
      if (c.frozen.has((args[0] as string).toLowerCase()) || c.paused)
        throw new EstimateGasExecutionError(new ExecutionRevertedError({ message: "frozen" }), {});
      return 50_000n;
    },
    readContract: async () => 10n ** 24n,
    getBlockNumber: async () => 1_000n,
    multicall: async ({ contracts }: { contracts: { args: readonly [string] }[] }) =>
      contracts.map((x) => c.listed.has(x.args[0].toLowerCase())),
  };
  return {
    c,
    client,
    /** Another transaction of the reserve wallet (not a payout) mined at the next nonce. */
    other() {
      const hash = keccak256(`0x${c.nonce.toString(16).padStart(2, "0")}ee`);
      c.receipts.set(hash, { transactionHash: hash, status: "success", blockNumber: 99n, nonce: c.nonce });
      c.nonce++;
    },
    /** Mines what waits in the pool at the wallet's nonce and satisfies `which`. */
    minePooled(which: (tx: ReturnType<typeof parseTransaction>) => boolean) {
      const raw = [...c.pool.values()].find((r) => parseTransaction(r).nonce === c.nonce && which(parseTransaction(r)));
      if (!raw) throw new Error("nothing pooled to mine");
      return mineRaw(raw);
    },
  };
}

async function seeded(places: [number, string, string][]): Promise<Db> {
  const db = await openMigratedMemory("pay");
  const book = { shares: ["500", "300", "200"], reserve: "1000", reserve_after: "1000", status: "provisional" };
  await db.query("INSERT INTO app.league_ledgers (season, ledger) VALUES (1, $1)", [JSON.stringify(book)]);
  for (const [place, recipient, amount] of places)
    await db.query(
      "INSERT INTO app.league_payouts (season, place, entry_id, agent_id, recipient, token, amount, status, " +
        "created_at) VALUES (1, $1, $2, $3, $4, $5, $6, 'planned', 0)",
      [place, `e${place}`, place, recipient, TOKEN, amount],
    );
  return db;
}

const depsOf = (db: Db, chain: ReturnType<typeof fakeChain>["client"]) =>
  ({
    db,
    chain,
    signer,
    clock: () => 1_000_000,
    config: { contracts: { sanctionsList: LIST } },
  }) as unknown as PayDeps;

const rows = (db: Db) =>
  db.query<{ place: number; status: string; tx_hash: string | null; why: string | null }>(
    "SELECT place, status, tx_hash, why FROM app.league_payouts ORDER BY place",
  );

describe("a stored payout never stalls the payouts after it", () => {
  it(
    "holds a place whose nonce another transaction spent (it may have paid it), never signing it again; the places " +
      "after it are paid",
    async () => {
      const db = await seeded([
        [1, R1, "500"],
        [2, R2, "300"],
      ]);
      const f = fakeChain();
      const d = depsOf(db, f.client);
      f.c.mine = false;
      // Signed at nonces 5 and 6; the first waits in the pool and is not mined.
      await payOwed(d).catch(() => undefined);
      expect((await rows(db)).map((r) => r.status)).toEqual(["sent", "sent"]);
      const first = (await rows(db))[0]!.tx_hash;
      // Another transaction takes nonce 5 (say the operator's re-send of place 1's transfer with a higher fee):
      // place 1's bytes can never mine, and signing it again could pay it twice.
      f.other();
      f.c.mine = true;
      await payOwed(d);
      const after = await rows(db);
      expect(after.map((r) => r.status)).toEqual(["held", "mined"]);
      expect(after[0]!.tx_hash).toBe(first);
      expect(after[0]!.why).toMatch(/^held: nonce 5 of the reserve wallet was spent by a transaction that is not/);
      expect(f.c.paid).toEqual([{ to: R2, amount: 300n }]);
      // A later pass signs nothing for it.
      await payOwed(d);
      expect(f.c.paid).toHaveLength(1);
      expect((await rows(db))[0]!.status).toBe("held");
    },
  );

  it("holds a place whose cancel mined after its wait, and signs no second cancel at its nonce", async () => {
    const db = await seeded([[1, R1, "500"]]);
    const f = fakeChain();
    const d = depsOf(db, f.client);
    f.c.mine = false;
    await payOwed(d).catch(() => undefined);
    // Listed since it was signed: its nonce goes to a cancel, which is not mined within the wait.
    f.c.listed.add(R1);
    await payOwed(d).catch(() => undefined);
    expect((await rows(db))[0]!.status).toBe("sent");
    f.minePooled((tx) => tx.to?.toLowerCase() === account.address.toLowerCase());
    // Fees rose past twice the payout's since: a cancel signed again would be other bytes at a spent nonce.
    f.c.fee *= 10n;
    await payOwed(d);
    const [r] = await rows(db);
    expect(r!.status).toBe("held");
    expect(r!.why).toMatch(/^held: its recipient 0x0+111 is on the sanctions list .* cancelled at nonce 5/);
    expect(f.c.paid).toEqual([]);
    const [{ n }] = (await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM app.league_ledgers WHERE settled_at IS NOT NULL",
    )) as [{ n: number }];
    expect(n).toBe(1);
  });

  it("holds a place the token refuses to receive, paying the places after; a paused token holds none", async () => {
    const db = await seeded([
      [1, R1, "500"],
      [2, R2, "300"],
    ]);
    const f = fakeChain();
    const d = depsOf(db, f.client);
    f.c.paused = true;
    await expect(payOwed(d)).rejects.toThrow();
    expect((await rows(db)).map((r) => r.status)).toEqual(["planned", "planned"]);
    f.c.paused = false;
    f.c.frozen.add(R1);
    await payOwed(d);
    const after = await rows(db);
    expect(after.map((r) => r.status)).toEqual(["held", "mined"]);
    expect(after[0]!.why).toMatch(/^held: the token refuses a transfer to 0x0+111/);
    expect(f.c.paid).toEqual([{ to: R2, amount: 300n }]);
  });

  it("stores nothing it signed while the reserve wallet's nonce moved (another pass paid meanwhile)", async () => {
    const db = await seeded([[1, R1, "500"]]);
    const f = fakeChain();
    // Another instance's payout mines at nonce 5 while this pass signs place 1 at nonce 5.
    const racing = { ...signer, signTransaction: async (tx: never) => (f.other(), signer.signTransaction(tx)) };
    const d = { ...depsOf(db, f.client), signer: racing } as PayDeps;
    await expect(payOwed(d)).rejects.toThrow(/nonce moved from 5 to 6 while this pass signed; nothing stored/);
    expect(await rows(db)).toEqual([{ place: 1, status: "planned", tx_hash: null, why: null }]);
    expect(f.c.paid).toEqual([]);
    // The next pass signs at the nonce the wallet is at now and pays the place once.
    await payOwed(depsOf(db, f.client));
    expect((await rows(db)).map((r) => r.status)).toEqual(["mined"]);
    expect(f.c.paid).toEqual([{ to: R1, amount: 500n }]);
  });

  it("never takes an unreadable receipt for one not mined: nothing is signed again", async () => {
    const db = await seeded([[1, R1, "500"]]);
    const f = fakeChain();
    const d = depsOf(db, f.client);
    f.c.mine = false;
    await payOwed(d).catch(() => undefined);
    const [sent] = await rows(db);
    f.other();
    f.c.receiptsDown = true;
    await expect(payOwed(d)).rejects.toThrow(/503/);
    expect(await rows(db)).toEqual([sent]);
  });
});
