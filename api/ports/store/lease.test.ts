import { describe, expect, it } from "vitest";
import { openMigratedMemory } from "./memory.js";
import { createLease } from "./lease.js";
import { migrate } from "./migrations.js";

describe("createLease", () => {
  it("one holder at a time; a release or a lapse hands it over (a shared clock, moved past the ttl)", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    let now = 1_000_000;
    const clock = () => now;
    const a = createLease(db, "relay-watcher", 300, clock);
    const b = createLease(db, "relay-watcher", 300, clock);
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    now += 299;
    expect(await a.hold()).toBe(true); // renewal, to now + 300
    now += 299;
    expect(await b.hold()).toBe(false); // renewed: not lapsed yet
    await a.release();
    expect(await b.hold()).toBe(true);
    expect(await a.hold()).toBe(false);
    // b stops renewing (its process died): past the ttl, a takes over.
    now += 301;
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    // Another name is another lease.
    expect(await createLease(db, "week-closer", 300, clock).hold()).toBe(true);
    await db.close();
  });

  it("on the database's clock: held against another holder, taken once it lapses", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    // Each assertion only gets surer with time: exclusive under a ttl no test waits out, a lapse after a short one.
    const a = createLease(db, "relay-watcher", 60_000);
    const b = createLease(db, "relay-watcher", 60_000);
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    const short = createLease(db, "week-closer", 100);
    const other = createLease(db, "week-closer", 100);
    expect(await short.hold()).toBe(true);
    await new Promise((r) => setTimeout(r, 250));
    expect(await other.hold()).toBe(true);
    await db.close();
  });
});
