/**
 * The load test's audit, after the run has settled: what an operator must be able to say of a
 * production day. Each line is a claim with its evidence; the run passes only if every one holds.
 */
import type pg from "pg";
import type { Hex, PublicClient } from "viem";
import type { Answer, Client, Sample } from "./client.js";
import type { Trade } from "./actors.js";
import type { Fault, MemorySample } from "./processes.js";

export type AuditLine = { claim: string; ok: boolean; evidence: string };

/** Every row of a wallet's me/trades, newest first, through its pages. */
async function allTrades(client: Client, key: string): Promise<any[]> {
  const rows: any[] = [];
  let before: string | null = null;
  for (;;) {
    const q: string = `/me/trades?limit=100${before ? `&before=${before}` : ""}`;
    const r: Answer = await client.call("GET", q, "GET /me/trades (audit)", undefined, key);
    if (r.status !== 200) throw new Error(`me/trades ${r.status} ${JSON.stringify(r.json)}`);
    rows.push(...r.json.trades);
    if (!r.json.next_before) return rows;
    before = String(r.json.next_before);
  }
}

/** Every trade the chain mined (or reverted) for an agent is in its wallet's me/trades with that outcome. */
export async function auditTrades(client: Client, pub: PublicClient, trades: Trade[]): Promise<AuditLine> {
  const byKey = new Map<string, Trade[]>();
  for (const t of trades) if (t.status !== "lost") byKey.set(t.key, [...(byKey.get(t.key) ?? []), t]);
  let missing = 0;
  let wrong = 0;
  for (const [key, mine] of byKey) {
    const listed = new Map((await allTrades(client, key)).map((r) => [String(r.tx_hash).toLowerCase(), r]));
    for (const t of mine) {
      const row = listed.get(t.hash.toLowerCase());
      if (!row) missing++;
      else if (row.status !== (t.status === "success" ? "mined" : "reverted")) wrong++;
    }
  }
  // Nothing else of theirs reached the chain: each signer's nonce is the number of its trades the chain took.
  const signers = new Map<Hex, number>();
  for (const t of trades) if (t.status !== "lost") signers.set(t.signer, (signers.get(t.signer) ?? 0) + 1);
  let nonceOff = 0;
  for (const [signer, n] of signers) if ((await pub.getTransactionCount({ address: signer })) !== n) nonceOff++;
  const checked = trades.filter((t) => t.status !== "lost").length;
  const lost = trades.length - checked;
  return {
    claim: "every mined trade of every agent is in me/trades with its outcome",
    ok: missing === 0 && wrong === 0 && lost === 0 && nonceOff === 0,
    evidence:
      `${checked} trades checked across ${byKey.size} wallets: ${missing} missing, ${wrong} with another status; ` +
      `${lost} relayed but never mined or reverted within 90 s; ${nonceOff} of ${signers.size} signers whose nonce ` +
      "is not the number of their trades the chain took",
  };
}

/**
 * Every trade a live hosted agent made is in its owner's me/trades with the chain's outcome, and its
 * executor sent nothing else (its nonce is the number of those trades).
 */
export async function auditHostedLive(
  client: Client,
  pub: PublicClient,
  owners: { owner: { key: string }; executor: Hex }[],
): Promise<AuditLine> {
  let rows = 0;
  let wrong = 0;
  let nonceOff = 0;
  for (const o of owners) {
    const mine = (await allTrades(client, o.owner.key)).filter((r) => r.path === "hosted" && r.tx_hash);
    const settled = mine.filter((r) => r.status === "mined" || r.status === "reverted");
    rows += settled.length;
    for (const r of settled) {
      const receipt = await pub.getTransactionReceipt({ hash: r.tx_hash }).catch(() => null);
      if (!receipt || (receipt.status === "success") !== (r.status === "mined")) wrong++;
    }
    if ((await pub.getTransactionCount({ address: o.executor })) !== settled.length) nonceOff++;
  }
  return {
    claim: "every trade of the live hosted agents is in its owner's me/trades with its outcome",
    ok: wrong === 0 && nonceOff === 0,
    evidence:
      `${rows} hosted trades of ${owners.length} live agents: ${wrong} whose listed outcome is not the chain's; ` +
      `${nonceOff} executors that sent transactions not listed`,
  };
}

/**
 * No plan relayed twice (app.trades) and no hash twice among the agents' trades; that nothing else of
 * theirs reached the chain is auditTrades' nonce check, and each trade's receipt its agent's own wait.
 */
export async function auditRelays(db: pg.Client, trades: Trade[]): Promise<AuditLine> {
  const plans = await db.query(
    `SELECT plan_id, count(*)::int AS n FROM app.trades
      WHERE plan_id IS NOT NULL AND status IN ('pending', 'mined', 'reverted') GROUP BY plan_id HAVING count(*) > 1`,
  );
  const repeated = trades.length - new Set(trades.map((t) => t.hash)).size;
  const total = await db.query("SELECT count(*)::int AS n FROM app.trades WHERE status IN ('mined', 'reverted')");
  return {
    claim: "no trade relayed twice",
    ok: plans.rowCount === 0 && repeated === 0,
    evidence:
      `${plans.rowCount} plans with two relayed rows; ${repeated} repeated hashes among ${trades.length} agent ` +
      `trades; ${total.rows[0].n} mined or reverted rows in app.trades (hosted included)`,
  };
}

