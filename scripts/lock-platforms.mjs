#!/usr/bin/env node
// The registry mirror here serves only this platform's builds of packages like @foundry-rs/*,
// @rollup/*, @esbuild/*, so `npm install` leaves the other platforms' optional dependencies out of
// package-lock.json and `npm ci` then calls the lock out of sync. This adds those entries back,
// marked optional with the os/cpu their names declare, so `npm ci` skips them on other
// platforms exactly as it would with a complete lock. Run after any `npm install` that
// rewrites the lock: `node scripts/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const OS = [
  "darwin",
  "linux",
  "win32",
  "android",
  "freebsd",
  "openbsd",
  "netbsd",
  "openharmony",
  "sunos",
  "aix",
  "cygwin",
];
const CPU = {
  x64: "x64",
  amd64: "x64",
  arm64: "arm64",
  arm: "arm",
  ia32: "ia32",
  loong64: "loong64",
  ppc64: "ppc64",
  riscv64: "riscv64",
  s390x: "s390x",
  mips64el: "mips64el",
};

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
let added = 0;
for (const [path, pkg] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ""}node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue;
    const parts = name.split("/").pop().split(/[-_]/);
    const os = parts.find((p) => OS.includes(p)) ?? (parts.includes("win") ? "win32" : undefined);
    const cpu =
      parts.map((p) => CPU[p]).find(Boolean) ??
      (parts.includes("gnueabihf") || parts.includes("musleabihf") ? "arm" : undefined);
    const entry = { version: String(spec).replace(/^[\^~=]/, ""), optional: true };
    if (cpu) entry.cpu = [cpu];
    if (os) entry.os = [os];
    if (parts.includes("musl") || parts.includes("musleabihf")) entry.libc = ["musl"];
    else if (os === "linux" && (parts.includes("gnu") || parts.includes("gnueabihf"))) entry.libc = ["glibc"];
    lock.packages[`node_modules/${name}`] = entry;
    added++;
  }
}
writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-platforms: added ${added} optional platform entries`);
