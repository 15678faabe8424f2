/**
 * Treasury benchmark (issue 15): a week with `transfers` USDG transfers and a tenth as many ETH
 * sends reaching the platform wallet is closed (split into three buckets, six transfers mined),
 * then GET /api/v1/treasury is timed rebuilt on every request and as cached, and
 * `npm run treasury:verify` is timed against the same devnet. In process (test helpers), real
 * indexer on PostgreSQL.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { getAddress, parseEther, parseUnits } from "viem";
import { mintableAbi } from "../abis/erc20.js";
import { RateLimiter } from "../api/http/rateLimit.js";
import { weekOf } from "../api/treasury/index.js";
import { freshStore, serveApi } from "../test/helpers/api.js";
import { startIndexedDevnet } from "../test/helpers/stack.js";
import { summarize, type Row } from "./stats.js";

const run = promisify(execFile);

/** The closer's depth here: its weeks and its split's transfers (a few blocks, not the chain's 30). */
const CONFIRMATIONS = 3;

export async function benchTreasury(opts: { transfers: number; requests: number }): Promise<Row[]> {
  const chain = await startIndexedDevnet();
  const { dn } = chain;
  const store = await freshStore("pglite");
  let offsetMs = Number((await dn.pub.getBlock()).timestamp) * 1000 - Date.now();
  const clock = () => Date.now() + offsetMs;
  const buckets = {
    operations: getAddress("0x00000000000000000000000000000000000b0001"),
    buybacks: getAddress("0x00000000000000000000000000000000000b0002"),
    treasury: getAddress("0x00000000000000000000000000000000000b0003"),
  };
  const serve = (cacheMs: number) =>
    serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      indexed: chain.ix.liveReads().reads,
      limiter: new RateLimiter(clock, 10_000, false),
      config: { treasuryBuckets: buckets },
      treasury: { confirmations: CONFIRMATIONS, intervalMs: 3_600_000, cacheMs },
    });
  const fresh = await serve(0);
  const cached = await serve(15_000);
  try {
    const platform = fresh.config.feeRecipient;
    const deployer = dn.walletFor(dn.deployer);
    const week = weekOf(Number((await dn.pub.getBlock()).timestamp));
    for (let i = 0; i < opts.transfers; i++) {
      await deployer.writeContract({
        address: dn.token("USDG"),
        abi: mintableAbi,
        functionName: "mint",
        args: [platform, parseUnits("3", 6)],
      });
      if (i % 10 === 0) await deployer.sendTransaction({ to: platform, value: parseEther("0.001") });
    }
    await dn.test.setNextBlockTimestamp({ timestamp: BigInt(week.end + 60) });
    await dn.test.mine({ blocks: 5 });
    offsetMs = (week.end + 60) * 1000 - Date.now();
    await chain.ix.waitFor(await dn.pub.getBlockNumber());

    // A close is two passes: one sends the split, the next records the week once the split is CONFIRMATIONS deep.
    const t0 = performance.now();
    const sent = await fresh.app.services.treasury.closer.closeDue();
    const sendMs = performance.now() - t0;
    if (sent.length) throw new Error("a week recorded before its split was deep enough");
    await dn.test.mine({ blocks: CONFIRMATIONS });
    await chain.ix.waitFor(await dn.pub.getBlockNumber());
    const t1 = performance.now();
    const rows = await fresh.app.services.treasury.closer.closeDue();
    const closeMs = sendMs + performance.now() - t1;
    if (rows.length < 1 || rows.at(-1)!.transfers.length !== 6)
      throw new Error(`closed ${rows.length} rows, ${rows.at(-1)?.transfers.length} transfers`);

    // Readers never build the preview (the worker does): "rebuilt" times one build and the GET after it.
    const time = async (api: typeof fresh, n: number, rebuild = false) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = performance.now();
        if (rebuild) await api.app.services.treasury.reader.refresh();
        const r = await api.call("GET", "/api/v1/treasury");
        if (r.status !== 200) throw new Error(`treasury answered ${r.status}`);
        out.push(performance.now() - s);
      }
      return out;
    };
    const rebuilt = await time(fresh, Math.max(10, Math.floor(opts.requests / 10)), true);
    const hits = await time(cached, opts.requests);
    const v0 = performance.now();
    const { stdout } = await run(process.execPath, ["scripts/treasury-verify.mjs", fresh.url, dn.anvil.rpcUrl], {
      timeout: 300_000,
    });
    const verifyMs = performance.now() - v0;
    if (!stdout.startsWith("ok")) throw new Error(`verify: ${stdout}`);
    return [
      summarize(
        `treasury: close a week of ${opts.transfers} USDG + ${Math.ceil(opts.transfers / 10)} ETH transfers in (6 ` +
          `split transfers mined)`,
        [closeMs],
        "ms",
      ),
      summarize(
        "treasury: preview built by the worker, then GET /api/v1/treasury (chain check + preview)",
        rebuilt,
        "ms",
      ),
      summarize("treasury: GET /api/v1/treasury cached", hits, "ms"),
      summarize(`treasury: npm run treasury:verify (${rows.length} rows)`, [verifyMs], "ms"),
    ];
  } finally {
    await cached.close();
    await fresh.close();
    await store.drop();
    await chain.stop();
  }
}
