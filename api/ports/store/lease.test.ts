import { describe, expect, it } from "vitest";
import { openMigratedMemory } from "./memory.js";
import { createLease } from "./lease.js";
import { migrate } from "./migrations.js";

describe("createLease", () => {
  it("one holder at a time; a release or a lapse hands it over", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const a = createLease(db, "relay-watcher", 300);
    const b = createLease(db, "relay-watcher", 300);
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    expect(await a.hold()).toBe(true); // renewal
    await a.release();
    expect(await b.hold()).toBe(true);
    expect(await a.hold()).toBe(false);
    // b stops renewing (its process died): after the ttl, a takes over.
    await new Promise((r) => setTimeout(r, 400));
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    // Another name is another lease.
    expect(await createLease(db, "week-closer").hold()).toBe(true);
    await db.close();
  });
});
