import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeAside } from "./writeAside.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "pit-write-aside-"));
  dirs.push(d);
  return d;
};

describe("writeAside", () => {
  it("writes the whole file in a new directory and replaces an old one, leaving no part behind", () => {
    const dir = join(tempDir(), "new", "place");
    const file = join(dir, "f.json");
    writeAside(file, "old");
    writeAside(file, new TextEncoder().encode("new"));
    expect(readFileSync(file, "utf8")).toBe("new");
    expect(readdirSync(dir)).toEqual(["f.json"]);
  });

  it("throws where the place cannot be written, and leaves neither the file nor its part", () => {
    const blocked = join(tempDir(), "a-file");
    writeFileSync(blocked, "not a directory");
    const file = join(blocked, "f.json");
    expect(() => writeAside(file, "x")).toThrow();
    expect(existsSync(file)).toBe(false);
  });

  it("removes its part when the rename fails (a directory stands where the file goes)", () => {
    const dir = tempDir();
    const file = join(dir, "taken");
    mkdirSync(join(file, "inside"), { recursive: true });
    expect(() => writeAside(file, "x")).toThrow();
    expect(readdirSync(dir)).toEqual(["taken"]);
  });
});
