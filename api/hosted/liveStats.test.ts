import { describe, expect, it } from "vitest";
import { liveStats, type LiveTrade } from "./liveStats.js";

const USDG = { symbol: "USDG", address: "0x00000000000000000000000000000000000000a1", decimals: 6 };
const ETH = { symbol: "ETH", address: "0x0000000000000000000000000000000000000000", decimals: 18 };
const usdg = (x: number) => BigInt(Math.round(x * 1e6));
const eth = (x: number) => BigInt(Math.round(x * 1e6)) * 10n ** 12n;
const buyEth = (usd: number, ethOut: number, fee_bps = 25): LiveTrade => ({
  token_in: USDG,
  token_out: ETH,
  amount_in: usdg(usd),
  amount_out: eth(ethOut),
  usd,
  fee_bps,
});
const sellEth = (ethIn: number, usd: number, usdgOut: number, fee_bps = 25): LiveTrade => ({
  token_in: ETH,
  token_out: USDG,
  amount_in: eth(ethIn),
  amount_out: usdg(usdgOut),
  usd,
  fee_bps,
});
const marks =
  (ethUsd: number | null) =>
  (a: string): number | null =>
    a === ETH.address ? ethUsd : a === USDG.address ? 1 : null;

describe("liveStats: the agent's mined live trades summed", () => {
  it("is all zeros without a trade", () => {
    expect(liveStats([], 2, marks(2000))).toEqual({
      trades: 0,
      pending: 2,
      volume_usd: 0,
      fees_usd: 0,
      realised_usd: 0,
      open_usd: 0,
      profit_usd: 0,
      positions: {},
    });
  });

  it("counts a buy's cost (fee included) against what it holds at the mark now: open profit, nothing realised", () => {
    // $100 of USDG (the wallet's own) for 0.0498 ETH after the fee; ETH now at $2,100.
    const s = liveStats([buyEth(100, 0.0498)], 0, marks(2100));
    expect(s).toMatchObject({ trades: 1, volume_usd: 100, fees_usd: 0.25, realised_usd: 0 });
    expect(s.open_usd).toBeCloseTo(0.0498 * 2100 - 100, 2);
    expect(s.positions).toEqual({
      USDG: { atoms: (-usdg(100)).toString(), decimals: 6 },
      ETH: { atoms: eth(0.0498).toString(), decimals: 18 },
    });
  });

  it("realises a sale's USD less the average cost of the share sold; the rest stays open", () => {
    const trades = [buyEth(100, 0.05), buyEth(300, 0.1), sellEth(0.075, 240, 239.4)];
    const s = liveStats(trades, 0, marks(3000));
    // Bought 0.15 ETH for $400 (average $2,666.67): half sold for $240 releases $200 of cost.
    expect(s.realised_usd).toBe(40);
    // 0.075 ETH left at $3,000 against $200 of cost; 239.4 USDG received against its $240 cost.
    expect(s.open_usd).toBeCloseTo(0.075 * 3000 - 200 + (239.4 - 240), 2);
    expect(s.profit_usd).toBe(Math.round((s.realised_usd + s.open_usd) * 100) / 100);
    expect(s).toMatchObject({ trades: 3, volume_usd: 640, fees_usd: 1.6 });
    expect(s.positions.ETH!.atoms).toBe(eth(0.075).toString());
    expect(s.positions.USDG!.atoms).toBe((usdg(239.4) - usdg(400)).toString());
  });

  it("costs a token the agent never bought at what it was worth when sold: selling it realises nothing", () => {
    const s = liveStats([sellEth(0.1, 200, 199.5)], 0, marks(2000));
    expect(s.realised_usd).toBe(0);
    expect(s.open_usd).toBe(-0.5); // the USDG received against the ETH's $200
  });

  it("sells more than the agent bought: the bought part releases its cost, the rest its worth when sold", () => {
    const s = liveStats([buyEth(100, 0.05), sellEth(0.1, 220, 219)], 0, marks(2200));
    // Half of the 0.1 ETH cost $100 (bought), the other half is the wallet's own worth $110: realised $10.
    expect(s.realised_usd).toBe(10);
    expect(s.positions.ETH!.atoms).toBe((-eth(0.05)).toString());
  });

  it("counts a held token without a mark at cost (no open profit)", () => {
    expect(liveStats([buyEth(100, 0.05)], 0, marks(null)).open_usd).toBe(0);
  });
});
