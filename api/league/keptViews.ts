/**
 * View answers kept between the standings worker's passes while the contract that gave them is unchanged (issue 29
 * point 6): the sanctions list's `isSanctioned` and the partner vault's `getAgent` for every entrant, read again at
 * each new block, were ~4,000 view calls a pass. A contract's state at a block is named by eth_getProof's storage
 * root and code hash; these views read the contract's own storage alone (a mapping each; a proxy or a view that read
 * another contract or the block would not be covered, so only these two are kept, and a deployment that puts such a
 * contract behind them must not use this), so where two blocks name the same state their answers are the same.
 *
 * Answers are kept only as read at a final block (FINALITY_BLOCKS below the pass's block), where the root and the
 * read cannot come from two forks (a helper's review: a reorganisation between the proof and the read at the head
 * filed one fork's answers under the other's root, for good). At the pass's block, where its root is the kept one,
 * the kept answers are its answers; else the view is read there, and nothing is kept.
 *
 * Where this is used, and why that is enough: the live standings only. A decision reads both at its anchor block
 * without these (prizeBoard without `kept`), and a payout reads the sanctions list again right before it is signed.
 * A node that does not answer eth_getProof reads every key, as before; an unread answer (null) is never kept.
 */
import type { Address, PublicClient } from "viem";
import { FINALITY_BLOCKS } from "../../lib/finality.js";

export type KeptView<K, V> = { root: string | null; answers: Map<K, V> };
export const keptView = <K, V>(): KeptView<K, V> => ({ root: null, answers: new Map() });

/** The contract's storage root and code hash at `block`; null where the node does not answer. */
async function stateAt(chain: PublicClient, address: Address, block: bigint): Promise<string | null> {
  if (block < 0n) return null;
  try {
    const p = await chain.getProof({ address, storageKeys: [], blockNumber: block });
    return `${p.storageHash}:${p.codeHash}`;
  } catch {
    return null;
  }
}

/**
 * `read`'s answers for `keys` at `block`: from `kept` (answers read at the final block below it) where `contract`'s
 * state at `block` is the kept one, keys not kept yet read at that final block; else read at `block`.
 */
export async function viewAt<K, V>(
  chain: PublicClient,
  kept: KeptView<K, V>,
  o: { contract: Address; block: bigint; keys: K[] },
  read: (keys: K[], block: bigint) => Promise<Map<K, V | null>>,
): Promise<Map<K, V | null>> {
  const final = o.block - BigInt(FINALITY_BLOCKS);
  const [now, settled] = await Promise.all([stateAt(chain, o.contract, o.block), stateAt(chain, o.contract, final)]);
  if (!settled || settled !== kept.root) kept.answers.clear();
  kept.root = settled;
  if (!now || now !== settled) return read(o.keys, o.block);
  const todo = [...new Set(o.keys)].filter((k) => !kept.answers.has(k));
  const fresh = todo.length ? await read(todo, final) : new Map<K, V | null>();
  for (const [k, v] of fresh) if (v !== null) kept.answers.set(k, v);
  return new Map(o.keys.map((k) => [k, kept.answers.get(k) ?? fresh.get(k) ?? null]));
}
