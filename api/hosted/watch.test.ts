import { describe, expect, it } from "vitest";
import { currentHold, SESSION_SOON_S, watchOf, type GasState } from "./watch.js";

type Row = { tick: number | null; kind: string; code: string | null; at: number; message?: string };
const row = (tick: number, kind: string, code: string | null, atS: number, message?: string): Row => ({
  tick,
  kind,
  code,
  at: atS * 1000,
  ...(message ? { message } : {}),
});
/** Rows as GET logs answers them: newest first. */
const newestFirst = (rows: Row[]) => [...rows].reverse();

describe("currentHold: the hold of the newest tick and since when", () => {
  it("is null without rows, or when the newest tick logged no hold", () => {
    expect(currentHold([])).toBeNull();
    expect(
      currentHold(
        newestFirst([row(1, "hold", "MAX_DAY", 100), row(2, "decision", null, 160), row(2, "trade", null, 160)]),
      ),
    ).toBeNull();
  });

  it("goes back through the unbroken run of ticks holding the same code", () => {
    const rows = newestFirst([
      row(1, "hold", "MAX_DAY", 100),
      row(2, "trade", null, 160),
      row(3, "decision", null, 220),
      row(3, "hold", "MAX_DAY", 220, "first"),
      row(4, "decision", null, 280),
      row(4, "hold", "MAX_DAY", 280),
      row(5, "decision", null, 340),
      row(5, "hold", "MAX_DAY", 340, "now"),
    ]);
    expect(currentHold(rows)).toEqual({ code: "MAX_DAY", message: "now", since: 220, tick: 5 });
  });

  it("starts again when a tick held on another code, and takes the tick's first hold", () => {
    const rows = newestFirst([
      row(1, "hold", "LIVE_OFF", 100),
      row(2, "hold", "TOKEN_STALE", 160),
      row(3, "hold", "TOKEN_STALE", 220, "stale"),
      row(3, "hold", "MAX_POSITION", 220),
    ]);
    expect(currentHold(rows)).toEqual({ code: "TOKEN_STALE", message: "stale", since: 160, tick: 3 });
  });

  it("ends a run at a tick that logged an error and no hold (a brain that did not answer)", () => {
    const rows = newestFirst([
      row(1, "hold", "AI_BUDGET", 100),
      row(2, "error", "PARTNER_TIMEOUT", 160),
      row(3, "hold", "AI_BUDGET", 220),
    ]);
    expect(currentHold(rows)?.since).toBe(220);
  });
});

const gas = (enough: boolean): GasState => ({
  executor: "0x00000000000000000000000000000000000000e1",
  balance_wei: enough ? "10" : "1",
  min_balance_wei: "5",
  enough,
  top_up: enough ? null : { wei: "4", usd: null, to: "0x00000000000000000000000000000000000000e1" },
});
const NOW = 1_800_000_000_000;

describe("watchOf: what the agent is waiting on, null when nothing", () => {
  it("is null for an agent that does not tick, holds nothing, has no session ending and gas enough", () => {
    expect(watchOf({ nowMs: NOW, nextTickMs: null, hold: null, session: null, gas: gas(true) })).toBeNull();
    expect(
      watchOf({
        nowMs: NOW,
        nextTickMs: null,
        hold: null,
        session: { id: "s", expires: NOW / 1000 + 86_400 },
        gas: null,
      }),
    ).toBeNull();
  });

  it("shows the next tick (unix s, rounded up) of a running agent and the hold it met", () => {
    const hold = { code: "MAX_DAY", message: null, since: NOW / 1000 - 120, tick: 7 };
    expect(watchOf({ nowMs: NOW, nextTickMs: NOW + 30_500, hold, session: null, gas: null })).toEqual({
      next_tick_at: NOW / 1000 + 31,
      hold,
      session_ending: null,
      executor_gas: null,
    });
  });

  it("shows a session ending within the hour, with the seconds left (0 once ended)", () => {
    const end = (inS: number) =>
      watchOf({
        nowMs: NOW,
        nextTickMs: null,
        hold: null,
        session: { id: "s1", expires: NOW / 1000 + inS },
        gas: null,
      });
    expect(end(SESSION_SOON_S)?.session_ending).toEqual({
      session_id: "s1",
      expires: NOW / 1000 + SESSION_SOON_S,
      seconds_left: SESSION_SOON_S,
    });
    expect(end(SESSION_SOON_S + 1)).toBeNull();
    expect(end(-5)?.session_ending?.seconds_left).toBe(0);
  });

  it("shows an executor under its gas floor with the top-up", () => {
    expect(watchOf({ nowMs: NOW, nextTickMs: null, hold: null, session: null, gas: gas(false) })?.executor_gas).toEqual(
      gas(false),
    );
  });
});
