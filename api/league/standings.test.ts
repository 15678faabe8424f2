import { afterAll, describe, expect, it } from "vitest";
import { calendarAt, LEAGUE_EPOCH_S, SEASON_S } from "../../lib/league/calendar.js";
import { Refusal } from "../errors/index.js";
import { openPglite, type Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import { standings, type Reading } from "./standings.js";

const dbs: Db[] = [];
afterAll(async () => Promise.all(dbs.map((db) => db.close())));

/** GET league/standings over a real store, the clock in season 7; nothing reads the chain for an empty board. */
async function reading(): Promise<{ r: Reading; next: number }> {
  const db = await openPglite(`memory://${Math.random().toString(36).slice(2)}`);
  dbs.push(db);
  await migrate(db);
  const now = LEAGUE_EPOCH_S + 6 * SEASON_S + 3_600;
  const r = { db, clock: () => now * 1000 } as unknown as Reading;
  return { r, next: calendarAt(now).next.number };
}

describe("GET league/standings?season=", () => {
  it("answers the next season, and 400 BAD_REQUEST past the calendar (SPEC's row: no NO_SEASON)", async () => {
    const { r, next } = await reading();
    expect(await standings(r, { season: next })).toMatchObject({ season: next, status: "upcoming", rows: [] });
    const err = await standings(r, { season: next + 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(Refusal);
    expect(err).toMatchObject({ code: "BAD_REQUEST", extra: { field: "season" } });
    expect(err.message).toContain(`the next is ${next}`);
  });
});
