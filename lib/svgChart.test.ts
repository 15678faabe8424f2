import { describe, expect, it } from "vitest";
import { esc, horizontalBars, lineChart, stackedBars, ticks } from "./svgChart.js";

const IMG = `"><img src=x onerror=alert(1)>`;
const text = { id: "c1", title: `Title ${IMG}`, desc: `Desc ${IMG}` };
const count = (svg: string, re: RegExp) => (svg.match(re) ?? []).length;

describe("svg charts", () => {
  it("escapes every text: no markup and no attribute break-out from a label, title or description", () => {
    expect(esc(`<a href="x" onclick='y'>&`)).toBe("&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;");
    const svgs = [
      stackedBars(text, [IMG], [{ label: IMG, values: [1] }], String),
      horizontalBars(text, [{ label: IMG, value: 1, text: IMG }]),
      lineChart(text, [{ name: IMG, key: IMG, points: [{ x: 1, y: 2 }] }], { x: String, y: String }),
    ];
    for (const svg of svgs) {
      expect(svg).not.toContain("<img");
      expect(svg).not.toContain(IMG);
      expect(svg).toContain("&#60;img src=x onerror=alert(1)&#62;");
    }
  });

  it("is an image named by its title and described by its description", () => {
    const svg = stackedBars({ id: "week inflow", title: "T", desc: "D" }, ["a"], [], String);
    expect(svg).toMatch(
      /^<svg class="chart" id="week-inflow" role="img" aria-labelledby="week-inflow-t week-inflow-d"/,
    );
    expect(svg).toContain('<title id="week-inflow-t">T</title><desc id="week-inflow-d">D</desc>');
  });

  it("draws one segment per group and series, zeros included, each carrying its data", () => {
    const svg = stackedBars(
      text,
      ["fees", "outside"],
      [
        { label: "W1", values: [1.5, 0] },
        { label: "W2", values: [2, 3.25] },
      ],
      (v) => `$${v}`,
    );
    expect(count(svg, /<rect class="bar"/g)).toBe(4);
    expect(svg).toContain('data-series="outside" data-label="W2" data-value="3.25"');
    expect(svg).toContain('data-series="outside" data-label="W1" data-value="0"');
    expect(svg).toContain(">$6<"); // the axis reaches past the tallest stack (5.25)
  });

  it("draws an unknown horizontal bar empty, with its reason as text", () => {
    const svg = horizontalBars(text, [
      { label: "Reserve", value: 10, text: "10 tokens" },
      { label: "Cap", value: null, text: "unknown: no mark" },
    ]);
    expect(count(svg, /<rect class="bar"/g)).toBe(2);
    expect(svg).toContain('data-label="Cap" data-value="" x="64" y="67" width="0"');
    expect(svg).toContain("unknown: no mark");
  });

  it("draws each line's points with its key, x and y, losses below the zero line", () => {
    const svg = lineChart(
      text,
      [
        {
          name: "A",
          key: "e1",
          points: [
            { x: 0, y: 0 },
            { x: 86_400, y: -5 },
            { x: 100_000, y: 12.5 },
          ],
        },
        { name: "B", key: "e2", points: [{ x: 0, y: 0 }] },
      ],
      { x: (x) => `t${x}`, y: String },
    );
    expect(count(svg, /<circle class="point" data-series="e1"/g)).toBe(3);
    expect(count(svg, /<circle class="point" data-series="e2"/g)).toBe(1);
    expect(svg).toContain('data-x="86400" data-value="-5"');
    expect(svg).toContain(">t0<");
    expect(svg).toContain(">t100000<");
    expect(lineChart(text, [], { x: String, y: String })).toContain('role="img"');
  });

  it("spans the values with round ticks, zero included", () => {
    expect(ticks(0, 0)).toEqual([0, 1]);
    expect(ticks(0, 9)).toEqual([0, 2.5, 5, 7.5, 10]);
    expect(ticks(-3, 12)).toEqual([-5, 0, 5, 10, 15]);
    expect(ticks(2, 1000)).toEqual([0, 250, 500, 750, 1000]);
  });
});
