import type { Hex } from "viem";
import { fastPairHops, type FastPair } from "../../lib/fastRoutes.js";
import { describeRouterCall, type PoolRoute } from "../trading/index.js";

/** A pinned pair as the router encoder takes a route. */
export function poolRouteOf(pair: FastPair): PoolRoute {
  return {
    id: `fast:${pair.token_in}>${pair.token_out}`,
    venue: "v4",
    label: `${pair.token_in} -> ${pair.token_out} (pinned)`,
    hops: fastPairHops(pair).map((h, i) => ({ ...h, id: pair.hops[i]!.pool_id, fee: pair.hops[i]!.fee, priceX96: 0n })),
  };
}

/** SPEC's names for what differs between the rebuilt call and the signed one (NOT_AS_BUILT diffs). */
const FIELD_NAMES: Record<string, string> = {
  commands: "COMMANDS",
  fee_recipient: "FEE_RECIPIENT",
  fee_token: "FEE_TOKEN",
  recipient: "RECIPIENT",
  pools: "ROUTE",
  token_in: "ROUTE",
  token_out: "ROUTE",
};

/**
 * Empty when the signed calldata is the rebuilt one byte for byte. Otherwise each decoded field
 * that differs under SPEC's name (an input fee turned output fee is FEE_SIDE, a fee command more
 * or less FEE_COUNT, amounts, deadline and permit CALLDATA), or AS_BUILT when only the bytes differ.
 */
export function notAsBuiltDiffs(
  built: Hex,
  signed: Hex,
): { field: string; built: string | null; signed: string | null; detail: string }[] {
  if (built.toLowerCase() === signed.toLowerCase()) return [];
  const a = describeRouterCall(built);
  const b = describeRouterCall(signed);
  const feeCommands = (x: Record<string, string | null>) =>
    (x.commands ?? "").split(",").filter((c) => c === "TRANSFER" || c === "PAY_PORTION").length;
  const diffs: { field: string; built: string | null; signed: string | null; detail: string }[] = [];
  if (feeCommands(a) !== feeCommands(b))
    diffs.push({
      field: "FEE_COUNT",
      built: String(feeCommands(a)),
      signed: String(feeCommands(b)),
      detail: "fee commands",
    });
  else if ((a.fee_amount === undefined) !== (b.fee_amount === undefined))
    diffs.push({
      field: "FEE_SIDE",
      built: a.fee_amount !== undefined ? "input" : "output",
      signed: b.fee_amount !== undefined ? "input" : "output",
      detail: "fee side",
    });
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if ((a[k] ?? null) === (b[k] ?? null)) continue;
    diffs.push({ field: FIELD_NAMES[k] ?? "CALLDATA", built: a[k] ?? null, signed: b[k] ?? null, detail: k });
  }
  if (!diffs.length)
    diffs.push({
      field: "AS_BUILT",
      built: `${built.slice(0, 18)}…`,
      signed: `${signed.slice(0, 18)}…`,
      detail: "bytes",
    });
  return diffs;
}
