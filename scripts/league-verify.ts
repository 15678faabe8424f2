/**
 * `npm run league:verify -- <base_url> <rpc_url> <season>`: recomputes a season's prize standings
 * from the chain and the service's published entries, and prints the first row that differs.
 *
 * From the service it takes only what the chain cannot say: who entered (entries, with the owner's
 * signed statement, checked here), which transactions it relayed (tx hashes with their plans) and
 * the operator's reviews of flags (each applies only to the flag it names, as the service applies it).
 * From the chain: each trade's receipt (amounts recomputed with lib/tradeOutcome, block and time),
 * feed rounds and the partner pool's price history from logs, transfers among entrants' addresses
 * (clusters: token Transfer logs, and native ETH moves from debug_traceBlockByNumber), the sanctions
 * list and the vault at the published block. Then the same lib/ code as the service ranks the
 * board. Exit 0 when every row agrees, 1 at the first difference.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createPublicClient,
  getAddress,
  http,
  recoverMessageAddress,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { boardFrom, type EntryFacts } from "../lib/league/board.js";
import { sanctionedAt, transfersOf, vaultWalletsAt, chainMarkReader } from "../lib/league/chain.js";
import { season as seasonAt } from "../lib/league/calendar.js";
import {
  NATIVE_UNREADABLE,
  NativeUnreadable,
  nativeTransfersOf,
  seenDespite,
  skippedReason,
  type NativeSkips,
} from "../lib/league/native.js";
import { ELIGIBILITY_LINE } from "../lib/league/statement.js";
import { markMemo, type SeasonTrade, type ValuationToken } from "../lib/league/valuation.js";
import type { Review } from "../lib/league/review.js";
import { relayedOutcome, type RelayedPlan } from "../lib/tradeOutcome.js";
import { canonicalJson } from "../lib/canonicalJson.js";
import { chain4663, createBatchReader, publicClient } from "../lib/chain.js";

type PublishedTrade = {
  id: string;
  tx_hash: Hex;
  block: number;
  ts: number;
  path: string;
  plan:
    | (Omit<RelayedPlan, "txValue" | "fee"> & {
        txValue: string;
        fee: Omit<RelayedPlan["fee"], "amount"> & { amount: string };
      })
    | null;
  token_in: { address: string; decimals: number };
  token_out: { address: string; decimals: number };
  amount_in: string;
  amount_out: string;
};
type Published = {
  season: number;
  decided: boolean;
  block: number;
  valued_at: number;
  from_block: number;
  native_from_block?: number;
  /** What the service's bounded native scan skipped after repeated failures (absent: nothing). */
  native_skipped?: NativeSkips;
  contracts: {
    pool_manager: Address;
    router: Address;
    launchpad: Address;
    sanctions_list: Address;
    partner_agent_vault: Address;
    multicall3: Address;
  };
  hubs: string[];
  link_tokens: string[];
  tokens: ValuationToken[];
  entries: (EntryFacts & { proof: { message: string; signature: Hex } | null })[];
  books: Record<string, PublishedTrade[]>;
  /** The operator's reviews of the season's flags (none before reviews existed). */
  reviews?: Review[];
};
export type VerifyResult = {
  rows: number;
  agrees: boolean;
  first: { rank: number; entry_id: string; field: string; published: unknown; recomputed: unknown } | null;
  problems: string[];
};

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A trade as the chain shows it: the receipt's amounts (lib/tradeOutcome), its block and the block's time. */
async function chainTrade(
  chain: PublicClient,
  t: PublishedTrade,
  wallet: string,
  c: Published["contracts"],
  problems: string[],
): Promise<SeasonTrade | null> {
  if (!t.plan) return (problems.push(`${t.tx_hash}: no plan published`), null);
  const receipt = await chain.getTransactionReceipt({ hash: t.tx_hash }).catch(() => null);
  if (!receipt) return (problems.push(`${t.tx_hash}: not on chain`), null);
  const plan: RelayedPlan = {
    ...t.plan,
    txValue: BigInt(t.plan.txValue),
    fee: { ...t.plan.fee, amount: BigInt(t.plan.fee.amount) },
  };
  if (plan.wallet.toLowerCase() !== wallet.toLowerCase()) problems.push(`${t.tx_hash}: the plan names another wallet`);
  const o = relayedOutcome(receipt as never, plan, {
    poolManager: c.pool_manager,
    router: c.router,
    launchpad: c.launchpad,
  });
  if (o.status !== "mined" || o.amountIn === null || o.amountOut === null)
    return (problems.push(`${t.tx_hash}: reverted`), null);
  const block = await chain.getBlock({ blockNumber: receipt.blockNumber });
  return {
    id: t.id,
    tx_hash: t.tx_hash,
    block: Number(receipt.blockNumber),
    ts: Number(block.timestamp),
    token_in: { address: o.tokenIn.toLowerCase(), decimals: t.token_in.decimals },
    amount_in: o.amountIn,
    token_out: { address: o.tokenOut.toLowerCase(), decimals: t.token_out.decimals },
    amount_out: o.amountOut,
  };
}

