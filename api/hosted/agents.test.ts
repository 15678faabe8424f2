import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMigratedMemory } from "../ports/store/memory.js";
import { getAddress, type PublicClient } from "viem";
import { loadConfig } from "../../lib/config.js";
import { parseBody } from "../errors/index.js";
import type { Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import type { Sequencer } from "../ports/sequencer.js";
import {
  agentDetail,
  createAgent,
  deleteAgent,
  listAgents,
  MAX_AGENTS_PER_WALLET,
  owned,
  pauseAgent,
  resumeAgent,
  stopAgent,
  updateAgent,
  type HostedDeps,
} from "./agents.js";
import { createRequest, updateRequest } from "./request.js";
import { createHostedStore } from "./store.js";

/**
 * The owner's actions on a real app store (PGlite in memory), driven as the routes drive them:
 * the input parsed by the route's schema, the owner as the first step found it.
 */
const config = loadConfig({});
const alice = { wallet: getAddress(`0x${"a1".repeat(20)}`), keyId: 1 };
const bob = { wallet: getAddress(`0x${"b2".repeat(20)}`), keyId: 2 };
const T0 = 1_800_000_000_000;

let db: Db;
let d: HostedDeps;
let dues: [string, number][];
let stopped: string[];
beforeEach(async () => {
  db = await openMigratedMemory();
  await migrate(db);
  dues = [];
  stopped = [];
  d = {
    config,
    chain: {} as PublicClient,
    market: { mark: async () => null },
    sides: { pair: async () => Promise.reject(new Error("agents do not read sides")) },
    volume30d: async () => 0,
    tradesOf: async () => [],
    store: createHostedStore(db),
    clock: () => T0,
    allowPrivateWebhooks: false,
    scheduler: { dueAt: async (id, at) => void dues.push([id, at]) },
    executors: null,
    sequencer: {} as Sequencer,
    liveSessionsOf: async () => [],
    assertNotSanctioned: async () => {},
    sessionOf: async () => null,
    revokeSession: async () => ({ on_chain: null }),
    onStopped: async (id) => void stopped.push(id),
  };
});
afterEach(async () => {
  await db?.close().catch(() => {});
});

const limits = { max_trade_usd: 100, max_day_usd: 1_000, max_position_usd: 5_000 };
/** A rule agent's create body as the route parses it (createRequest: mode defaults to paper). */
const ruleBody = (o: Record<string, unknown> = {}) =>
  parseBody(
    createRequest,
    {
      brain: "rule",
      params: { targets: { ETH: 0.5, USDG: 0.5 } },
      interval_s: 60,
      pairs: ["ETH/USDG"],
      limits,
      ...o,
    },
    { unknownField: "UNKNOWN_FIELD" },
  );
const update = (body: Record<string, unknown>) => parseBody(updateRequest, body, { unknownField: "UNKNOWN_FIELD" });
/** A refusal with this code, and this message (exactly, or matching) when given. */
const refusal = (code: string, message?: string | RegExp) =>
  expect.objectContaining({
    code,
    ...(message === undefined
      ? {}
      : { message: typeof message === "string" ? message : expect.stringMatching(message) }),
  });

describe("createAgent", () => {
  it("creates an active paper agent with its limits and the default 10,000 USDG book; no webhook secret", async () => {
    const a = await createAgent(d, ruleBody({ name: "mine" }), alice);
    expect(a).toMatchObject({ name: "mine", brain: "rule", mode: "paper", status: "active", live: false, limits });
    expect(a.params).toEqual({ targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 });
    expect(a).toHaveProperty("paper_book", { USDG: { atoms: "10000000000", decimals: 6 } });
    expect(a).not.toHaveProperty("webhook_secret");
    const stored = await d.store.get(a.id);
    expect(stored).toMatchObject({ wallet: alice.wallet.toLowerCase(), keyId: 1, intervalS: 60 });
  });

  it("answers a webhook agent's secret once: never in its detail or the list", async () => {
    const body = ruleBody({ brain: "webhook", params: { url: "https://example.com/hook" } });
    const a = await createAgent(d, body, alice);
    expect(a.webhook_secret).toMatch(/^whsec_/);
    const stored = await d.store.get(a.id);
    expect(stored!.webhookSecret).toBe(a.webhook_secret);
    expect(JSON.stringify(await agentDetail(d, stored!))).not.toContain("whsec_");
    expect(JSON.stringify(await listAgents(d, alice))).not.toContain("whsec_");
  });

  it("refuses limits out of their bounds at the edge (createRequest), before the action", () => {
    expect(() => ruleBody({ limits: { ...limits, max_day_usd: 50 } })).toThrow(
      refusal("BAD_REQUEST", /^limits\.max_day_usd: max_day_usd must be from max_trade_usd to 100 times it$/),
    );
    expect(() => ruleBody({ limits: { ...limits, max_trade_usd: 1_001 } })).toThrow(refusal("BAD_REQUEST"));
  });

  it("refuses terms that accept and block the same risk (BAD_TERMS), and pairs or targets off the server", async () => {
    const terms = { accept_risks: ["UPGRADEABLE"], policies: { block_risks: ["UPGRADEABLE"] } };
    await expect(createAgent(d, ruleBody(terms), alice)).rejects.toThrow(
      refusal("BAD_TERMS", "UPGRADEABLE is both accepted (accept_risks) and blocked (policies.block_risks)"),
    );
    await expect(createAgent(d, ruleBody({ pairs: ["ETH/NOPE"] }), alice)).rejects.toThrow(refusal("BAD_REQUEST"));
    const off = { params: { targets: { ETH: 0.5, WBTC: 0.5 } } };
    await expect(createAgent(d, ruleBody(off), alice)).rejects.toThrow(
      refusal("BAD_REQUEST", "params.targets: WBTC is not in the agent's pairs"),
    );
    expect(await listAgents(d, alice)).toEqual({ agents: [] });
  });

  it("runs at most 20 agents a wallet (TOO_MANY_AGENTS); a deleted one frees its place", async () => {
    expect(MAX_AGENTS_PER_WALLET).toBe(20);
    const made = [];
    for (let i = 0; i < 20; i++) made.push(await createAgent(d, ruleBody(), alice));
    await expect(createAgent(d, ruleBody(), alice)).rejects.toThrow(refusal("TOO_MANY_AGENTS"));
    // Another wallet's count is its own.
    await createAgent(d, ruleBody(), bob);
    await deleteAgent(d, (await d.store.get(made[0]!.id))!);
    await createAgent(d, ruleBody(), alice);
    expect((await listAgents(d, alice)).agents).toHaveLength(20);
  });
});

describe("updateAgent, pause, resume, stop", () => {
  it("changes the settings given and moves the next tick when interval_s changes", async () => {
    const a = (await d.store.get((await createAgent(d, ruleBody(), alice)).id))!;
    const after = await updateAgent(d, a, update({ name: "renamed", interval_s: 120 }));
    expect(after).toMatchObject({ id: a.id, name: "renamed", interval_s: 120, limits });
    expect(dues).toEqual([[a.id, T0 + 120_000]]);
    const turned = await updateAgent(d, (await d.store.get(a.id))!, update({ params: { targets: { ETH: 1 } } }));
    expect(turned.params).toEqual({ targets: { ETH: 1 }, band_bps: 200 });
    await expect(updateAgent(d, a, update({ live: true }))).rejects.toThrow(refusal("PAPER_AGENT"));
  });

  it("pauses and resumes; a stopped agent leaves the league and can neither change nor resume", async () => {
    const id = (await createAgent(d, ruleBody(), alice)).id;
    const get = async () => (await d.store.get(id))!;
    expect(await pauseAgent(d, await get())).toMatchObject({
      status: "paused",
      trading: false,
      pause_reason: { code: "OWNER", message: "paused by the owner" },
    });
    expect(await resumeAgent(d, await get())).toMatchObject({ status: "active", trading: true, pause_reason: null });
    expect(await stopAgent(d, await get())).toMatchObject({ status: "stopped", session_revoke: null });
    expect(stopped).toEqual([id]);
    const stop = refusal("STOPPED", `hosted agent ${id} is stopped: it cannot change or resume`);
    await expect(pauseAgent(d, await get())).rejects.toThrow(stop);
    await expect(resumeAgent(d, await get())).rejects.toThrow(stop);
    await expect(updateAgent(d, await get(), update({ name: "x" }))).rejects.toThrow(stop);
    // Stopping again heals a league exit that failed, and still answers STOPPED.
    await expect(stopAgent(d, await get())).rejects.toThrow(stop);
    expect(stopped).toEqual([id, id]);
  });
});

describe("owned: the agent the path names, the caller's", () => {
  it("is NOT_FOUND for an unknown, malformed or deleted id and FORBIDDEN for another wallet's", async () => {
    const id = (await createAgent(d, ruleBody(), alice)).id;
    expect((await owned(d, id, alice)).id).toBe(id);
    await expect(owned(d, id, bob)).rejects.toThrow(
      refusal("FORBIDDEN", `hosted agent ${id} belongs to another wallet`),
    );
    await expect(owned(d, "ha_nope", alice)).rejects.toThrow(refusal("NOT_FOUND", "no hosted agent ha_nope"));
    await expect(owned(d, "not an id", alice)).rejects.toThrow(refusal("NOT_FOUND"));
    expect(await deleteAgent(d, await owned(d, id, alice))).toMatchObject({ id, deleted: true });
    await expect(owned(d, id, alice)).rejects.toThrow(refusal("NOT_FOUND"));
    expect((await owned(d, id, alice, { deleted: true })).deletedAt).not.toBeNull();
    await expect(owned(d, id, bob, { deleted: true })).rejects.toThrow(refusal("FORBIDDEN"));
  });
});
