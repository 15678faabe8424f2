/**
 * `npm run bench`: every benchmark, printed as a table and written to bench/out/latest.md.
 * bench/RESULTS.md holds the numbers we report, copied from a run with its date and machine.
 */
import "../lib/noTelemetry.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "../lib/root.js";
import { benchDevnet } from "./devnet.js";
import { benchIndexer } from "./indexer.js";
import { benchIndexerBlocks } from "./indexerBlocks.js";
import { benchRestart } from "./restart.js";
import { benchRateLimit } from "./rateLimit.js";
import { benchHttp } from "./http.js";
import { benchTokens } from "./tokens.js";
import { benchTrading } from "./trading.js";
import { benchSessions } from "./sessions.js";
import { benchFast } from "./fast.js";
import { benchTreasury } from "./treasury.js";
import { benchHosted } from "./hosted.js";
import { benchAi } from "./ai.js";
import { benchLeague } from "./league.js";
import { benchSdk } from "./sdk.js";
import { benchCurveFee } from "./curveFee.js";
import { benchAvailability } from "./availability.js";
import { table, type Row } from "./stats.js";

const quick = process.argv.includes("--quick");
const rows: Row[] = [];
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7);
if (!only || only === "devnet")
  rows.push(...(await benchDevnet({ coldRuns: quick ? 1 : 3, startRuns: quick ? 3 : 10 })));
if (!only || only === "http") rows.push(...(await benchHttp({ seconds: quick ? 3 : 10, signIns: quick ? 200 : 1000 })));
if (!only || only === "tokens")
  rows.push(...(await benchTokens({ newTokens: quick ? 5 : 30, seconds: quick ? 3 : 10 })));
if (!only || only === "trading")
  rows.push(...(await benchTrading({ requests: quick ? 50 : 300, seconds: quick ? 3 : 10, agents: 16 })));
// Issue 13: a co-signed session trade; `--only=sessions`.
if (!only || only === "sessions") rows.push(...(await benchSessions({ trades: quick ? 30 : 200 })));
// Issue 14: fast mode against prepare + submit in the same run; `--only=fast`.
if (!only || only === "fast")
  rows.push(...(await benchFast({ trades: quick ? 30 : 200, seconds: quick ? 3 : 10, agents: 16 })));
// Issue 15: closing a treasury week, serving the record, verifying it; `--only=treasury`.
if (!only || only === "treasury")
  rows.push(...(await benchTreasury({ transfers: quick ? 50 : 300, requests: quick ? 100 : 500 })));
// Issue 16: paper ticks per second, scheduler lag at 1,000 and 10,000 agents; `--only=hosted`.
if (!only || only === "hosted")
  rows.push(...(await benchHosted({ paperAgents: quick ? 50 : 200, sizes: quick ? [1_000] : [1_000, 10_000] })));
// Issue 17: an AI decision's overhead beyond the gateway's latency; `--only=ai`.
if (!only || only === "ai") rows.push(...(await benchAi({ decisions: quick ? 50 : 300 })));
// Issue 18: prize standings of 1,000 entrants with 100 trades each: rebuilt, after 100 new trades (issue 29), served;
// `--only=league`.
if (!only || only === "league")
  rows.push(
    ...(await benchLeague(
      quick
        ? { entrants: 100, trades: 20, recomputes: 3, increments: 5, requests: 100 }
        : { entrants: 1_000, trades: 100, recomputes: 3, increments: 10, requests: 500 },
    )),
  );
// Issue 19: what the SDK's checks cost a trade, prepared and fast; `--only=sdk`.
if (!only || only === "sdk") rows.push(...(await benchSdk({ trades: quick ? 10 : 50, checks: quick ? 200 : 2_000 })));
// Issue 25: the curve two_step fee's receipt awaited before its swap is sent; `--only=curve-fee`.
if (!only || only === "curve-fee") rows.push(...(await benchCurveFee({ trades: quick ? 10 : 50 })));
// Issue 26: a bystander's latency without and with each availability attack; `--only=availability`.
if (!only || only === "availability") rows.push(...(await benchAvailability({ rounds: quick ? 20 : 60 })));
if (!only || only === "indexer")
  rows.push(
    ...(await benchIndexer({ swaps: quick ? 5_000 : 50_000, latencySamples: quick ? 10 : 40, runs: quick ? 1 : 3 })),
  );
// Issue 12: restart after kill -9 and recovery after a node stall; `--only=restart`.
// Issue 12: the limiter's cost per request, in memory and in Redis; `--only=rate-limit`.
if (!only || only === "rate-limit") rows.push(...(await benchRateLimit({ requests: quick ? 1_000 : 5_000 })));
if (!only || only === "restart") rows.push(...(await benchRestart({ runs: quick ? 1 : 3, stallMs: 60_000 })));
// The empty-blocks curve (issue 11); `--only=indexer-blocks` runs it alone. `--blocks=0,5000`,
// `--apps=bare` and `--backends=pglite` narrow it; `--service-root=DIR` runs another
// checkout's service (e.g. `git archive` of an older commit with node_modules linked); `--cap-s=600` is the per-run
// cap.
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (!only || only === "indexer" || only === "indexer-blocks") {
  rows.push(
    ...(await benchIndexerBlocks({
      points: arg("blocks")?.split(",").map(Number) ?? (quick ? [0, 20_000] : [0, 20_000, 100_000]),
      capMs: Number(arg("cap-s") ?? 600) * 1000,
      apps: arg("apps")?.split(",") as ("service" | "bare")[] | undefined,
      backends: arg("backends")?.split(",") as ("postgres" | "pglite")[] | undefined,
      serviceRoot: arg("service-root"),
    })),
  );
}

const machine =
  `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ` +
  `${process.version}`;
const report = `# Benchmark run ${new Date().toISOString()}\n\nMachine: ${machine}\n\n${table(rows)}\n`;
console.log(report);
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "latest.md"), report);
