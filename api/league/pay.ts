/**
 * The league's payouts (moved out of settle.ts): each decided place paid from the reserve wallet,
 * oldest season first, then place, its signed bytes stored before they are sent.
 */
import {
  BaseError,
  encodeFunctionData,
  ExecutionRevertedError,
  erc20Abi,
  getAddress,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { FINALITY_BLOCKS, isFinal } from "../../lib/finality.js";
import { recoverTransactionAddress } from "../../lib/secp.js";
import type { PlatformSigner } from "../ports/platformSigner.js";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import { reserveAfter, type PayoutBook } from "./reserve.js";
import type { Common } from "../ports/common.js";
import type { Db } from "../ports/store/db.js";

/** What paying needs (the settler's deps carry it): the store, the chain, the reserve wallet's signer. */
export type PayDeps = Pick<Common, "config" | "chain" | "clock" | "logger"> & {
  db: Db;
  /** The reserve wallet's signer (the platform signer port); null: payouts stay planned. */
  signer: PlatformSigner | null;
};

const nowS = (d: Pick<PayDeps, "clock">) => Math.floor(d.clock() / 1000);

type PayoutRow = {
  season: number;
  place: number;
  recipient: string;
  token: string;
  amount: string;
  status: PayoutStatus;
  raw_tx: string | null;
  tx_hash: string | null;
  /** A cancel at the payout's nonce (a self-transfer), stored before it is sent; null: none signed. */
  cancel_raw: string | null;
  cancel_hash: string | null;
  why: string | null;
};

/**
 * A league payout's status (SPEC league seasons `payouts[].status` and `winners[].status`):
 * `planned` until its transfer is signed (owed: `why` says what it waits for), `sent` once signed
 * and stored (answered as `planned` until mined), `mined` once the chain shows it, and `held` when
 * its recipient is on the sanctions list read right before signing or before a re-send: the
 * transfer is never sent (a stored one is cancelled at its nonce), its share stays in the reserve
 * wallet set aside (no later season's budget counts it), and it stays held; an operator decides.
 */
export type PayoutStatus = "planned" | "sent" | "mined" | "held";
/** A payout that no pass sends again: mined, or held. */
const DONE = ["mined", "held"];
/** Every payout is paid in this order: oldest season first, then place. */
const IN_ORDER = "ORDER BY season, place";

export const NO_SIGNER_WHY =
  "owed: no reserve signer is configured (LEAGUE_SIGNER_URL); paid in order, oldest season first, once one is";

/**
 * Pays every owed place from the reserve wallet, oldest season first, then place. A transfer signed
 * earlier is resolved first (deliver): mined, held once its cancel mined, or planned again when its
 * nonce was spent by another transaction, so no stored transfer blocks the places after it for
 * good; nothing new is signed while one still waits at an open nonce. Then the longest run of
 * owed places the wallet's balance covers is signed (consecutive nonces) and stored before the first
 * is sent, so a settler that dies mid-way sends the same bytes again and pays each place once; the
 * rest stays owed, in order. A ledger is settled once each of its places is mined or held.
 */
export async function payOwed(d: PayDeps, hold: () => Promise<boolean> = async () => true): Promise<void> {
  const sent = () => d.db.query<PayoutRow>(`SELECT * FROM app.league_payouts WHERE status = 'sent' ${IN_ORDER}`);
  /**
   * Resolves the stored transfers in nonce order; false at the first still waiting at an open nonce (the later
   * ones wait behind it). One mined but not yet final does not hold back the sends after it.
   */
  const deliverAll = async (signer: PlatformSigner) => {
    for (const r of await sent()) {
      // Each send waits up to a minute: the lease is renewed before it (another instance may have taken over).
      if (!(await hold())) return false;
      if ((await deliver(d, signer, r)) === "open") return false;
    }
    return true;
  };
  if (d.signer) {
    if (!(await deliverAll(d.signer)) || (await sent()).length) return settleLedgers(d);
    // The deliveries above may have outlasted the lease: no signing without it.
    if (!(await hold())) return;
    if (await signOwed(d, d.signer)) await deliverAll(d.signer);
  } else {
    const owed = await d.db.query<{ season: number; place: number }>(
      "UPDATE app.league_payouts SET why = $1 WHERE status = 'planned' AND why IS DISTINCT FROM $1 " +
        "RETURNING season, place",
      [NO_SIGNER_WHY],
    );
    if (owed.length) d.logger?.warn({ owed }, "league places owed: no reserve signer is configured");
  }
  await settleLedgers(d);
}

/** Settles each ledger whose places are all mined or held: what was paid, from the chain's receipts. */
async function settleLedgers(d: PayDeps) {
  const open = await d.db.query<{ season: number; ledger: string }>(
    "SELECT season, ledger FROM app.league_ledgers l WHERE settled_at IS NULL AND NOT EXISTS (SELECT 1 FROM " +
      "app.league_payouts p WHERE p.season = l.season AND p.status <> ALL($1)) ORDER BY season",
    [DONE],
  );
  for (const l of open) {
    const all = await d.db.query<PayoutRow>("SELECT * FROM app.league_payouts WHERE season = $1 ORDER BY place", [
      l.season,
    ]);
    const book = JSON.parse(l.ledger) as PayoutBook;
    const paid = [1, 2, 3].map((p) => BigInt(all.find((r) => r.place === p && r.status === "mined")?.amount ?? "0"));
    const total = paid.reduce((a, b) => a + b, 0n);
    const settled: PayoutBook = {
      ...book,
      paid: paid.map(String),
      paid_total: total.toString(),
      reserve_after: reserveAfter(book, all).toString(),
      status: book.status === "incomplete" ? "incomplete" : "settled",
    };
    await d.db.query(
      "UPDATE app.league_ledgers SET ledger = $2, settled_at = $3 WHERE season = $1 AND settled_at IS NULL",
      [l.season, JSON.stringify(settled), nowS(d)],
    );
  }
}

/**
 * The longest run of `rows` (in order) that `balance` covers, each recipient read on the sanctions
 * list right before: a listed one is held (its amount frees room for the next), and the first place
 * the balance does not cover stops the run (a later, smaller place never goes before it).
 */
export async function payableInOrder<R extends Pick<PayoutRow, "amount" | "recipient" | "token">>(
  rows: R[],
  balance: bigint,
  listedOf: (recipients: string[]) => Promise<{ listed: boolean[]; block: bigint }>,
): Promise<{ pay: R[]; held: { r: R; block: bigint }[]; owed: R[] }> {
  const pay: R[] = [];
  const held: { r: R; block: bigint }[] = [];
  let rest = rows;
  let left = balance;
  for (;;) {
    const next: R[] = [];
    let room = left;
    for (const r of rest) {
      if (r.token !== rows[0]!.token || BigInt(r.amount) > room) break;
      next.push(r);
      room -= BigInt(r.amount);
    }
    if (!next.length) break;
    const { listed, block } = await listedOf(next.map((r) => r.recipient));
    next.forEach((r, i) => {
      if (listed[i]) held.push({ r, block });
      else {
        pay.push(r);
        left -= BigInt(r.amount);
      }
    });
    rest = rest.slice(next.length);
    if (!listed.some(Boolean)) break;
  }
  return { pay, held, owed: rest };
}

const transferCall = (r: Pick<PayoutRow, "token" | "recipient" | "amount">) => ({
  to: getAddress(r.token),
  value: 0n,
  data: encodeFunctionData({
    abi: erc20Abi,
    functionName: "transfer",
    args: [getAddress(r.recipient), BigInt(r.amount)],
  }),
});

/**
 * The reserve wallet's balance less the shares of held places in the same token: a held share stays
 * in the wallet set aside for the operator, never spent on later places.
 */
export function spendable(balance: bigint, held: Pick<PayoutRow, "amount" | "token">[], token: string): bigint {
  const aside = held.filter((h) => h.token.toLowerCase() === token.toLowerCase());
  const left = balance - aside.reduce((a, h) => a + BigInt(h.amount), 0n);
  return left > 0n ? left : 0n;
}

/**
 * Signs the owed places the reserve wallet's balance covers (less held shares), in order (payableInOrder), with
 * consecutive nonces, and stores them in one transaction: a pass that fails mid-way stores none, so
 * no nonce is ever given twice. Refuses over a transaction of the reserve wallet in flight. A place
 * left owed says why; one whose recipient is listed is held. Answers whether anything was signed.
 */
async function signOwed(d: PayDeps, signer: PlatformSigner): Promise<boolean> {
  const owed = await d.db.query<PayoutRow>(
    `SELECT * FROM app.league_payouts WHERE status = 'planned' AND raw_tx IS NULL ${IN_ORDER}`,
  );
  if (!owed.length) return false;
  const [latest, pending] = await Promise.all([
    d.chain.getTransactionCount({ address: signer.address, blockTag: "latest" }),
    d.chain.getTransactionCount({ address: signer.address, blockTag: "pending" }),
  ]);
  if (pending !== latest)
    throw new Error(
      `the reserve wallet has ${pending - latest} transaction(s) in flight; no payout is signed over them`,
    );
  const held = await d.db.query<Pick<PayoutRow, "amount" | "token">>(
    "SELECT amount, token FROM app.league_payouts WHERE status = 'held'",
  );
  const balance = spendable(
    await d.chain.readContract({
      address: getAddress(owed[0]!.token),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [signer.address],
    }),
    held,
    owed[0]!.token,
  );
  const { pay, held: listed, owed: left } = await payableInOrder(owed, balance, (a) => sanctioned(d, a));
  for (const { r, block } of listed) await holdUnsigned(d, r, block);
  let need = 0n;
  const short = balance - pay.reduce((a, r) => a + BigInt(r.amount), 0n);
  for (const r of left) {
    need += BigInt(r.amount);
    await d.db.query("UPDATE app.league_payouts SET why = $3 WHERE season = $1 AND place = $2 AND status = 'planned'", [
      r.season,
      r.place,
      `owed: the reserve wallet has ${short} atoms left of the ${need} owed through this place; paid in order ` +
        "(oldest season first, then place) once it holds them",
    ]);
  }
  if (left.length) d.logger?.warn({ owed: left.length, short: short.toString() }, "league places owed: short reserve");
  if (!pay.length) return false;
  await signAndStore(d, signer, pay, latest);
  return true;
}

/** A place whose recipient was listed right before signing: held, nothing signed for it. */
function holdUnsigned(d: PayDeps, r: PayoutRow, block: bigint) {
  return hold(
    d,
    r,
    "unsigned",
    `held: its recipient ${r.recipient} is on the sanctions list (read at block ${block}, right before ` +
      "signing); nothing is signed for it and it is never paid",
    "league payout held: its recipient is on the sanctions list; nothing is signed for it",
  );
}

/** Where a held row must still stand (each caller's own guard: a row another pass moved on is left alone). */
const HOLD_WHERE = {
  unsigned: "raw_tx IS NULL",
  planned: "raw_tx IS NULL AND status = 'planned'",
  sent: "status = 'sent'",
  sentAs: "status = 'sent' AND tx_hash = $4",
} as const;

/** Holds a place with why: its share stays set aside and this service never pays it (the operator may). */
async function hold(d: PayDeps, r: PayoutRow, from: keyof typeof HOLD_WHERE, why: string, msg: string) {
  await d.db.query(
    `UPDATE app.league_payouts SET status = 'held', why = $3 WHERE season = $1 AND place = $2 AND ${HOLD_WHERE[from]}`,
    from === "sentAs" ? [r.season, r.place, why, r.tx_hash] : [r.season, r.place, why],
  );
  d.logger?.warn({ season: r.season, place: r.place, recipient: r.recipient }, msg);
}

/** Signs `rows` from nonce `nonce` on, then stores every signed transfer at once (or none). */
async function signAndStore(d: PayDeps, signer: PlatformSigner, rows: PayoutRow[], nonce: number) {
  const [fees, chainId] = await Promise.all([d.chain.estimateFeesPerGas(), d.chain.getChainId()]);
  const signed: { r: PayoutRow; raw: Hex }[] = [];
  for (const r of rows) {
    const call = transferCall(r);
    const estimate = await gasOrRefusal(d, signer, r);
    if (estimate === null) continue;
    signed.push({
      r,
      raw: await signer.signTransaction({
        ...call,
        chainId,
        nonce: nonce + signed.length,
        gas: (estimate * 13n) / 10n,
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      }),
    });
  }
  if (!signed.length) return;
  await d.db.tx(async (tx) => {
    // One signer's store at a time, and none over bytes another pass stored: two passes that raced past the
    // lease would otherwise store different payouts at the same nonces.
    await tx.query("SELECT pg_advisory_xact_lock(4663029)");
    if ((await tx.query("SELECT 1 FROM app.league_payouts WHERE status = 'sent' LIMIT 1")).length)
      throw new Error("another pass stored signed payouts first; nothing of this pass is stored");
    // Another pass's payouts may have been stored, sent and resolved while this one signed (no row 'sent' is
    // left then): bytes at a spent nonce would only ever be held, so the nonce is read again under the lock.
    const now = await d.chain.getTransactionCount({ address: signer.address, blockTag: "pending" });
    if (now !== nonce)
      throw new Error(
        `the reserve wallet's nonce moved from ${nonce} to ${now} while this pass signed; nothing stored`,
      );
    for (const { r, raw } of signed) {
      const done = await tx.query(
        "UPDATE app.league_payouts SET raw_tx = $3, tx_hash = $4, status = 'sent', why = NULL WHERE season = $1 " +
          "AND place = $2 AND raw_tx IS NULL AND status = 'planned' RETURNING place",
        [r.season, r.place, raw, keccak256(raw)],
      );
      if (!done.length)
        throw new Error(`payout ${r.season}/${r.place} was signed by another pass; nothing of this pass is stored`);
    }
  });
}

const reverted = (err: unknown) =>
  err instanceof BaseError && err.walk((e) => e instanceof ExecutionRevertedError) instanceof ExecutionRevertedError;

/**
 * A payout's gas, or null when the token refuses this recipient: then it is held with why, and the
 * places after it are signed (one recipient a token freezes must not stall every later payout). A
 * refusal of the same transfer to the reserve wallet itself means the token refuses everyone (paused):
 * nothing is held, the pass fails and a later one tries again.
 */
async function gasOrRefusal(d: PayDeps, signer: PlatformSigner, r: PayoutRow): Promise<bigint | null> {
  try {
    return await d.chain.estimateGas({ account: signer.address, ...transferCall(r) });
  } catch (err) {
    if (!reverted(err)) throw err;
    await d.chain.estimateGas({ account: signer.address, ...transferCall({ ...r, recipient: signer.address }) });
    const said = (err as BaseError).shortMessage;
    await hold(
      d,
      r,
      "planned",
      `held: the token refuses a transfer to ${r.recipient} (${said}) while it takes one to the reserve wallet; ` +
        "nothing is signed for it: the operator pays the place by hand once the recipient can receive",
      "league payout held: token refuses",
    );
    return null;
  }
}

/** How long one pass waits for a sent payout (or its cancel) to mine before it leaves it for the next pass. */
const WAIT_MS = 60_000;

/**
 * Resolves a stored payout by the chain (`resolved`), else sends its stored bytes again (the same
 * nonce: it pays once) or, when its recipient is listed since it was signed, its cancel at that
 * nonce, and waits a while. Answers where the payout stands: resolved; confirming (something mined at
 * its nonce, not yet final: nothing is sent, the next pass looks again); open (it still waits at its
 * nonce, and the payouts after it wait behind it). Nothing is sent that fails the stored checks.
 */
async function deliver(d: PayDeps, signer: PlatformSigner, r: PayoutRow): Promise<Resolution> {
  const nonce = await checkStored(d, signer, r);
  const before = await resolved(d, signer, r, nonce);
  if (before !== "open") return before;
  let raw = r.cancel_raw as Hex | null;
  if (!raw) {
    // Listed since it was signed: its nonce goes to a cancel instead, and it is held once that mines.
    const read = await sanctioned(d, [r.recipient]);
    raw = read.listed[0] ? await storeCancel(d, signer, r, read.block) : (r.raw_tx as Hex);
  }
  await d.chain.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
  // Whatever the wait answers (viem answers a replaced transaction with its replacement's receipt),
  // only the receipts of this payout's own hashes resolve it.
  await d.chain
    .waitForTransactionReceipt({ hash: keccak256(raw), timeout: WAIT_MS, pollingInterval: 250 })
    .catch(() => null);
  const after = await resolved(d, signer, r, nonce);
  if (after === "open")
    d.logger?.warn(
      { season: r.season, place: r.place, nonce, tx_hash: r.tx_hash, cancel_hash: r.cancel_hash },
      "league payout not mined yet: it is sent again next pass, and the payouts after it wait",
    );
  return after;
}

/**
 * The stored payout's checks before anything of it is sent or resolved: its hash is its bytes', its
 * amount is the decided share, the bytes are exactly the planned transfer from the reserve wallet,
 * and a stored cancel is a self-transfer of nothing at the same nonce. Answers the nonce.
 */
async function checkStored(d: PayDeps, signer: PlatformSigner, r: PayoutRow): Promise<number> {
  const hash = r.tx_hash as Hex;
  if (!r.raw_tx || keccak256(r.raw_tx as Hex) !== hash)
    throw new Error(`stored payout ${r.season}/${r.place}: its hash is not its bytes'; nothing is sent`);
  const [l] = await d.db.query<{ ledger: string }>("SELECT ledger FROM app.league_ledgers WHERE season = $1", [
    r.season,
  ]);
  if (!l || (JSON.parse(l.ledger) as PayoutBook).shares[r.place - 1] !== r.amount)
    throw new Error(`stored payout ${r.season}/${r.place} is not the decided share; nothing is sent`);
  const tx = parseTransaction(r.raw_tx as Hex);
  const want = transferCall(r);
  const from = await recoverTransactionAddress({ serializedTransaction: r.raw_tx as never });
  const me = signer.address.toLowerCase();
  if (
    from.toLowerCase() !== me ||
    tx.to?.toLowerCase() !== want.to.toLowerCase() ||
    tx.data !== want.data ||
    (tx.value ?? 0n) !== 0n
  )
    throw new Error(`stored payout ${hash} is not the planned transfer; nothing is sent`);
  if (r.cancel_raw !== null) {
    const c = parseTransaction(r.cancel_raw as Hex);
    const by = await recoverTransactionAddress({ serializedTransaction: r.cancel_raw as never });
    if (
      keccak256(r.cancel_raw as Hex) !== r.cancel_hash ||
      by.toLowerCase() !== me ||
      c.to?.toLowerCase() !== me ||
      (c.value ?? 0n) !== 0n ||
      c.nonce !== tx.nonce
    )
      throw new Error(`stored cancel of payout ${r.season}/${r.place} is not a cancel at its nonce; nothing is sent`);
  }
  return tx.nonce!;
}

/** A transaction's receipt, null when the chain has none: any other failed read throws (never read as "not mined"). */
async function receiptOf(d: PayDeps, hash: string | null): Promise<TransactionReceipt | null> {
  if (!hash) return null;
  try {
    return await d.chain.getTransactionReceipt({ hash: hash as Hex });
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return null;
    throw err;
  }
}

/** Where a sent payout stands on the chain (`resolved`). */
type Resolution = "resolved" | "confirming" | "open";

/**
 * Resolves a sent payout by what the chain shows at its nonce: its own transfer mined (mined), its
 * cancel mined (held), its transfer reverted (planned again: nothing moved), or the nonce spent by a
 * transaction that is neither, e.g. the operator's own (held for the operator: that transaction may
 * have paid the place, see holdSpent). Each is acted on only once FINALITY_BLOCKS deep: a reorg could
 * still swap what mined above that (a reverted transfer planned again, then mined in its place, would
 * pay the place twice; a transfer recorded paid could be dropped; a place held for the operator's
 * transaction could be paid by its own once a reorg drops the operator's), so until then it answers
 * confirming. The wallet's nonce is read before the receipts, so a transaction of ours mined by then
 * shows its receipt. Answers open while nothing has spent the nonce.
 */
async function resolved(d: PayDeps, signer: PlatformSigner, r: PayoutRow, nonce: number): Promise<Resolution> {
  const head = await d.chain.getBlockNumber({ cacheTime: 0 });
  const mined = await d.chain.getTransactionCount({ address: signer.address, blockNumber: head });
  const paid = await receiptOf(d, r.tx_hash);
  const cancel = await receiptOf(d, r.cancel_hash);
  const shallow = [paid, cancel].find((x) => x && !isFinal(head, x.blockNumber));
  if (shallow) {
    d.logger?.info(
      { season: r.season, place: r.place, nonce, block: shallow.blockNumber.toString(), head: head.toString() },
      `league payout mined, not yet ${FINALITY_BLOCKS} blocks deep: the next pass decides`,
    );
    return "confirming";
  }
  if (paid?.status === "success") {
    await d.db.query(
      "UPDATE app.league_payouts SET status = 'mined', block = $3, why = NULL WHERE season = $1 AND place = $2 " +
        "AND status = 'sent'",
      [r.season, r.place, Number(paid.blockNumber)],
    );
    return "resolved";
  }
  if (cancel) return holdCancelled(d, r, nonce).then(() => "resolved");
  if (paid) return replan(d, r, `its transfer ${r.tx_hash} reverted at nonce ${nonce}; nothing moved`);
  if (mined <= nonce) return "open";
  // Spent by a transaction that is not ours (or ours, dropped by a reorg between the reads above): held only
  // once that spend is final, so the operator is never told to pay by hand while a reorg can still mine ours.
  if (!(await spentAtFinal(d, signer, r, nonce, head))) return "confirming";
  return holdSpent(d, r, nonce).then(() => "resolved");
}

/** Whether the wallet's nonce FINALITY_BLOCKS below `head` is past `nonce`; false when the node cannot say. */
async function spentAtFinal(d: PayDeps, signer: PlatformSigner, r: PayoutRow, nonce: number, head: bigint) {
  const final = head - BigInt(FINALITY_BLOCKS);
  if (final < 0n) return false;
  try {
    return (await d.chain.getTransactionCount({ address: signer.address, blockNumber: final })) > nonce;
  } catch (err) {
    // A node without that block's state (pruned; a devnet just loaded from a file) holds nothing: the next pass asks.
    d.logger?.warn(
      { season: r.season, place: r.place, nonce, final: final.toString(), err: (err as Error).message.split("\n")[0] },
      "league payout: the reserve wallet's nonce at the final block could not be read; nothing is held yet",
    );
    return false;
  }
}

/**
 * A payout whose nonce another transaction spent is held for the operator, never signed again by
 * itself: that transaction may be the operator's own re-send of this very transfer (a fee bump),
 * and paying again at a new nonce would pay the place twice. Its share stays set aside (held rows
 * are not spendable); the places after it go on.
 */
function holdSpent(d: PayDeps, r: PayoutRow, nonce: number) {
  const others = `${r.tx_hash}${r.cancel_hash ? ` nor its cancel ${r.cancel_hash}` : ""}`;
  return hold(
    d,
    r,
    "sentAs",
    `held: nonce ${nonce} of the reserve wallet was spent by a transaction that is not this payout's ${others}; ` +
      `it may have paid ${r.recipient} already (a re-send by hand), so it is not signed again: the operator ` +
      "reads that transaction and pays the place by hand only if nothing reached the recipient",
    "league payout held: its nonce was spent by another transaction; the operator resolves it",
  );
}

/**
 * A sent payout that can no longer mine at its nonce (proven: `resolved`) is owed again, unsigned:
 * the next signing gives it a new nonce, in order.
 */
async function replan(d: PayDeps, r: PayoutRow, cause: string): Promise<"resolved"> {
  await d.db.query(
    "UPDATE app.league_payouts SET status = 'planned', raw_tx = NULL, tx_hash = NULL, cancel_raw = NULL, " +
      "cancel_hash = NULL, why = $3 WHERE season = $1 AND place = $2 AND status = 'sent' AND tx_hash = $4",
    [r.season, r.place, `owed: ${cause}; signed again at a new nonce, in order`, r.tx_hash],
  );
  d.logger?.warn({ season: r.season, place: r.place, cause }, "league payout planned again: its nonce is spent");
  return "resolved";
}

/**
 * The sanctions list read now (at the newest block) for each address (SPEC: a prize goes to no
 * listed address). An unreadable list signs and sends nothing: the pass fails and the next one
 * reads again.
 */
async function sanctioned(d: PayDeps, addresses: string[]): Promise<{ listed: boolean[]; block: bigint }> {
  try {
    // Uncached: viem keeps a block number for its polling interval, and a listing mined in that
    // window would be read as clean (a payout to a listed recipient).
    const block = await d.chain.getBlockNumber({ cacheTime: 0 });
    if (!addresses.length) return { listed: [], block };
    const listed = await d.chain.multicall({
      contracts: addresses.map((a) => ({
        address: d.config.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "isSanctioned" as const,
        args: [getAddress(a)] as const,
      })),
      allowFailure: false,
      blockNumber: block,
    });
    return { listed, block };
  } catch (err) {
    throw new Error(
      `the sanctions list could not be read; no payout is signed or sent: ${(err as Error).message.split("\n")[0]}`,
    );
  }
}

/**
 * Signs and stores the cancel of a sent payout whose recipient was listed since it was signed: a
 * plain self-transfer at its nonce (fees doubled, so the pool takes the replacement), stored
 * before it is sent like the payout's own bytes, so every later pass sends the same cancel.
 */
async function storeCancel(d: PayDeps, signer: PlatformSigner, r: PayoutRow, block: bigint): Promise<Hex> {
  const tx = parseTransaction(r.raw_tx as Hex);
  const fees = await d.chain.estimateFeesPerGas();
  const maxFee = [fees.maxFeePerGas * 2n, (tx.maxFeePerGas ?? 0n) * 2n].reduce((a, b) => (a > b ? a : b));
  const tip = [fees.maxPriorityFeePerGas * 2n, (tx.maxPriorityFeePerGas ?? 0n) * 2n].reduce((a, b) => (a > b ? a : b));
  const raw = await signer.signTransaction({
    to: signer.address,
    value: 0n,
    chainId: tx.chainId!,
    nonce: tx.nonce!,
    gas: 21_000n,
    maxFeePerGas: maxFee,
    maxPriorityFeePerGas: tip < maxFee ? tip : maxFee,
  });
  const stored = await d.db.query(
    "UPDATE app.league_payouts SET cancel_raw = $3, cancel_hash = $4, why = $5 WHERE season = $1 AND place = $2 " +
      "AND status = 'sent' AND tx_hash = $6 AND cancel_raw IS NULL RETURNING place",
    [
      r.season,
      r.place,
      raw,
      keccak256(raw),
      `held once its cancel mines: its recipient is on the sanctions list (read at block ${block}, before a re-send)`,
      r.tx_hash,
    ],
  );
  if (!stored.length) throw new Error(`payout ${r.season}/${r.place} changed under this pass; nothing is sent`);
  d.logger?.warn(
    { season: r.season, place: r.place, recipient: r.recipient, nonce: tx.nonce, block: block.toString() },
    "league payout cancelled at its nonce: its recipient is on the sanctions list",
  );
  return raw;
}

/** A payout whose cancel mined: held, never paid (its nonce is spent by the cancel). */
function holdCancelled(d: PayDeps, r: PayoutRow, nonce: number) {
  return hold(
    d,
    r,
    "sent",
    `held: its recipient ${r.recipient} is on the sanctions list (read again before a re-send); its signed ` +
      `transfer was cancelled at nonce ${nonce} by ${r.cancel_hash} and it is never paid`,
    "league payout held at its re-send: its recipient is on the sanctions list; its nonce was cancelled",
  );
}
