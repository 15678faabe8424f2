import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/** The widths the pages must fit (issue 30 point 5): a desktop and a 390 px phone. */
export const WIDTHS = [1280, 390] as const;

/** axe-core's source, injected into the page under test (it runs there, over the rendered DOM). */
const AXE_SOURCE: string = (createRequire(import.meta.url)("axe-core") as { source: string }).source;

/** One axe finding, cut to what a failure message needs. */
export type Finding = { id: string; impact: string | null; help: string; targets: string[] };

/** What a page shows at one width: its fit, its landmarks, whether it reloads itself, axe's worst findings. */
export type PageFacts = {
  width: number;
  scrollWidth: number;
  mains: number;
  h1s: number;
  refreshes: number;
  scripts: number;
  serious: Finding[];
};

/**
 * axe-core over the page as rendered, only its serious and critical findings. Evaluated through the
 * devtools protocol, not a script tag, so no page policy stands between it and the DOM.
 */
export async function axeSerious(page: Page): Promise<Finding[]> {
  await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")),
    })))`)) as Finding[];
  return found.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Opens `url` at `width` and reads the facts the page tests check. */
export async function pageFacts(page: Page, url: string, width: number): Promise<PageFacts> {
  await page.setViewportSize({ width, height: 900 });
  const res = await page.goto(url);
  if (res?.status() !== 200) throw new Error(`${url}: HTTP ${res?.status()}`);
  // A string: the tests compile without the DOM's types; it runs in the page.
  const dom = (await page.evaluate(`({
    scrollWidth: document.documentElement.scrollWidth,
    mains: document.querySelectorAll("main").length,
    h1s: document.querySelectorAll("main h1").length,
    refreshes: document.querySelectorAll('meta[http-equiv="refresh" i]').length,
    scripts: document.querySelectorAll("script").length,
  })`)) as Omit<PageFacts, "width" | "serious">;
  return { width, ...dom, serious: await axeSerious(page) };
}

/** Each chart's marks by the series they draw, read from the SVG (`rect.bar` and `circle.point`). */
export async function chartMarks(page: Page, id: string) {
  return page.locator(`svg#${id}[role="img"] .bar, svg#${id}[role="img"] .point`).evaluateAll((els) =>
    els.map((e) => ({
      series: e.getAttribute("data-series"),
      label: e.getAttribute("data-label"),
      x: e.getAttribute("data-x"),
      value: e.getAttribute("data-value"),
    })),
  );
}
