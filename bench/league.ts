/**
 * League benchmark (issue 18): the prize standings of a season with `entrants` entries of `trades`
 * relayed, mined trades each (rows written straight into the app store on PostgreSQL; their marks,
 * links, sanctions and vault reads come from a real devnet and its indexer). Times a full
 * rebuild, a pass after 100 new trades in one new block (issue 29 point 6), and the served GET.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { zeroAddress, type Address, type Hex } from "viem";
import { RateLimiter } from "../api/http/rateLimit.js";
import { calendarAt } from "../lib/league/calendar.js";
import { freshStore, serveApi } from "../test/helpers/api.js";
import { freshenMarket, startIndexedDevnet } from "../test/helpers/stack.js";
import { summarize, type Row } from "./stats.js";
import type { Db } from "../api/ports/store/db.js";
import { partnerAgentVaultAbi } from "../abis/fixtures.js";
import { FINALITY_BLOCKS } from "../lib/finality.js";
import type { Devnet } from "../test/helpers/devnet.js";
import { buildRouterSwap } from "../lib/router/swap.js";
import { lc } from "../lib/address.js";

export async function benchLeague(opts: {
  entrants: number;
  trades: number;
  recomputes: number;
  increments: number;
  requests: number;
}): Promise<Row[]> {
  const chain = await startIndexedDevnet({ before: freshenMarket });
  const { dn } = chain;
  const store = await freshStore("postgres");
  const now = Number((await dn.pub.getBlock()).timestamp);
  const offsetMs = now * 1000 - Date.now();
  const clock = () => Date.now() + offsetMs;
  const serve = (cacheMs: number) =>
    serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      clock,
      indexed: chain.ix.liveReads().reads,
      limiter: new RateLimiter(clock, 10_000, false),
      league: { settleIntervalMs: 0, cacheMs },
      hostedScheduler: { intervalMs: 0 },
    });
  // No timer: the bench runs the standings worker's passes itself and times each.
  const api = await serve(0);
  const worker = api.app.services.league.boards;
  try {
    const o = {
      entrants: opts.entrants,
      trades: opts.trades,
      now,
      usdg: dn.token("USDG"),
      feeRecipient: api.config.feeRecipient,
      head: Number(await dn.pub.getBlockNumber()),
      txs: routerTxs(dn, api.config.feeRecipient),
    };
    const firstAgent = await registerAgents(dn, o.entrants);
    // The entrants' wallets sent their trades: a live season's wallets have nonces past them (the native scan probes an
    // account at nonce 0 every pass, as one that may be created).
    for (let i = 0; i < o.entrants; i++) await dn.test.setNonce({ address: wallet(i) as Address, nonce: o.trades });
    await seed(store.db, o, firstAgent);
    // A live chain has a final block (FINALITY_BLOCKS below its head) with state: the kept views are read there.
    await dn.test.mine({ blocks: FINALITY_BLOCKS + 1 });
    o.head = Number(await dn.pub.getBlockNumber());
    const key = `prize:${calendarAt(now).current.number}`;
    // Each pass's CPU in this process too (the API is served in it): on a shared machine the wall moves by +-30 %
    // between runs, its CPU much less.
    const cpu: { full: number[]; incremental: number[] } = { full: [], incremental: [] };
    const pass = async (phase?: keyof typeof cpu) => {
      const s = performance.now();
      const c = process.cpuUsage();
      if ((await worker.runOnce()) !== 1) {
        // The worker keeps a failed computation's error for its readers a few seconds: say why.
        const why = await worker.get(key).then(
          () => "no error kept",
          (err: Error) => err.stack ?? String(err),
        );
        throw new Error(`the standings pass computed no board: ${why}`);
      }
      const used = process.cpuUsage(c);
      if (phase) cpu[phase].push((used.user + used.system) / 1000);
      return performance.now() - s;
    };
    // The first computation also reads the season's native ETH history from scratch (kept across rebuilds, as in a
    // live process): timed apart, so the rebuilds' median is of rebuilds alone.
    const first = [await pass()];
    // BENCH_CPU_PROF=<dir>: a CPU profile of the incremental passes (this process: the API is served in it);
    // BENCH_HEAP_PROF=<dir>: a sampled profile of what they allocate (garbage collection follows allocation);
    // BENCH_PROF_PASSES=full: of the full rebuilds instead.
    const profile = () =>
      process.env.BENCH_CPU_PROF
        ? profileInto(process.env.BENCH_CPU_PROF, "cpu")
        : process.env.BENCH_HEAP_PROF
          ? profileInto(process.env.BENCH_HEAP_PROF, "heap")
          : null;
    const profilesFull = process.env.BENCH_PROF_PASSES === "full";
    const fullProfiler = profilesFull ? await profile() : null;
    const full: number[] = [];
    for (let i = 0; i < opts.recomputes; i++) {
      api.app.services.league.reader.forget();
      full.push(await pass("full"));
    }
    await fullProfiler?.();
    const incremental: number[] = [];
    const profiler = profilesFull ? null : await profile();
    for (let i = 0; i < opts.increments; i++) {
      // One new block and its trades (the chain reads then have a block to read, as a live season's would).
      await dn.test.mine({ blocks: 1 });
      const block = await dn.pub.getBlock();
      o.head = Number(block.number);
      await addTrades(store.db, o, 100, i, Number(block.timestamp));
      incremental.push(await pass("incremental"));
    }
    await profiler?.();
    const hits: number[] = [];
    for (let i = 0; i < opts.requests; i++) {
      const s = performance.now();
      const r = await api.call("GET", "/api/v1/league/standings");
      if (r.status !== 200 || r.json.rows.length !== opts.entrants)
        throw new Error(`standings answered ${r.status} with ${r.json?.rows?.length} rows: ${r.text.slice(0, 300)}`);
      hits.push(performance.now() - s);
    }
    const label = `${opts.entrants} entrants x ${opts.trades} trades`;
    return [
      summarize(
        `league: standings first computation, the native ETH history read from scratch (${label})`,
        first,
        "ms",
      ),
      summarize(`league: standings full rebuild (${label})`, full, "ms"),
      summarize(`league: standings full rebuild, CPU of the process (${label})`, cpu.full, "ms"),
      summarize(`league: standings incremental pass after 100 new trades (${label})`, incremental, "ms"),
      summarize(`league: standings incremental pass, CPU of the process (${label})`, cpu.incremental, "ms"),
      summarize(`league: GET standings served (${label})`, hits, "ms"),
    ];
  } finally {
    await api.close();
    await store.drop();
    await chain.stop();
  }
}

/**
 * Registers `n` partner agents in the devnet's vault (as entries need: SPEC's NOT_AN_AGENT), each with its bench
 * wallet as owner and agent wallet; answers the first one's id. Without them every standings pass read 1,000 reverting
 * `getAgent` calls, which no live season has.
 */
