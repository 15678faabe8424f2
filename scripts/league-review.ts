/**
 * `npm run league:review -- <entry> <rule> pass|fail "<reason>" [--season <n>]`: the operator's
 * review of a flag held for review in the prize standings (issue 29 point 3), recorded in the app
 * store, append-only, with the operator's name (LEAGUE_OPERATOR, else the OS user), the time and
 * why. The standings worker's next pass applies it; `league:verify` recomputes it from the
 * published reviews. CONFIRMED, SANCTIONS and PAYABLE are never reviewed; a decided season's
 * record is final. No HTTP route reviews: whoever reviews holds the store.
 *
 * The store: PostgreSQL with DATABASE_URL; else the embedded PGlite in DATA_DIR/app, which only
 * one process may open: refused while `npm start` runs on that data directory.
 */
import { userInfo } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { existsSync, readFileSync } from "node:fs";
import { loadConfig } from "../lib/config.js";
import { openAppStore } from "../api/ports/store/open.js";
import { recordReview, ReviewRefused } from "../api/league/index.js";
import { alive, pidFilePath } from "./pidFile.js";

const USAGE = 'usage: npm run league:review -- <entry> <rule> pass|fail "<reason>" [--season <n>]';

/** The operator's name: LEAGUE_OPERATOR, else the OS user. */
export function operatorName(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.LEAGUE_OPERATOR?.trim();
  if (named) return named;
  try {
    return userInfo().username;
  } catch {
    return "";
  }
}

/** The arguments, or null when they are not a review. */
export function parseReviewArgs(argv: string[]) {
  const args = [...argv];
  let season: number | undefined;
  const at = args.indexOf("--season");
  if (at >= 0) {
    const n = args[at + 1] ?? "";
    if (!/^[1-9][0-9]*$/.test(n)) return null;
    season = Number(n);
    args.splice(at, 2);
  }
  const [entry_id, rule, verdict, reason, ...rest] = args;
  if (!entry_id || !rule || !verdict || reason === undefined || rest.length) return null;
  return { entry_id, rule: rule.toUpperCase(), verdict, reason, ...(season !== undefined ? { season } : {}) };
}

/** Whether `npm start` runs on `dataDir` (its embedded store is then its own). */
function startRunning(dataDir: string): boolean {
  const file = pidFilePath(dataDir);
  if (!existsSync(file)) return false;
  try {
    return alive((JSON.parse(readFileSync(file, "utf8")) as { start: number }).start);
  } catch {
    return false;
  }
}

async function main() {
  const q = parseReviewArgs(process.argv.slice(2));
  if (!q) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadConfig();
  if (!config.databaseUrl && startRunning(config.dataDir)) {
    console.error(
      `the service runs on ${config.dataDir} and its embedded store is open there: stop it, or review with ` +
        "DATABASE_URL (PostgreSQL)",
    );
    process.exit(2);
  }
  const db = await openAppStore(config);
  try {
    const r = await recordReview(db, { ...q, by: operatorName(), at: Math.floor(Date.now() / 1000) });
    console.log(
      `recorded review ${r.id}: season ${r.season}, entry ${r.entry_id}, ${r.rule} ${r.verdict} by ${r.by}; the ` +
        "standings apply it at the worker's next pass",
    );
  } catch (err) {
    if (!(err instanceof ReviewRefused)) throw err;
    console.error(`refused: ${err.message}`);
    process.exitCode = 1;
  } finally {
    await db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) void main();
