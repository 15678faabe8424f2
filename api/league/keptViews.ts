/**
 * View answers kept between the standings worker's passes while the contract that gave them is unchanged (issue 29
 * point 6): the sanctions list's `isSanctioned` and the partner vault's `getAgent` for every entrant, read again at
 * each new block, were ~4,000 view calls a pass. A contract's state at a block is named by eth_getProof's storage
 * root and code hash; where the contract's code reads nothing but its own storage and input (selfContained: no call
 * out, so no proxy, no block or other account), two blocks that name the same state give the same answers. Code
 * that is not selfContained is read at every pass.
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
import { hexToBytes, type Address, type Hex, type PublicClient } from "viem";
import { FINALITY_BLOCKS } from "../../lib/finality.js";

export type KeptView<K, V> = {
  root: string | null;
  answers: Map<K, V>;
  /** The last code hash looked at, and whether its code is selfContained. */
  code: { hash: string; contained: boolean } | null;
};
export const keptView = <K, V>(): KeptView<K, V> => ({ root: null, answers: new Map(), code: null });

/**
 * Opcodes whose result is not the contract's own code, storage and the call's input: the block and transaction, other
 * accounts, calls out (a proxy's DELEGATECALL among them) and creations. A view in code that holds none of them answers
 * the same wherever the storage root and code hash are the same.
 */
const OUTSIDE = new Set([
  0x31, 0x32, 0x3a, 0x3b, 0x3c, 0x3f, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x47, 0x48, 0x49, 0x4a, 0xf0, 0xf1, 0xf2,
  0xf4, 0xf5, 0xfa,
]);

/**
 * Whether runtime `code` reads nothing but its own storage and input (no opcode of OUTSIDE, PUSH data skipped, the
 * compiler's CBOR metadata trailer cut off by the length in its last two bytes). Bytes of appended data that look
 * like such an opcode answer false: the view is then read at every pass, as without keeping.
 */
export function selfContained(code: Hex): boolean {
  const bytes = hexToBytes(code);
  let end = bytes.length;
  if (end >= 2) {
    const meta = (bytes[end - 2]! << 8) | bytes[end - 1]!;
    const head = meta + 2 <= end ? bytes[end - 2 - meta]! : 0;
    // A CBOR map of one to five entries starts the trailer (solc writes ipfs and solc, vyper its own).
    if (head >= 0xa1 && head <= 0xa5) end -= meta + 2;
  }
  if (end === 0) return false;
  for (let i = 0; i < end; i++) {
    const op = bytes[i]!;
    if (OUTSIDE.has(op)) return false;
    if (op >= 0x60 && op <= 0x7f) i += op - 0x5f;
  }
  return true;
}

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

/** The code hash of a state as stateAt names it. */
const codeHashOf = (root: string) => root.split(":")[1]!;

/** Whether the contract's code at `block` (named by the state `root`) is selfContained; read once per code hash. */
async function contained(
  chain: PublicClient,
  kept: KeptView<unknown, unknown>,
  address: Address,
  block: bigint,
  root: string,
) {
  const hash = codeHashOf(root);
  if (kept.code?.hash === hash) return kept.code.contained;
  const code = await chain.getCode({ address, blockNumber: block }).catch(() => null);
  if (!code) return false;
  kept.code = { hash, contained: selfContained(code) };
  return kept.code.contained;
}

/**
 * `read`'s answers for `keys` at `block`: from `kept` (answers read at the final block below it) where `contract`'s
 * state at `block` is the kept one, keys not kept yet read at that final block; else, or without `kept` (a decision),
 * read at `block`.
 */
export async function viewAt<K, V>(
  chain: PublicClient,
  kept: KeptView<K, V> | undefined,
  o: { contract: Address; block: bigint; keys: K[] },
  read: (keys: K[], block: bigint) => Promise<Map<K, V | null>>,
): Promise<Map<K, V | null>> {
  if (!kept) return read(o.keys, o.block);
  const final = o.block - BigInt(FINALITY_BLOCKS);
  // Every key kept: where the state at the block is the one they were read in, they are its answers, and the final
  // block's state is not asked (anvil took 26-68 ms a proof for the vault's and the list's storage, four at once, and
  // they held the league's reads in flight from the native scan: issue 29 point 6). A key not kept: both states, side
  // by side; every key kept but the state moved: the final block's after the block's.
  const allKept = kept.root !== null && o.keys.every((k) => kept.answers.has(k));
  const settling = allKept ? null : stateAt(chain, o.contract, final);
  const now = await stateAt(chain, o.contract, o.block);
  if (allKept && now !== null && now === kept.root && kept.code?.hash === codeHashOf(now) && kept.code.contained)
    return new Map(o.keys.map((k) => [k, kept.answers.get(k)!]));
  const settled = await (settling ?? stateAt(chain, o.contract, final));
  // Another state: a new map, not the old one emptied. A call still reading (a pass that failed beside it left it
  // running, and the next pass moved the root) fills the map of the state it read in, which nothing holds any more,
  // instead of filing its answers under this one (a review, helper-51).
  if (!settled || settled !== kept.root) kept.answers = new Map();
  kept.root = settled;
  const answers = kept.answers;
  if (!now || now !== settled || !(await contained(chain, kept, o.contract, final, settled)))
    return read(o.keys, o.block);
  const todo = [...new Set(o.keys)].filter((k) => !answers.has(k));
  const fresh = todo.length ? await read(todo, final) : new Map<K, V | null>();
  for (const [k, v] of fresh) if (v !== null) answers.set(k, v);
  return new Map(o.keys.map((k) => [k, answers.get(k) ?? fresh.get(k) ?? null]));
}