async function registerAgents(dn: Devnet, n: number): Promise<number> {
  const w = dn.walletFor(dn.deployer);
  const vault = { address: dn.universe.contracts.partnerAgentVault, abi: partnerAgentVaultAbi } as const;
  const first = Number(await dn.pub.readContract({ ...vault, functionName: "agentCount" })) + 1;
  let nonce = await dn.pub.getTransactionCount({ address: dn.deployer.address, blockTag: "pending" });
  for (let i = 0; i < n; i += 50) {
    const hashes = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, j) =>
        w.writeContract({
          ...vault,
          functionName: "register",
          args: [dn.token("USDG"), `B${i + j}`, `Bench ${i + j}`, wallet(i + j) as Address, wallet(i + j) as Address],
          nonce: nonce++,
          gas: 300_000n,
        }),
      ),
    );
    for (const hash of hashes) await dn.mined(hash);
  }
  return first;
}

/**
 * Starts this process's CPU profiler, or its sampling heap profiler (every 32 KB allocated); the function returned
 * stops it and writes the profile into `dir` (.cpuprofile or .heapprofile, as Chrome's DevTools read them).
 */
async function profileInto(dir: string, kind: "cpu" | "heap"): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  if (kind === "cpu") {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  } else
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 32_768,
      // Garbage too: what a pass allocates, not only what it keeps.
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  return async () => {
    const { profile } =
      kind === "cpu" ? await session.post("Profiler.stop") : await session.post("HeapProfiler.stopSampling");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `league-passes-${Date.now()}.${kind}profile`), JSON.stringify(profile));
    session.disconnect();
  };
}

