/** `npm run devnet:reset`: back to the pristine snapshot, chain and stores together. */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../lib/config.js";
import { ROOT } from "../lib/root.js";

const dataDir = process.env.DATA_DIR ? loadConfig().dataDir : join(ROOT, ".data");
rmSync(dataDir, { recursive: true, force: true });
console.log(`removed ${dataDir}: the next npm start begins from the pristine snapshot`);
