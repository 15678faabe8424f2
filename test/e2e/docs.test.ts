import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.js";
import { pageFacts, WIDTHS } from "../helpers/pageChecks.js";
import { startServedDevnet, type Served } from "../helpers/stack.js";

/**
 * The front door (issue 30 point 2): `/` says what the service is and links the rest, `/docs` renders
 * the OpenAPI document with Redoc loaded from our own origin only, `/llms.txt` gives a model the five
 * calls, and the public pages link them.
 */
let served: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  served = await startServedDevnet();
  browser = await launchBrowser();
  page = await browser.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await served?.stop();
});

describe("the front door", () => {
  it("/ fits a phone and a desktop, with its landmarks, and links the docs, llms.txt and the records", async () => {
    for (const width of WIDTHS) {
      const f = await pageFacts(page, `${served.api.url}/`, width);
      expect(f.scrollWidth, `at ${width}`).toBeLessThanOrEqual(width);
      expect([f.mains, f.h1s, f.refreshes, f.scripts, f.serious], `at ${width}`).toEqual([1, 1, 0, 0, []]);
    }
    const hrefs = await page.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    for (const href of ["/docs", "/llms.txt", "/api/v1/openapi.json", "/league", "/treasury"])
      expect(hrefs).toContain(href);
  });

  it("/docs renders the OpenAPI document, fetching nothing from another origin", async () => {
    const doc = (await served.api.call("GET", "/api/v1/openapi.json")).json;
    const origins = new Set<string>();
    // Every request to another origin is stopped by the page's policy in the browser, never sent (Redoc's credit
    // line asks a CDN for a logo).
    const elsewhere: string[] = [];
    page.on("response", (r) => void origins.add(new URL(r.url()).origin));
    page.on("requestfailed", (r) => {
      if (!r.url().startsWith(served.api.url)) elsewhere.push(`${r.url()} ${r.failure()?.errorText}`);
    });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect((await page.goto(`${served.api.url}/docs`))?.status()).toBe(200);
    // Redoc draws the document's title once it has fetched and parsed it.
    await page.getByRole("heading", { name: doc.info.title }).first().waitFor({ timeout: 30_000 });
    expect([...origins].filter((o) => o.startsWith("http"))).toEqual([new URL(served.api.url).origin]);
    for (const r of elsewhere) expect(r).toMatch(/ (csp|net::ERR_BLOCKED_BY_CSP)$/);
    const script = await served.api.call("GET", "/docs/redoc.standalone.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(script.text.length).toBeGreaterThan(100_000);
  }, 60_000);

  it("/llms.txt names the service, the sign-in and the five calls, with absolute links to the rest", async () => {
    const r = await served.api.call("GET", "/llms.txt");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/^# .+\n\n> /);
    for (const call of ["/api/v1/auth/challenge", "/api/v1/auth/verify", "/api/v1/config", "/api/v1/live/quote"])
      expect(r.text).toContain(call);
    for (const call of ["/api/v1/live/prepare", "/api/v1/live/submit", "/api/v1/me/trades"])
      expect(r.text).toContain(call);
    expect(r.text).toContain(`(${served.api.url}/api/v1/openapi.json)`);
    expect(r.text).toContain(`(${served.api.url}/mcp)`);
  });

  it("the treasury page links the front door", async () => {
    const r = await served.api.call("GET", "/treasury");
    expect(r.status).toBe(200);
    for (const href of ['href="/"', 'href="/docs"', 'href="/llms.txt"']) expect(r.text).toContain(href);
  });
});