export async function verifyLeague(base: string, rpcUrl: string, n: number): Promise<VerifyResult> {
  const api = `${base.replace(/\/$/, "")}/api/v1/league`;
  const detail = await getJson<{ rows: Record<string, unknown>[]; amounts_atoms: string[] | null; decided: boolean }>(
    `${api}/seasons/${n}`,
  );
  const pub = await getJson<Published>(`${api}/seasons/${n}/books`);
  const chainId = await publicClient({ transport: http(rpcUrl) }).getChainId();
  // The published multicall contract reads the sanctions list and the vault in one call each.
  const network = { chainId, rpcUrl, contracts: { multicall3: pub.contracts.multicall3 } };
  const chain = createPublicClient({ chain: chain4663(network), transport: http(rpcUrl) });
  // The nonce probes of the native scan go in JSON-RPC batches, as the service sends them.
  const batched = createBatchReader(network);
  // The season's status by the chain's clock (a devnet may run ahead of the wall's).
  const s = seasonAt(n, Number((await chain.getBlock()).timestamp));
  const problems: string[] = [];
  // The owner's confirmation must recover to the owner and carry the eligibility line.
  for (const e of pub.entries) {
    if (!e.confirmed) continue;
    if (!e.proof) problems.push(`${e.entry_id}: confirmed without a published statement`);
    else if (
      (await recoverMessageAddress({ message: e.proof.message, signature: e.proof.signature })).toLowerCase() !==
        e.owner.toLowerCase() ||
      !e.proof.message.includes(ELIGIBILITY_LINE)
    )
      problems.push(`${e.entry_id}: the statement does not prove the owner's confirmation`);
  }
  for (const r of pub.reviews ?? [])
    if (r.season !== n) problems.push(`review ${r.id}: of season ${r.season}, published with season ${n}`);
  const trades = new Map<string, SeasonTrade[]>();
  for (const e of pub.entries) {
    const list: SeasonTrade[] = [];
    for (const t of pub.books[e.entry_id] ?? []) {
      const ct = await chainTrade(chain, t, e.wallet, pub.contracts, problems);
      if (!ct) continue;
      if (ct.ts < s.starts || ct.ts >= s.ends) problems.push(`${t.tx_hash}: mined outside the season`);
      list.push(ct);
    }
    trades.set(e.entry_id, list);
  }
  const block = BigInt(pub.block);
  const marks = markMemo(
    chainMarkReader(chain, {
      poolManager: pub.contracts.pool_manager,
      fromBlock: BigInt(pub.from_block),
      toBlock: block,
    }),
    pub.tokens,
  );
  const vault = await vaultWalletsAt(
    chain,
    getAddress(pub.contracts.partner_agent_vault),
    pub.entries.map((e) => e.agent_id),
    block,
  );
  const addresses = [
    ...pub.entries.flatMap((e) => [e.wallet, e.owner, e.agent_wallet]),
    ...[...vault.values()].filter((v): v is string => v !== null),
  ];
  const [transfers, native, sanctioned] = await Promise.all([
    transfersOf(chain, addresses, BigInt(pub.from_block), block, pub.link_tokens),
    // Native ETH moves from traces, as the service reads them; a node that cannot answer flags rule LINKS.
    // What the service skipped is left out here too, and flags LINKS with the same words.
    nativeTransfersOf(chain, addresses, BigInt(pub.native_from_block ?? pub.from_block), block, batched).then(
      (transfers) => {
        const skips = pub.native_skipped ?? { blocks: [], ranges: [] };
        const any = skips.blocks.length > 0 || skips.ranges.length > 0;
        return {
          transfers: any ? seenDespite(transfers, skips, new Set(addresses.map((a) => a.toLowerCase()))) : transfers,
          unreadable: any ? skippedReason(skips) : null,
        };
      },
      (err) => {
        if (err instanceof NativeUnreadable) return { transfers: [], unreadable: NATIVE_UNREADABLE };
        throw err;
      },
    ),
    sanctionedAt(chain, getAddress(pub.contracts.sanctions_list), addresses, block),
  ]);
  const facts: EntryFacts[] = pub.entries.map(({ proof: _p, ...f }) => f);
  const board = await boardFrom({
    season: s,
    anchor: {
      valuedAt: pub.valued_at,
      block,
      ended: s.status === "closed",
      decided: pub.decided,
      shares: detail.amounts_atoms,
    },
    entries: facts,
    trades,
    marks,
    transfers: [...transfers, ...native.transfers],
    linksUnread: native.unreadable,
    sanctioned,
    vault,
    hubs: new Set(pub.hubs),
    reviews: pub.reviews ?? [],
  });
  // Decided answers carry the paid amounts set after ranking; compare like for like.
  const recomputed = board.rows as unknown as Record<string, unknown>[];
  for (let i = 0; i < Math.max(recomputed.length, detail.rows.length); i++) {
    const a = detail.rows[i] ?? {};
    const b = recomputed[i] ?? {};
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null))
        return {
          rows: detail.rows.length,
          agrees: false,
          first: {
            rank: i + 1,
            entry_id: String(a.entry_id ?? b.entry_id),
            field: k,
            published: a[k],
            recomputed: b[k],
          },
          problems,
        };
    }
  }
  return { rows: detail.rows.length, agrees: problems.length === 0, first: null, problems };
}

async function main() {
  const [base, rpcUrl, season] = process.argv.slice(2);
  if (!base || !rpcUrl || !season || !/^[1-9][0-9]*$/.test(season)) {
    console.error("usage: npm run league:verify -- <base_url> <rpc_url> <season>");
    process.exit(2);
  }
  const r = await verifyLeague(base, rpcUrl, Number(season));
  for (const p of r.problems) console.log(`problem: ${p}`);
  if (r.first) {
    console.log(
      `row ${r.first.rank} (${r.first.entry_id}) differs at ${r.first.field}: published ` +
        `${JSON.stringify(r.first.published)}, recomputed ${JSON.stringify(r.first.recomputed)}`,
    );
    process.exit(1);
  }
  console.log(
    r.agrees
      ? `ok: all ${r.rows} rows of season ${season} agree with the chain`
      : "the rows agree, but the problems above need a look",
  );
  process.exit(r.agrees ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) void main();
