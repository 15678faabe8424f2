/**
 * AI brain benchmark (issue 17): the overhead of one AI decision beyond the gateway's own
 * latency. The stand-in gateway answers after a fixed 20 ms; each decision builds the prompt,
 * reserves its worst case under the owner's and the pool's locks, calls through the openai
 * client over loopback HTTP, settles and reads the answer. Overhead = decision wall time - 20 ms.
 */
import { getAddress } from "viem";
import { aiDecision, type AiDeps } from "../api/hosted/ai.js";
import type { TickState } from "../api/hosted/brains.js";
import type { StoredAgent } from "../api/hosted/store.js";
import { openaiGateway } from "../api/ports/gateway.js";
import { openPglite, openPostgres, type Db } from "../api/ports/store/db.js";
import { migrate } from "../api/ports/store/migrations.js";
import { startGatewayStandIn } from "../devnet/gatewayStandIn.js";
import { createDatabase, dropDatabase } from "../test/helpers/databases.js";
import { summarize, type Row } from "./stats.js";

const GATEWAY_MS = 20;
let callMs = 0;

async function overhead(db: Db, label: string, decisions: number): Promise<Row[]> {
  const gw = await startGatewayStandIn({ models: ["m"] });
  gw.script(() => ({
    json: { orders: [{ token_in: "USDG", token_out: "ETH", amount_usd: 10 }], note: "buy" },
    usage: { prompt_tokens: 700, completion_tokens: 40 },
    delayMs: GATEWAY_MS,
  }));
  const gateway = openaiGateway({ baseURL: gw.url, apiKey: gw.apiKey });
  const d: AiDeps = {
    ai: {
      gatewayUrl: gw.url,
      gatewayKey: gw.apiKey,
      standIn: false,
      models: [{ id: "m", price: { input: 0.15, output: 0.6, structured: null, source: "bench" } }],
      pool: {
        usdDay: 1_000,
        ownerShareMaxUsd: 1_000,
        liveShareUsd: 1_000,
        trialShareUsd: 1_000,
        trialDays: 7,
        trialPoolPct: 100,
        models: null,
        minIntervalS: 300,
        agentsPerOwner: 1_000,
      },
      ownKeysSecret: null,
      callTimeoutMs: 5_000,
    },
    db,
    clock: Date.now,
    // Timed as the client sees it: what is left of a decision is our own code and store.
    gatewayFor: () => ({
      complete: async (ask) => {
        const t0 = performance.now();
        try {
          return await gateway.complete(ask);
        } finally {
          callMs = performance.now() - t0;
        }
      },
    }),
    ownerSince: async () => Date.now(),
  };
  const agent: StoredAgent = {
    id: "ha_bench",
    wallet: getAddress(`0x${"ab".repeat(20)}`),
    keyId: 1,
    name: "bench",
    brain: "partner_llm",
    params: {
      strategy: "Keep half in ETH.",
      model: "m",
      funding: "service",
      fallback_own: true,
      budget_usd_day: 20,
      max_orders: 3,
    },
    intervalS: 300,
    pairs: ["ETH/USDG"],
    limits: { max_trade_usd: 100, max_day_usd: 1_000, max_position_usd: 5_000 },
    mode: "paper",
    status: "active",
    pauseReason: null,
    terms: { accept_risks: [], shield: false, policies: { block_risks: [] } },
    webhookSecret: null,
    paperBook: null,
    brainState: null,
    lastDecision: null,
    lastTrade: null,
    sessionId: null,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    deletedAt: null,
  };
  const state: TickState = {
    agent: { id: agent.id, name: agent.name, mode: "paper", pairs: agent.pairs, limits: agent.limits, interval_s: 300 },
    tick: 1,
    at: Date.now(),
    block: 1,
    book: { ETH: { amount: "0.5", usd: 1500 }, USDG: { amount: "1500", usd: 1500 } },
    marks: { ETH: 3000, USDG: 1 },
    value_usd: 3000,
    last_decision: null,
  };
  const samples: number[] = [];
  const own: number[] = [];
  try {
    for (let i = 0; i < decisions + 10; i++) {
      const t0 = performance.now();
      const r = await aiDecision(d, agent, { ...state, tick: i }, { seq: i, dueMs: Date.now(), live: false });
      const ms = performance.now() - t0;
      if (!("orders" in r)) throw new Error(`decision refused: ${JSON.stringify(r)}`);
      if (i >= 10) {
        samples.push(ms - GATEWAY_MS);
        own.push(ms - callMs);
      }
    }
  } finally {
    await gw.close();
  }
  return [
    summarize(
      `hosted AI: decision overhead beyond a ${GATEWAY_MS} ms gateway (prompt, reserve, openai client over loopback, ` +
        `settle, read), ${label}`,
      samples,
      "ms",
    ),
    summarize(
      `hosted AI: decision minus the gateway call as the client sees it (prompt, reserve, settle, read), ${label}`,
      own,
      "ms",
    ),
  ];
}

export async function benchAi(o: { decisions: number }): Promise<Row[]> {
  const rows: Row[] = [];
  const lite = await openPglite();
  await migrate(lite);
  rows.push(...(await overhead(lite, "PGlite", o.decisions)));
  await lite.close();
  const name = `pit_bench_ai_${Math.random().toString(36).slice(2, 8)}`;
  const pg = await openPostgres(await createDatabase(name));
  try {
    await migrate(pg);
    rows.push(...(await overhead(pg, "PostgreSQL", o.decisions)));
  } finally {
    await pg.close();
    await dropDatabase(name);
  }
  return rows;
}
