/**
 * Token screening benchmark: new tokens (each with a real v4 pool against USDG, indexed by the
 * real indexer on PostgreSQL) screened on demand through GET /tokens/<address>, then cached reads
 * of one screened token under autocannon. Server in its own process (bench/httpServer.ts).
 */
import type { ChildProcess } from "node:child_process";
import autocannon from "autocannon";
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseAbi,
  parseUnits,
  zeroAddress,
  type Address,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startAnvil } from "../devnet/anvil.js";
import { approveForPositions, devnetChain, openFullRangePool } from "../devnet/deploy.js";
import { devnetAccount } from "../lib/devnetAccount.js";
import { fixtureBytecode } from "../devnet/artifacts.js";
import { ensureSnapshot, SNAPSHOT_FILE, UNIVERSE_FILE } from "../devnet/snapshot.js";
import { readUniverse } from "../lib/universe.js";
import { mintableAbi } from "../abis/erc20.js";
import { sortCurrencies, sqrtPriceX96FromAmounts } from "../lib/v4.js";
import { startIndexer } from "../test/helpers/indexer.js";
import { summarize, type Row } from "./stats.js";
import { server } from "./http.js";

export async function benchTokens(opts: { newTokens: number; seconds: number }): Promise<Row[]> {
  await ensureSnapshot();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const u = readUniverse(UNIVERSE_FILE);
  const chain = devnetChain(anvil.rpcUrl);
  const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20, cacheTime: 0 });
  const account = devnetAccount(0);
  const wallet = createWalletClient({ chain, transport: http(anvil.rpcUrl), account });
  const send = async (to: Address, data: `0x${string}`) =>
    void (await pub.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to, data }) }));
  const usdg = u.tokens.USDG!.address;
  const tokens: Address[] = [];
  for (let i = 0; i < opts.newTokens; i++) {
    const hash = await wallet.deployContract({
      abi: parseAbi(["constructor(string, string, uint8)"]),
      bytecode: fixtureBytecode("TestToken", "TestToken"),
      args: [`Bench Token ${i}`, `BT${i}`, 18],
    });
    const token = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
    await send(
      token,
      encodeFunctionData({
        abi: mintableAbi,
        functionName: "mint",
        args: [account.address, parseUnits("1000000", 18)],
      }),
    );
    const ctx = { wallet, pub: pub as never, account, chain };
    await approveForPositions(ctx, token, u.contracts.positionManager);
    const [currency0, currency1] = sortCurrencies(token, usdg);
    const [a0, a1] =
      currency0 === token
        ? [parseUnits("100000", 18), parseUnits("100000", 6)]
        : [parseUnits("100000", 6), parseUnits("100000", 18)];
    const key = { currency0, currency1, fee: 3000, tickSpacing: 60, hooks: zeroAddress };
    await openFullRangePool(ctx, u.contracts, key, sqrtPriceX96FromAmounts(a0, a1), a0, a1);
    tokens.push(token);
  }
  const ix = await startIndexer({ anvilPort: anvil.port, backend: "postgres" });
  let child: ChildProcess | null = null;
  try {
    await ix.waitFor(await pub.getBlockNumber(), 180_000);
    const indexedPools = await ix.liveReads().reads.poolsOf(tokens[0]!);
    if (indexedPools.length !== 1) throw new Error(`the indexer has ${indexedPools.length} pools for ${tokens[0]}`);
    const s = await server("app", anvil.port, { BENCH_VIEWS: ix.viewsSchema, BENCH_DATABASE_URL: ix.databaseUrl! });
    child = s.child;
    const port = s.port;
    const base = `http://127.0.0.1:${port}/api/v1`;
    const a = privateKeyToAccount(generatePrivateKey());
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json() as any);
    const ch = await post("/auth/challenge", { address: a.address });
    const apiKey = (
      await post("/auth/verify", { address: a.address, signature: await a.signMessage({ message: ch.message }) })
    ).api_key as string;
    const headers = { authorization: `Bearer ${apiKey}` };
    const screenMs: number[] = [];
    for (const t of tokens) {
      const t0 = performance.now();
      const res = await fetch(`${base}/tokens/${t}`, { headers });
      const body = (await res.json()) as any;
      if (res.status !== 200 || body.screen_status !== "SCREENED" || body.tier === "blocked")
        throw new Error(`screen of ${t}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      screenMs.push(performance.now() - t0);
    }
    await autocannon({ url: `${base}/tokens/${tokens[0]}`, headers, connections: 32, duration: 2 });
    const r = await autocannon({
      url: `${base}/tokens/${tokens[0]}`,
      headers,
      connections: 32,
      duration: opts.seconds,
    });
    if (r.non2xx > 0) throw new Error(`cached reads: ${r.non2xx} non-2xx`);
    return [
      summarize(
        `screening a new token with a v4 pool (GET /tokens/<address>, first call), ${tokens.length} tokens`,
        screenMs,
        "ms",
      ),
      {
        name: "cached GET /tokens/<address>: requests/s (mean per second)",
        unit: "req/s",
        n: r.requests.sent,
        p50: r.requests.average,
        p99: r.requests.p1,
        min: r.requests.min,
        max: r.requests.max,
        mean: r.requests.average,
      },
      {
        name: "cached GET /tokens/<address>: latency",
        unit: "ms",
        n: r.requests.sent,
        p50: r.latency.p50,
        p99: r.latency.p99,
        min: r.latency.min,
        max: r.latency.max,
        mean: r.latency.average,
      },
    ];
  } finally {
    if (child) await new Promise((res) => (child!.once("exit", res), child!.kill("SIGTERM")));
    await ix.cleanup();
    await anvil.stop();
  }
}