type SeedOptions = {
  entrants: number;
  trades: number;
  now: number;
  usdg: string;
  feeRecipient: string;
  head: number;
  txs: { sell: string; buy: string };
};

/**
 * Each side's plan transactions as a prepare stores them: the Universal Router's execute on the devnet's ETH/USDG pool,
 * the USDG side with its Permit2 permit (3-4 KB of JSON a plan), so a read that takes the plans costs what a live one
 * does (an empty call made the plans' columns look free).
 */
function routerTxs(dn: Devnet, feeRecipient: Address): { sell: string; buy: string } {
  const usdg = dn.token("USDG");
  const c = dn.universe.contracts;
  const pool = dn.universe.pools.find(
    (p) =>
      lc(p.hooks) === zeroAddress &&
      [lc(p.currency0), lc(p.currency1)].sort().join() === [zeroAddress, lc(usdg)].sort().join(),
  );
  if (!pool) throw new Error("the devnet has no hookless ETH/USDG pool");
  const { currency0, currency1, fee, tickSpacing, hooks } = pool;
  const key = { currency0, currency1, fee, tickSpacing, hooks };
  const swap = (tokenIn: Address, tokenOut: Address, amountIn: bigint, permit: boolean) => {
    const zeroForOne = lc(tokenIn) === lc(currency0);
    const tx = buildRouterSwap({
      chainId: dn.chain.id,
      router: c.universalRouter,
      route: { hops: [{ key, zeroForOne, currencyIn: tokenIn, currencyOut: tokenOut }] },
      tokenIn,
      tokenOut,
      weth: c.weth9,
      amountIn,
      amountOutMin: (amountIn * 99n) / 100n,
      fee: { side: "input", bps: 25, recipient: feeRecipient, amount: (amountIn * 25n) / 10_000n },
      deadline: 2_000_000_000,
      permit: permit
        ? {
            permit: {
              details: { token: tokenIn, amount: amountIn, expiration: 2_000_000_000, nonce: 7 },
              spender: c.universalRouter,
              sigDeadline: 2_000_000_000n,
            },
            signature: `0x${"ab".repeat(65)}` as Hex,
          }
        : null,
    });
    return JSON.stringify([{ kind: "swap", tx }]);
  };
  return { sell: swap(zeroAddress, usdg, 10n ** 16n, false), buy: swap(usdg, zeroAddress, 30_000_000n, true) };
}
const wallet = (i: number) => `0x${(0xa0000 + i).toString(16).padStart(40, "0")}`;

/**
 * `n` more mined, final trades of round `round`, one for each of `n` entrants spread over the field, in the latest
 * block at its time `ts` (as a new block's trades come in: every round at one second put each new trade beside all
 * the earlier rounds' in copy detection's window), on the entrants' existing plans.
 */
async function addTrades(db: Db, o: SeedOptions, n: number, round: number, ts: number) {
  const step = Math.max(1, Math.floor(o.entrants / n));
  const wallets = Array.from({ length: n }, (_, i) => wallet((i * step + round) % o.entrants));
  await db.query(
    `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in, amount_out_min,
           tx_hash, created_at, block_number, block_time, outcome, final)
     SELECT w, 0, p.id, 'prepare', 'mined', NULL, NULL, '0', '0', w || '-new-' || $2 || '-' || i, $3, $4, $3,
       json_build_object('tokenIn', $5::text, 'amountIn', '20000000000000000', 'tokenOut', $6::text,
         'amountOut', '59800000')::text, true
     FROM unnest($1::text[]) WITH ORDINALITY AS x(w, i)
     JOIN LATERAL (SELECT id FROM app.plans WHERE wallet = x.w ORDER BY id LIMIT 1) p ON true`,
    [wallets, round, ts, o.head, zeroAddress, o.usdg.toLowerCase()],
  );
}

/** One entrant in this many copies the one before it (a season has a few copiers, not none, not all). */
const COPY_EVERY = 20;
const COPY_LAG_S = 30;

