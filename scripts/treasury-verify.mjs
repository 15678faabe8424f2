#!/usr/bin/env node
// Checks the service's treasury record against the chain, with nothing but Node (>= 20):
//   node scripts/treasury-verify.mjs <base_url> <rpc_url>      (npm run treasury:verify -- ...)
// 1. every row's SHA-256 (keys sorted, no spaces, ASCII only, without "hash") and the prev_hash
//    links from 64 zeros; the server's own integrity verdict;
// 2. each week's first and last block bracket its Monday-to-Monday window;
// 3. each token's received and outside against ERC-20 Transfer logs to the platform wallet
//    (eth_getLogs, chunked; a transfer in a transaction to the router or the DelegationManager
//    named by GET /api/v1/config is a trade's fee, anything else outside), and ETH against
//    trace_filter or the wallet's balance;
// 4. the split's arithmetic (50/40/10, rounded down, carried and owed amounts row to row);
// 5. each split transfer's receipt: mined, from the platform wallet, to its bucket, its amount.
// Prints "ok", or the first row that disagrees and why, and exits 1.
import { createHash } from "node:crypto";

const [base, rpcUrl] = process.argv.slice(2);
if (!base || !rpcUrl) {
  console.error("usage: treasury-verify <base_url> <rpc_url>");
  process.exit(2);
}

const GENESIS = "0".repeat(64);
const SPLIT_BPS = { operations: 5000n, buybacks: 4000n, treasury: 1000n };
const BUCKETS = Object.keys(SPLIT_BPS);
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const ETH = "0x0000000000000000000000000000000000000000";
const lc = (s) => String(s).toLowerCase();
const topicOf = (addr) => `0x${lc(addr).slice(2).padStart(64, "0")}`;
const hex = (n) => `0x${BigInt(n).toString(16)}`;

/**
 * Sorted keys, no spaces, every character from U+007F up as \uXXXX: Python's json.dumps(sort_keys, separators,
 * ensure_ascii).
 */
