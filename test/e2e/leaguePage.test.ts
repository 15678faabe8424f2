import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Browser, Page } from "playwright-core";
import { calendarAt } from "../../lib/league/calendar.js";
import { launchBrowser } from "../helpers/browser.js";
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
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute("content")).toBe("60");
    expect(await page.locator('a[href="/api/v1/league"]').count()).toBe(1);
    expect(await page.locator("script").count()).toBe(0);
    expect(dialogs).toEqual([]);
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
