/**
 * View answers kept between the standings worker's passes while the contract that gave them is unchanged (issue 29
 * point 6): the sanctions list's `isSanctioned` and the partner vault's `getAgent` for every entrant, read again at
 * each new block, were ~250 ms of a pass after 100 trades. A contract's state at a block is named by eth_getProof's
 * storage root and code hash: where both are the same as at the block the answers were read at, the answers are the
 * same, since these views read the contract's own storage alone (a mapping each; an answer that read another
 * contract or the block would not be covered, so only these two are kept). Only new keys are read then.
 *
 * Where this is used, and why that is enough: the live standings only. A decision reads both at its anchor block
 * without these (prizeBoard without `kept`), and a payout reads the sanctions list again right before it is signed.
 * A node that does not answer eth_getProof, or a changed root, reads every key, as before; an unread answer (null)
 * is never kept.
 */
import type { Address, PublicClient } from "viem";

export type KeptView<K, V> = { root: string | null; answers: Map<K, V> };
export const keptView = <K, V>(): KeptView<K, V> => ({ root: null, answers: new Map() });

/** The contract's storage root and code hash at `block`; null where the node does not answer. */
async function stateAt(chain: PublicClient, address: Address, block: bigint): Promise<string | null> {
  try {
    const p = await chain.getProof({ address, storageKeys: [], blockNumber: block });
    return `${p.storageHash}:${p.codeHash}`;
  } catch {
    return null;
  }
}

/**
 * `read`'s answers for `keys` at `block`, from `kept` where `contract`'s state is the one they were read in; the rest
 * read now. `kept` then holds the answers at this state.
 */
export async function viewAt<K, V>(
  chain: PublicClient,
  kept: KeptView<K, V>,
  o: { contract: Address; block: bigint; keys: K[] },
  read: (keys: K[]) => Promise<Map<K, V | null>>,
): Promise<Map<K, V | null>> {
  const root = await stateAt(chain, o.contract, o.block);
  if (!root || root !== kept.root) kept.answers.clear();
  kept.root = root;
  const todo = [...new Set(o.keys)].filter((k) => !kept.answers.has(k));
  const fresh = todo.length ? await read(todo) : new Map<K, V | null>();
  if (root) for (const [k, v] of fresh) if (v !== null) kept.answers.set(k, v);
  return new Map(o.keys.map((k) => [k, kept.answers.get(k) ?? fresh.get(k) ?? null]));
}