/** Each hosted slot ticked once: no (agent, slot) twice, no tick with two trades under a one-order brain. */
export async function auditTicks(db: pg.Client): Promise<AuditLine> {
  const twice = await db.query(
    "SELECT agent_id, due_ms FROM app.hosted_ticks GROUP BY agent_id, due_ms HAVING count(*) > 1",
  );
  const doubleTrades = await db.query(
    `SELECT agent_id, tick_seq FROM app.hosted_logs WHERE kind = 'trade' AND tick_seq IS NOT NULL
      GROUP BY agent_id, tick_seq HAVING count(*) > 1`,
  );
  const ticks = await db.query(
    `SELECT count(*)::int AS n, count(DISTINCT agent_id)::int AS agents, count(DISTINCT instance)::int AS instances
       FROM app.hosted_ticks`,
  );
  const fills = await db.query("SELECT count(*)::int AS n FROM app.hosted_logs WHERE kind = 'trade'");
  const t = ticks.rows[0];
  return {
    claim: "each hosted slot ticked once",
    ok: twice.rowCount === 0 && doubleTrades.rowCount === 0 && t.n > 0,
    evidence:
      `${t.n} ticks of ${t.agents} agents by ${t.instances} scheduler instances; ${twice.rowCount} slots ticked ` +
      `twice; ${doubleTrades.rowCount} ticks with two trades (${fills.rows[0].n} hosted trades)`,
  };
}

/**
 * 5xx answers: only 503s while a process was down (the balancer's ENGINE_UNAVAILABLE, or during the
 * indexer's restart).
 */
export function audit5xx(samples: Sample[], faults: Fault[], graceMs = 5_000): AuditLine {
  const downDuring = (t: number, what: Fault["what"]) =>
    faults.some(
      (f) => f.what === what && t >= f.killedAt - 1_000 && t <= (f.backAt ?? Number.POSITIVE_INFINITY) + graceMs,
    );
  const bad: Record<string, number[]> = {};
  let excused = 0;
  for (const s of samples) {
    if (s.status < 500 && s.status !== 0) continue;
    // The balancer answers ENGINE_UNAVAILABLE for a request the killed process had taken; while the
    // indexer restarts, routes that read its views answer their own documented 503.
    const ok503 =
      s.status === 503 && ((s.code === "ENGINE_UNAVAILABLE" && downDuring(s.t, "api")) || downDuring(s.t, "indexer"));
    if (ok503) excused++;
    else (bad[`${s.status} ${s.code ?? "-"} ${s.route}`] ??= []).push(s.t);
  }
  const at = (ts: number[]) => ts.slice(0, 5).map((t) => `${(t / 1000).toFixed(1)} s`);
  const list = Object.entries(bad).map(([k, ts]) => `${k} x${ts.length} (at ${at(ts).join(", ")})`);
  return {
    claim: "no 5xx (nor lost connection) except the documented 503s while a process is down",
    ok: list.length === 0,
    evidence: `${excused} 503s while a process was down; others: ${list.length ? list.join(", ") : "none"}`,
  };
}

/**
 * Memory flat after warm-up: for each process (a restarted one on its last life only), the highest RSS
 * in the last third of its life within 25 % of the highest in the middle third; the first third (at
 * least a minute) is warm-up, caches filling and the heap growing to its working size. Maxima, not
 * medians: a heap's sawtooth between collections would otherwise decide. `notJudged` roles are
 * reported, not judged (anvil, the devnet's chain standing in for a node, keeps every block's state in
 * memory by design).
 */
export function auditMemory(
  samples: MemorySample[],
  runMs: number,
  warmMs: number,
  notJudged: string[] = [],
): AuditLine {
  const roles = [...new Set(samples.map((s) => s.role))];
  const rows: string[] = [];
  let ok = true;
  let judgedCount = 0;
  for (const role of roles) {
    const mine = samples.filter((s) => s.role === role);
    const pid = mine.at(-1)!.pid;
    const own = mine.filter((s) => s.pid === pid);
    const born = own[0]!.t;
    const third = Math.max(warmMs, (runMs - born) / 3);
    const middle = own.filter((s) => s.t >= born + third && s.t < runMs - third).map((s) => s.rssMb);
    const last = own.filter((s) => s.t >= runMs - third).map((s) => s.rssMb);
    if (middle.length < 3 || last.length < 3) {
      rows.push(`${role}: too young to judge`);
      continue;
    }
    const growth = Math.max(...last) / Math.max(...middle) - 1;
    const judged = !notJudged.includes(role);
    if (judged) judgedCount++;
    if (judged && growth > 0.25) ok = false;
    const [peakMiddle, peakLast] = [Math.max(...middle).toFixed(0), Math.max(...last).toFixed(0)];
    const change = `${peakMiddle} -> ${peakLast} MB (${(growth * 100).toFixed(0)} %)`;
    rows.push(`${role} ${change}${judged ? "" : " (not judged)"}`);
  }
  return {
    claim:
      "memory flat after warm-up (each process's peak RSS in the last third of its life within +25 % of the middle " +
      `third's${notJudged.length ? `; ${notJudged.join(", ")} reported, not judged` : ""})`,
    ok: ok && judgedCount > 0,
    evidence:
      judgedCount > 0 ? rows.join("; ") : "the run is too short to judge (a minute of warm-up, then two thirds)",
  };
}
