import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestClient, http, parseEther, type Address } from "viem";
import { startAnvil, type Anvil } from "../../devnet/anvil.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { publicClient } from "../../lib/chain.js";
import { tracedEthIn } from "./gather.js";

const PLATFORM = "0x00000000000000000000000000000000000c0ffe" as Address;
/** anvil's first unlocked account. */
const SENDER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as Address;

/**
 * The treasury's trace reads on a real anvil, which refuses trace_filter over more than 300 blocks: the first pass
 * narrows its range until the node answers, and the next asks no wider (each pass began with five refused calls).
 */
describe("tracedEthIn over a node that limits trace_filter's range", () => {
  let anvil: Anvil;
  let proxy: Awaited<ReturnType<typeof startRpcProxy>>;
  const widths: number[] = [];

  beforeAll(async () => {
    anvil = await startAnvil({ dieWithParent: true });
    proxy = await startRpcProxy(anvil.rpcUrl, {
      onCall: (c) => {
        if (c.method !== "trace_filter") return;
        const [range] = c.params as [{ fromBlock: string; toBlock: string }];
        widths.push(Number(range.toBlock) - Number(range.fromBlock) + 1);
      },
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await anvil?.stop();
  });

  it("finds the same ETH on every pass, and asks no range the node refused again", async () => {
    const test = createTestClient({ transport: http(anvil.rpcUrl), mode: "anvil" });
    await test.mine({ blocks: 700 });
    const hash = await test.sendUnsignedTransaction({ from: SENDER, to: PLATFORM, value: parseEther("1") });
    await test.mine({ blocks: 200 });
    const chain = publicClient({ transport: http(proxy.url), cacheTime: 0 });
    const week = { first: 1, last: 901 };

    const first = await tracedEthIn(chain, PLATFORM, week);
    expect(first).toEqual(new Map([[hash.toLowerCase(), parseEther("1")]]));
    // The first pass found the node's limit: wider ranges were refused on the way down.
    expect(Math.max(...widths)).toBeGreaterThan(300);
    // The range the node answered (the last call may be the week's shorter tail).
    const step = Math.max(...widths.filter((w) => w <= 300));
    expect(widths.at(-1)).toBeLessThanOrEqual(step);

    widths.length = 0;
    expect(await tracedEthIn(chain, PLATFORM, week)).toEqual(first);
    expect(Math.max(...widths)).toBeLessThanOrEqual(300);
    expect(widths.length).toBe(Math.ceil(901 / step));
  });
});
