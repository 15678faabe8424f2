/**
 * The US stock market's hours for stock tokens (SPEC.md MARKET_CLOSED, its "stock session"): open from Sunday 20:00 to
 * Friday 20:00
 * New York time, daylight saving included. Pure: the stale-mark rule and fast mode both ask it.
 */
const NEW_YORK = new Intl.DateTimeFormat("en-US", {
  timeZone: "America/New_York",
  weekday: "short",
  hour: "numeric",
  hourCycle: "h23",
});

const HOUR_S = 3_600;

type NewYorkHour = { weekday: string; hour: number };

function newYorkHour(unixS: number): NewYorkHour {
  let weekday = "";
  let hour = 0;
  for (const part of NEW_YORK.formatToParts(new Date(unixS * 1000))) {
    if (part.type === "weekday") weekday = part.value;
    if (part.type === "hour") hour = Number(part.value);
  }
  return { weekday, hour };
}

/** Whether the stock-token session is open at `unixS` (unix seconds). */
export function stockMarketOpen(unixS: number): boolean {
  const { weekday, hour } = newYorkHour(unixS);
  if (weekday === "Sat") return false;
  if (weekday === "Sun") return hour >= 20;
  if (weekday === "Fri") return hour < 20;
  return true;
}

/**
 * Seconds of open session in [from, to). New York's offset from UTC is a whole number of hours
 * and the session turns at 20:00 local, so every UTC hour is wholly open or wholly closed: one
 * look per hour is exact. Cost grows with the span (a week is 168 looks); callers bound it.
 */
export function stockMarketSecondsBetween(from: number, to: number): number {
  let open = 0;
  for (let t = from; t < to; ) {
    const end = Math.min(to, (Math.floor(t / HOUR_S) + 1) * HOUR_S);
    if (stockMarketOpen(t)) open += end - t;
    t = end;
  }
  return open;
}
