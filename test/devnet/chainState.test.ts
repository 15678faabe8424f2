import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goodStatePath, keepGoodState } from "../../devnet/chainState.js";
import { SNAPSHOT_FILE } from "../../devnet/snapshot.js";

/**
 * npm start keeps a complete copy of anvil's state file beside it for a write cut by kill -9. Judging
 * "complete" by the file's end instead of parsing it must never keep a cut file.
 */
describe("the kept copy of the devnet's state file", () => {
  const dir = mkdtempSync(join(tmpdir(), "pit-chainstate-"));
  const state = join(dir, "chain.json");
  const good = goodStatePath(state);
  const full = readFileSync(SNAPSHOT_FILE, "utf8");
  let mtime = 0;
  /** Writes `text` as the state file with a new mtime, and runs one keep pass. */
  const pass = (text: string, at: number) => {
    writeFileSync(state, text);
    utimesSync(state, at, at);
    const before = mtime;
    mtime = keepGoodState(state, mtime);
    return mtime !== before;
  };

  it("keeps a complete anvil state file", () => {
    expect(pass(full, 1_000)).toBe(true);
    expect(readFileSync(good, "utf8")).toBe(full);
  });

  it("never keeps a file cut anywhere by a kill during anvil's write", () => {
    const cuts = [1, 100, full.length / 2, full.length - 30, full.length - 2, full.length - 1];
    for (let i = 0; i < 40; i++) cuts.push(Math.floor(Math.random() * full.length));
    for (const [i, at] of cuts.entries()) {
      expect(pass(full.slice(0, Math.floor(at)), 2_000 + i), `cut at ${at}`).toBe(false);
      expect(readFileSync(good, "utf8")).toBe(full);
    }
  });

  it("knows the pinned anvil's file by its end, and keeps nothing of another shape", () => {
    // The snapshot is the pinned anvil's own dump: the same serialisation as its --state file.
    expect(full.trimEnd().endsWith('"historical_states":null}')).toBe(true);
    const other = JSON.stringify({ block: { number: "0x1" }, accounts: {} });
    expect(pass(other, 3_000)).toBe(false);
    expect(readFileSync(good, "utf8")).toBe(full);
  });
});
