/**
 * `npm run bench`: every benchmark, printed as a table and written to bench/out/latest.md.
 * bench/RESULTS.md holds the numbers we report, copied from a run with its date and machine.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "../lib/root.js";
import { benchDevnet } from "./devnet.js";
import { table, type Row } from "./stats.js";

const quick = process.argv.includes("--quick");
const rows: Row[] = [];
rows.push(...(await benchDevnet({ coldRuns: quick ? 1 : 3, startRuns: quick ? 3 : 10 })));

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
const report = `# Benchmark run ${new Date().toISOString()}\n\nMachine: ${machine}\n\n${table(rows)}\n`;
console.log(report);
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "latest.md"), report);