function canonical(v) {
  if (v === null || typeof v === "boolean" || typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("not a finite number");
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${Object.keys(v)
    .filter((k) => v[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
    .join(",")}}`;
}
const ascii = (s) => s.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
const rowHash = (row) => {
  const { hash, ...rest } = row;
  return createHash("sha256")
    .update(ascii(canonical(rest)))
    .digest("hex");
};

let rpcId = 0;
async function rpc(method, params) {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const body = await res.json();
  if (body.error) throw Object.assign(new Error(`${method}: ${body.error.message}`), { rpc: body.error });
  return body.result;
}
const blockTime = async (n) => Number(BigInt((await rpc("eth_getBlockByNumber", [hex(n), false])).timestamp));

/**
 * Transfer logs to `to` in [from, last], in block ranges that halve when the node says a range has too many results
 * (10,000 on many nodes).
 */
async function transfersTo(to, from, last) {
  const out = [];
  let step = 5000;
  for (let a = from; a <= last; ) {
    const b = Math.min(last, a + step - 1);
    try {
      out.push(
        ...(await rpc("eth_getLogs", [{ fromBlock: hex(a), toBlock: hex(b), topics: [TRANSFER, null, topicOf(to)] }])),
      );
      a = b + 1;
    } catch (err) {
      if (step === 1) throw err;
      step = Math.max(1, Math.floor(step / 2));
    }
  }
  return out;
}

/**
 * ETH reaching `to` by call value: transactions found by trace_filter (ranges halving while refused), each traced whole
 * so that calls undone by a revert above them do not count.
 */
async function tracedEthIn(to, from, last) {
  const hashes = new Set();
  let step = 5000;
  for (let a = from; a <= last; ) {
    const b = Math.min(last, a + step - 1);
    try {
      for (const t of await rpc("trace_filter", [{ fromBlock: hex(a), toBlock: hex(b), toAddress: [to] }]))
        hashes.add(lc(t.transactionHash));
      a = b + 1;
    } catch (err) {
      if (step === 1) throw err;
      step = Math.max(1, Math.floor(step / 2));
    }
  }
  let sum = 0n;
  for (const hash of hashes) {
    const traces = await rpc("trace_transaction", [hash]);
    const failed = traces.filter((t) => t.error).map((t) => (t.traceAddress ?? []).join(","));
    for (const t of traces) {
      const value = BigInt(t.action?.value ?? "0x0");
      if (t.type !== "call" || value === 0n || lc(t.action.from) === lc(to) || lc(t.action.to) !== lc(to)) continue;
      if (t.action.callType && t.action.callType !== "call") continue;
      const at = (t.traceAddress ?? []).join(",");
      if (failed.some((f) => f === "" || at === f || at.startsWith(`${f},`))) continue;
      sum += value;
    }
  }
  return sum;
}

class Disagree extends Error {}
const check = (cond, why) => {
  if (!cond) throw new Disagree(why);
};

/** ETH that reached the wallet: by traces, or by the balance change plus what the record's own transfers spent. */
async function checkEth(platform, row, all) {
  const w = row.week;
  const eth = row.tokens.find((x) => lc(x.token) === ETH);
  const ethIn = BigInt(eth?.received ?? "0") + BigInt(eth?.outside ?? "0");
  if (row.reconciliation.eth === "trace") {
    const traced = await tracedEthIn(platform, w.first_block, w.last_block).catch(() => null);
    if (traced === null) console.error(`row ${row.seq}: ETH not checked: this node does not answer trace_filter`);
    else check(traced === ethIn, `ETH: traces show ${traced} wei reaching the wallet, the row ${ethIn}`);
  } else if (row.reconciliation.eth === "balance") {
    let change;
    try {
      // Block 0 holds no transactions: its state is the genesis allocation, not income.
      change =
        BigInt(await rpc("eth_getBalance", [platform, hex(w.last_block)])) -
        BigInt(await rpc("eth_getBalance", [platform, hex(Math.max(0, w.first_block - 1))]));
    } catch {
      console.error(
        `row ${row.seq}: ETH not checked: this node keeps no balances from blocks ${w.first_block}-${w.last_block}`,
      );
      return;
    }
    let spent = 0n;
    for (const t of all
      .flatMap((r) => r.transfers)
      .filter((t) => t.block >= w.first_block && t.block <= w.last_block)) {
      const [tx, rc] = await Promise.all([
        rpc("eth_getTransactionByHash", [t.tx_hash]),
        rpc("eth_getTransactionReceipt", [t.tx_hash]),
      ]);
      spent += BigInt(rc.gasUsed) * BigInt(rc.effectiveGasPrice) + (rc.status === "0x1" ? BigInt(tx.value) : 0n);
    }
    check(
      change + spent === ethIn,
      `ETH: the balance moved ${change} wei (+${spent} the record's own transfers spent), the row says ${ethIn} came ` +
        `in`,
    );
  }
}

const txTo = new Map();
async function targetOf(hash) {
  if (!txTo.has(hash)) txTo.set(hash, lc((await rpc("eth_getTransactionByHash", [hash]))?.to ?? ""));
  return txTo.get(hash);
}

async function verifyWeek(answer, tradeTargets, row, prev, all) {
  const platform = answer.platform_wallet;
  const w = row.week;
  check(
    !prev || w.start === prev.week.end,
    `week ${w.label} does not start where the row before ended (${prev?.week.end})`,
  );
  // 2. The week's blocks.
  if (w.first_block !== null) {
    check((await blockTime(w.first_block)) >= w.start, `first_block ${w.first_block} is before the week`);
    if (w.first_block > 0)
      check((await blockTime(w.first_block - 1)) < w.start, `block ${w.first_block - 1} is in the week too`);
    check((await blockTime(w.last_block)) < w.end, `last_block ${w.last_block} is after the week`);
    const next = await rpc("eth_getBlockByNumber", [hex(w.last_block + 1), false]);
    check(next && Number(BigInt(next.timestamp)) >= w.end, `block ${w.last_block + 1} is in the week too`);
  }
  // 3. What reached the wallet, by token.
  const logs = w.first_block === null ? [] : await transfersTo(platform, w.first_block, w.last_block);
  const byToken = new Map();
  for (const l of logs) {
    if (l.topics.length !== 3 || lc(`0x${l.topics[1].slice(26)}`) === lc(platform)) continue;
    const e = byToken.get(lc(l.address)) ?? { trade: 0n, outside: 0n, trades: new Set(), outsideTxs: new Set() };
    if (tradeTargets.has(await targetOf(lc(l.transactionHash)))) {
      e.trade += BigInt(l.data);
      e.trades.add(lc(l.transactionHash));
    } else {
      e.outside += BigInt(l.data);
      e.outsideTxs.add(lc(l.transactionHash));
    }
    byToken.set(lc(l.address), e);
  }
  for (const [token, e] of byToken) {
    const t = row.tokens.find((x) => lc(x.token) === token);
    check(t, `${e.trade + e.outside} atoms of ${token} reached the wallet and the row does not name the token`);
  }
  for (const t of row.tokens) {
    const pool = BigInt(t.carried_in) + BigInt(t.received) + BigInt(t.outside);
    check(BigInt(t.pool) === pool, `${t.symbol}: pool ${t.pool} is not carried_in + received + outside (${pool})`);
    const before = prev?.tokens.find((x) => lc(x.token) === lc(t.token));
    check(
      t.carried_in === (before?.carried_out ?? "0"),
      `${t.symbol}: carried_in ${t.carried_in} is not the week before's carried_out (${before?.carried_out ?? "0"})`,
    );
    if (lc(t.token) === ETH) continue;
    const e = byToken.get(lc(t.token)) ?? { trade: 0n, outside: 0n, trades: new Set(), outsideTxs: new Set() };
    check(
      BigInt(t.received) === e.trade && t.trades === e.trades.size,
      `${t.symbol}: received ${t.received} in ${t.trades} trades, the logs show ${e.trade} in ${e.trades.size} ` +
        `transactions to the router or DelegationManager`,
    );
    check(
      BigInt(t.outside) === e.outside && t.outside_trades === e.outsideTxs.size,
      `${t.symbol}: outside ${t.outside} in ${t.outside_trades} transactions, the logs show ${e.outside} in ` +
        `${e.outsideTxs.size}`,
    );
  }
  if (w.first_block !== null && row.reconciliation.status === "agrees") await checkEth(platform, row, all);
  // 4. The split.
  for (const t of row.tokens) {
    const before = prev?.tokens.find((x) => lc(x.token) === lc(t.token));
    let booked = 0n;
    for (const b of BUCKETS) {
      const want = t.status === "split" ? (BigInt(t.pool) * SPLIT_BPS[b]) / 10000n : 0n;
      check(BigInt(t.booked[b]) === want, `${t.symbol}: booked ${b} ${t.booked[b]}, the split gives ${want}`);
      check(
        t.owed_in[b] === (before?.owed_out[b] ?? "0"),
        `${t.symbol}: owed_in ${b} ${t.owed_in[b]} is not the week before's owed_out`,
      );
      check(
        BigInt(t.owed_out[b]) === BigInt(t.owed_in[b]) + BigInt(t.booked[b]) - BigInt(t.moved[b]),
        `${t.symbol}: owed_out ${b} is not owed_in + booked - moved`,
      );
      booked += want;
      if (BigInt(t.moved[b]) > 0n)
        check(
          row.transfers.some((x) => x.bucket === b && lc(x.token) === lc(t.token) && x.amount === t.moved[b]),
          `${t.symbol}: ${t.moved[b]} moved to ${b} without its transfer`,
        );
    }
    check(
      BigInt(t.carried_out) === BigInt(t.pool) - booked,
      `${t.symbol}: carried_out ${t.carried_out} is not pool - booked`,
    );
  }
  // 5. The transfers that moved it.
  for (const x of row.transfers) {
    check(
      lc(x.to) === lc(answer.buckets[x.bucket] ?? x.to),
      `transfer ${x.tx_hash} went to ${x.to}, not the ${x.bucket} bucket`,
    );
    const [tx, rc] = await Promise.all([
      rpc("eth_getTransactionByHash", [x.tx_hash]),
      rpc("eth_getTransactionReceipt", [x.tx_hash]),
    ]);
    check(rc && rc.status === "0x1", `transfer ${x.tx_hash} is not mined successfully`);
    check(
      Number(BigInt(rc.blockNumber)) === x.block,
      `transfer ${x.tx_hash} is in block ${Number(BigInt(rc.blockNumber))}, not ${x.block}`,
    );
    check(lc(tx.from) === lc(platform), `transfer ${x.tx_hash} was not sent by the platform wallet`);
    if (lc(x.token) === ETH)
      check(
        lc(tx.to) === lc(x.to) && BigInt(tx.value) === BigInt(x.amount),
        `transfer ${x.tx_hash} did not send ${x.amount} wei to ${x.to}`,
      );
    else
      check(
        rc.logs.some(
          (l) =>
            l.topics[0] === TRANSFER &&
            lc(l.address) === lc(x.token) &&
            l.topics[1] === topicOf(platform) &&
            l.topics[2] === topicOf(x.to) &&
            BigInt(l.data) === BigInt(x.amount),
        ),
        `transfer ${x.tx_hash} has no Transfer of ${x.amount} ${x.symbol} from the platform wallet to ${x.to}`,
      );
  }
}

async function main() {
  const res = await fetch(`${base.replace(/\/$/, "")}/api/v1/treasury`);
  if (!res.ok) throw new Error(`GET /api/v1/treasury answered ${res.status}`);
  const answer = await res.json();
  const config = await (await fetch(`${base.replace(/\/$/, "")}/api/v1/config`)).json();
  const tradeTargets = new Set([lc(config.router), lc(config.session?.delegation_manager ?? "")]);
  const rows = answer.weeks.filter((w) => w.status !== "preview").sort((a, b) => a.seq - b.seq);
  let head = GENESIS;
  for (const [i, row] of rows.entries()) {
    const where = `row ${row.seq} (${row.week?.label})`;
    try {
      check(row.seq === i + 1, `seq ${row.seq} where ${i + 1} was due`);
      check(row.prev_hash === head, `prev_hash ${row.prev_hash} does not link to ${head}`);
      const hash = rowHash(row);
      check(row.hash === hash, `hash ${row.hash} is not the SHA-256 of the row (${hash})`);
      head = hash;
      await verifyWeek(answer, tradeTargets, row, rows[i - 1] ?? null, rows);
    } catch (err) {
      if (!(err instanceof Disagree)) throw err;
      console.log(`${where}: ${err.message}`);
      process.exit(1);
    }
  }
  const i = answer.integrity;
  if (!i.ok) {
    console.log(`row ${i.broken_at}: the server reports its record broken: ${i.why}`);
    process.exit(1);
  }
  if (i.rows !== rows.length || i.head !== head) {
    console.log(
      `row ${rows.length + 1}: the server's integrity says ${i.rows} rows ending ${i.head}, the rows served end ` +
        `${head} after ${rows.length}`,
    );
    process.exit(1);
  }
  console.log(`ok ${rows.length} rows, head ${head}`);
}

main().catch((err) => {
  console.error(`could not verify: ${err.message}`);
  process.exit(2);
});