/** Entries of the current season and their trades (ETH sold for USDG and bought back, in turn), in a few statements. */
async function seed(db: Db, o: SeedOptions, firstAgent: number) {
  const season = calendarAt(o.now).current;
  const eth = { token: "ETH", address: zeroAddress, symbol: "ETH", name: "Ether", decimals: 18 };
  const usdg = { token: "USDG", address: o.usdg.toLowerCase(), symbol: "USDG", name: "USDG", decimals: 6 };
  const summary = JSON.stringify({
    fee: { bps: 25, side: "input", recipient: o.feeRecipient, token: zeroAddress, amount: "0" },
  });
  for (let i = 0; i < o.entrants; i++) {
    const w = wallet(i);
    await db.query(
      `INSERT INTO app.league_entries (entry_id, board, agent_id, kind, wallet, entrant, owner, agent_wallet, token,
             symbol, name, proof, confirmed, confirmed_at, from_season, entered_at)
       VALUES ($1, 'prize', $2, 'wallet', $3, $4, $3, $3, $5, $6, $7, 'owner_key', false, NULL, $8, $9)`,
      [
        `le_b${String(i).padStart(15, "0")}`,
        firstAgent + i,
        w,
        `prize league: trading wallet ${w}`,
        o.usdg.toLowerCase(),
        `B${i}`,
        `Bench ${i}`,
        season.number,
        season.starts - 86_400,
      ],
    );
    const plan = async (tokenIn: object, tokenOut: object, txs: string) =>
      (
        await db.query<{ id: string }>(
          "INSERT INTO app.plans (key_id, wallet, kind, execution, token_in, token_out, amount_in, amount_out_min, " +
            "fee_bps, deadline, txs, summary, created_at) " +
            "VALUES (0, $1, 'trade', 'router', $2, $3, '0', '0', 25, 0, $4, $5, 0) RETURNING id::text AS id",
          [w, JSON.stringify(tokenIn), JSON.stringify(tokenOut), txs, summary],
        )
      )[0]!;
    const sell = await plan(eth, usdg, o.txs.sell);
    const buy = await plan(usdg, eth, o.txs.buy);
    // Trades spread over the season so far at times of their own (a hash of entrant and trade), on the blocks the
    // chain has in the order of their times (marks are read at each). One entrant in COPY_EVERY copies the one before
    // it: its trades COPY_LAG_S after that one's, a block later. Times in step with the entrant's number (i * 7919 s
    // apart) made each entrant follow another in 90 % of its trades: all 1,000 were flagged copiers, as no season is.
    const copies = i % COPY_EVERY === COPY_EVERY - 1;
    await db.query(
      `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in, amount_out_min,
             tx_hash, created_at, block_number, block_time, outcome, final)
       SELECT $1, 0, CASE WHEN g % 2 = 0 THEN $2::bigint ELSE $3::bigint END, 'prepare', 'mined', NULL, NULL, '0',
         '0', $1 || '-' || g, $4::bigint + g,
         LEAST($5::bigint, 1 + (ts - $4::bigint) * ($5::bigint - 1) / GREATEST(1, $6::bigint - $4::bigint) + $12::int),
         ts,
         CASE WHEN g % 2 = 0
           THEN json_build_object('tokenIn', $7::text, 'amountIn', ((10 + g) * 1000000000000000)::text, 'tokenOut',
             $8::text, 'amountOut', ((10 + g) * 2990000)::text)::text
           ELSE json_build_object('tokenIn', $8::text, 'amountIn', ((10 + g) * 2990000)::text, 'tokenOut', $7::text,
             'amountOut', ((10 + g) * 990000000000000)::text)::text END,
         true
       FROM (SELECT g, LEAST($6::bigint, $4::bigint + $11::int
               + ('x' || substr(md5($10::int || '-' || g), 1, 8))::bit(32)::bigint
               % GREATEST(1, $6::bigint - $4::bigint)) AS ts
             FROM generate_series(1, $9) AS g) AS x`,
      [
        w,
        sell.id,
        buy.id,
        season.starts,
        o.head,
        Math.max(season.starts + 1, o.now - 1),
        zeroAddress,
        o.usdg.toLowerCase(),
        o.trades,
        copies ? i - 1 : i,
        copies ? COPY_LAG_S : 0,
        copies ? 1 : 0,
      ],
    );
  }
}
