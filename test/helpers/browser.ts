import { existsSync } from "node:fs";
import { chromium as playwright, type Browser } from "playwright-core";

/** Flags that keep Chromium off the network it cannot reach here (it retries Google's hosts otherwise). */
const QUIET = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/**
 * A headless Chromium driven by playwright-core: Debian's when installed, else the one npm's
 * @sparticuz/chromium ships (unpacked to the temp dir on first use), so `npm install` is all the
 * set-up a fresh machine needs.
 */
export async function launchBrowser(): Promise<Browser> {
  const debian = ["/usr/bin/chromium", "/usr/bin/chromium-headless-shell"].find((p) => existsSync(p));
  if (debian) return playwright.launch({ executablePath: debian, headless: true, args: QUIET });
  const { default: packaged } = await import("@sparticuz/chromium");
  return playwright.launch({
    executablePath: await packaged.executablePath(),
    headless: true,
    args: [...packaged.args, ...QUIET],
  });
}
