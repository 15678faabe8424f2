import { describe, expect, it } from "vitest";
import { LEAGUE_EPOCH_S, season } from "../../lib/league/calendar.js";
import { statusOf } from "../errors/catalogue.js";
import { Refusal } from "../errors/index.js";
import { assertOrderRoom, PRACTICE_ORDERS_PER_SEASON } from "./practiceOrders.js";

describe("practice paper orders per account and season", () => {
  const now = LEAGUE_EPOCH_S + 3_600;
  const s = season(1, now);

  it("takes orders up to the cap, then refuses 429 RATE_LIMITED until the next season opens", () => {
    expect(PRACTICE_ORDERS_PER_SEASON).toBe(2_000);
    expect(() => assertOrderRoom(0, s, now)).not.toThrow();
    expect(() => assertOrderRoom(PRACTICE_ORDERS_PER_SEASON - 1, s, now)).not.toThrow();
    const err = (() => {
      try {
        assertOrderRoom(PRACTICE_ORDERS_PER_SEASON, s, now);
      } catch (e) {
        return e as Refusal;
      }
    })();
    expect(err).toBeInstanceOf(Refusal);
    expect(err).toMatchObject({
      code: "RATE_LIMITED",
      extra: { limit: PRACTICE_ORDERS_PER_SEASON, season: s.number },
      retryAfterS: s.ends - now,
    });
    expect(statusOf(err!.code, undefined)).toBe(429);
    expect(err!.message).toContain(`${PRACTICE_ORDERS_PER_SEASON}`);
  });
});
