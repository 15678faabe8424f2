import type { Hex } from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { nodeFetch, type NodeResponse } from "../../lib/nodeFetch.js";

/**
 * The node already holds these exact bytes (geth and Nitro: "already known"; anvil: "already imported"): they were
 * sent.
 */
const ALREADY_KNOWN = /already known|already imported|known transaction/i;

/** The sequencer's answer to a relay: a hash, a refusal, or nothing (unreachable). */
export class SequencerRefused extends Error {}
export class SequencerUnreachable extends Error {}

export interface Sequencer {
  sendRawTransaction(raw: Hex): Promise<Hex>;
}

/** JSON-RPC eth_sendRawTransaction to the configured sequencer URL (anvil on the devnet). */
/** 4 s: with the request's own work, a submit whose sequencer hangs still answers within 5 s. */
export function httpSequencer(url: string, timeoutMs = 4_000): Sequencer {
  return {
    async sendRawTransaction(raw) {
      let res: NodeResponse;
      try {
        // node:http (lib/nodeFetch.ts), as every call of ours to a node: written in the same event-loop turn.
        res = await nodeFetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [raw] }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new SequencerUnreachable(`no answer from the sequencer (${(err as Error).name})`);
      }
      const body = (await res.json().catch(() => null)) as { result?: Hex; error?: { message?: string } } | null;
      if (body?.result && /^0x[0-9a-fA-F]{64}$/.test(body.result)) return body.result;
      if (body?.error && ALREADY_KNOWN.test(body.error.message ?? "")) return keccak256(raw);
      if (body?.error) throw new SequencerRefused(body.error.message ?? "refused");
      if (res.status >= 500 || !body)
        throw new SequencerUnreachable(`the sequencer answered ${res.status} without a result`);
      throw new SequencerRefused(`the sequencer answered ${res.status}`);
    },
  };
}
