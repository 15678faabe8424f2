import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { keccak256 } from "../../lib/keccak.js";
import { httpSequencer, SequencerRefused, SequencerUnreachable } from "./sequencer.js";

const RAW = "0x02f86b8212344";
const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** A sequencer stand-in answering each eth_sendRawTransaction with `answer`. */
async function sequencerAnswering(answer: (res: ServerResponse) => void): Promise<string> {
  const s = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  closers.push(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, body: object) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));

describe("httpSequencer", () => {
  it("answers the hash, the hash of bytes it already holds, or its refusal", async () => {
    const hash = `0x${"ab".repeat(32)}`;
    const ok = await sequencerAnswering((res) => json(res, { jsonrpc: "2.0", id: 1, result: hash }));
    expect(await httpSequencer(ok).sendRawTransaction(RAW)).toBe(hash);
    const known = await sequencerAnswering((res) =>
      json(res, { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "already known" } }),
    );
    expect(await httpSequencer(known).sendRawTransaction(RAW)).toBe(keccak256(RAW));
    const low = await sequencerAnswering((res) =>
      json(res, { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "nonce too low" } }),
    );
    await expect(httpSequencer(low).sendRawTransaction(RAW)).rejects.toThrow(SequencerRefused);
  });

  it("takes an answer without end for no answer, at the bound on what it reads, not at its timeout", async () => {
    const endless = await sequencerAnswering((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const more = () => res.write(`{"pad":"${" ".repeat(64 * 1024)}",`) && setImmediate(more);
      res.on("drain", more);
      more();
    });
    // A timeout past the test's own: only the bound on what is read can end the call.
    await expect(httpSequencer(endless, 600_000).sendRawTransaction(RAW)).rejects.toThrow(SequencerUnreachable);
  });
});
