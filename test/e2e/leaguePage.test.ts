import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Browser, Page } from "playwright-core";
import { calendarAt } from "../../lib/league/calendar.js";
import { launchBrowser } from "../helpers/browser.js";
import { chartMarks, pageFacts, WIDTHS } from "../helpers/pageChecks.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { registerAgent as registerPartner } from "../helpers/league.js";

/**
 * The league's pages (issue 18 item 9) in a real Chromium over the whole stack: /league with its
 * clock and both boards while nobody plays; then a prize entry whose partner agent's symbol and
 * name are markup, played into the next season, read back as text on /league/seasons/<n> and
 * on /league; a season off the calendar is an HTML 404.
 */
const IMG = "<img src=x onerror=alert(1)>";
let stack: Stack;
let browser: Browser;
let page: Page;
/** Every dialog a script of the pages would raise (none should). */
const dialogs: string[] = [];
let offsetMs = 0;
const nowS = () => Math.floor((Date.now() + offsetMs) / 1000);

beforeAll(async () => {
  stack = await startStack({ clock: () => Date.now() + offsetMs });
  browser = await launchBrowser();
  // One page for all: the packaged Chromium runs single-process and closing its last page ends it.
  page = await browser.newPage();
  page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const fresh = () => privateKeyToAccount(generatePrivateKey());

/** A partner agent in the vault named by `symbol`, `name` (third-party text). */
const registerAgent = (owner: Address, wallet: Address, symbol: string, name: string) =>
  registerPartner(stack.dn, owner, wallet, symbol, name);

/** The page's status once Chromium loaded `path`. */
const open = async (path: string) => (await page.goto(`${stack.api.url}${path}`))?.status();

/**
 * Issue 30 point 5 at a desktop's and a 390 px phone's width: no sideways scroll, `main` with the h1, no
 * self-reload, and no serious or critical axe-core finding.
 */
async function expectFits(path: string) {
  for (const width of WIDTHS) {
    const f = await pageFacts(page, `${stack.api.url}${path}`, width);
    expect(f.scrollWidth, `${path} at ${width}`).toBeLessThanOrEqual(width);
    expect([f.mains, f.h1s, f.refreshes, f.scripts], `${path} at ${width}`).toEqual([1, 1, 0, 0]);
    expect(f.serious, `${path} at ${width}`).toEqual([]);
  }
}

/** The reserve chart draws the table's five amounts: each bar the row's tokens, or empty where it is unknown. */
async function expectReserveChart() {
  const bars = await chartMarks(page, "reserve-chart");
  const rows = await page
    .locator("#reserve-rows tr:has(td)")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
  expect(bars.map((b) => b.label)).toEqual(rows.map((r) => r[0]));
  for (const [i, b] of bars.entries()) {
    const cell = rows[i]![1]!;
    if (b.value === "") expect(cell).toMatch(/^unknown: /);
    else expect(Number(b.value)).toBeCloseTo(Number(cell), 6);
  }
}

describe("league pages", () => {
  it("/league shows the season clock, both boards empty, the rules and the JSON links", async () => {
    const cal = calendarAt(nowS());
    expect(await open("/league")).toBe(200);
    const clock = await page.locator("#clock").innerText();
    expect(clock).toContain(cal.current.name);
    expect(clock).toMatch(/playing, day \d+ of 14, \d+ d \d+ h left/);
    expect(clock).toContain(`Entries made now play from ${cal.next.name}`);
    expect(await page.locator("#prize .empty").innerText()).toBe(`Season ${cal.current.number}: no entrants.`);
    expect(await page.locator("#practice .empty").innerText()).toBe(`Season ${cal.current.number}: no entrants.`);
    expect(await page.locator("#rules").innerText()).toContain("50% / 30% / 20%");
    // It never reloads itself (issue 30 point 5): it says when it was read and links to read it again.
    expect(await page.locator("meta[http-equiv]").count()).toBe(0);
    expect(await page.locator("footer #updated").innerText()).toMatch(/^Updated at \S+Z\. Reload for newer numbers\.$/);
    expect(await page.locator('footer a[href="/league"]').innerText()).toBe("Reload");
    expect(await page.locator("#profit").innerText()).toContain("No prize entrants to draw.");
    await expectReserveChart();
    expect(await page.locator('a[href="/api/v1/league"]').count()).toBe(1);
    expect(await page.locator("script").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await expectFits("/league");
  }, 60_000);

  it("a prize entry named in markup plays the next season and reads back as text, never run", async () => {
    const owner = fresh();
    const trader = fresh();
    const id = await registerAgent(owner.address, fresh().address, IMG, IMG);
    const key = await stack.agent.signIn(trader);
    const st = await stack.agent.post("/league/statement", { agent_id: id }, key);
    expect(st.status, st.text).toBe(200);
    const e = await stack.agent.post(
      "/league/enter",
      { agent_id: id, nonce: st.json.nonce, signature: await owner.signMessage({ message: st.json.message }) },
      key,
    );
    expect(e.status, e.text).toBe(201);
    const next = calendarAt(nowS()).next;
    expect(e.json.from_season).toBe(next.number);
    // The service's clock an hour into that season: the entry plays (no trades yet, so not active).
    offsetMs = (next.starts + 3_600) * 1000 - Date.now();

    for (const path of [`/league/seasons/${next.number}`, "/league"]) {
      expect(await open(path), path).toBe(200);
      const rows = page.locator("#prize table.rows tr[data-entry]");
      expect(await rows.count()).toBe(1);
      expect(await rows.locator("td.label").innerText()).toBe(`${IMG} (${IMG})`);
      expect(await page.locator("#prize img").count()).toBe(0);
      expect(await page.locator("img").count()).toBe(0);
      // Ineligible while it has not traded: the rule that holds it and why.
      expect(await rows.getAttribute("class")).toContain("ineligible");
      expect(await rows.locator('li[data-rule="ACTIVE"]').innerText()).toMatch(
        /ACTIVE pending: 0 trades on 0 days; the minimum is \d+ trades on \d+ days/,
      );
      expect(await page.locator("script").count()).toBe(0);
      expect(dialogs).toEqual([]);
    }
    // /league (open last) draws the entrant's profit, its name in markup as text, and the reserve.
    const entry = await page.locator("#prize table.rows tr[data-entry]").getAttribute("data-entry");
    const points = await chartMarks(page, "profit-chart");
    // A point per day of the season the chain has reached, then the row's profit at its valuation.
    expect(points.length).toBeGreaterThanOrEqual(1);
    expect(points.every((p) => p.series === entry)).toBe(true);
    const cells = await page.locator(`#profit-rows tr[data-entry="${entry}"] td:not(.label)`).allInnerTexts();
    expect(points.map((p) => Number(p.value).toFixed(2))).toEqual(cells.filter((c) => c !== "–"));
    expect(await page.locator("#profit-rows td.label").innerText()).toBe(`${IMG} (${IMG})`);
    await expectReserveChart();
    await expectFits("/league");
    await expectFits(`/league/seasons/${next.number}`);
    expect(dialogs).toEqual([]);
  }, 120_000);

  it("a season off the calendar is an HTML 404", async () => {
    for (const n of ["abc", "0", "99999"]) {
      const r = await stack.api.call("GET", `/league/seasons/${n}`);
      expect(r.status, n).toBe(404);
      expect(r.headers.get("content-type")).toMatch(/text\/html/);
      expect(r.text).toContain("No such season");
    }
    expect(await open("/league/seasons/%3Cb%3Ex")).toBe(404);
    expect(await page.locator("b").count()).toBe(0);
    expect(await page.locator("p").first().innerText()).toBe("no season <b>x.");
  }, 60_000);
});
