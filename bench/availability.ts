/**
 * Availability under attack (issue 26): a bystander's latency for GET /health, POST /live/quote,
 * POST /live/prepare and GET /config, measured without an attack and then during each attack, in
 * the same run, against the service in its own process (bench/httpServer.ts) with its rate
 * limits ON and a trusted proxy header, so every caller has an address of its own (the attacker's
 * flood comes from ATTACKERS addresses). The real indexer on PostgreSQL serves indexed reads.
 *
 * Attacks: (a) GET /api/v1/openapi.json (the plain document, no gzip), (b) POST /mcp tools/list,
 * (c) GET /api/v1/league/standings of both boards, (d) screening a gas-burning token (GET
 * /tokens/<addr>, a GasBurnerToken deployed on this devnet) and (e) polling GET /treasury after an
 * airdrop of that token to the platform wallet.
 */
import type { ChildProcess } from "node:child_process";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ensureSnapshot } from "../devnet/snapshot.js";
import { startDevnet } from "../test/helpers/devnet.js";
import { airdropGasBurner, deployGasBurner } from "../test/helpers/hostile.js";
import { startIndexer } from "../test/helpers/indexer.js";
import { single, summarize, type Row } from "./stats.js";
import { server } from "./http.js";

const PROXY_HEADER = "x-forwarded-for";
/** How many client addresses one attacker floods from, and how many requests each keeps in flight. */
const ATTACKERS = 8;
const IN_FLIGHT_PER_ATTACKER = 4;

type Client = ReturnType<typeof clientAs>;
/** Calls to the bench server as the client at `addr` (named by the trusted proxy header). */
function clientAs(port: number, addr: string) {
  const base = `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        [PROXY_HEADER]: addr,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const buf = await res.arrayBuffer();
    return { status: res.status, bytes: buf.byteLength, json: () => JSON.parse(new TextDecoder().decode(buf)) as any };
  };
  return { addr, call };
}

/** An attack: a request an attacker repeats as fast as the server answers. */
export type Attack = { name: string; hit: (c: Client) => Promise<{ status: number; bytes: number }> };

export const openApiAttack: Attack = {
  name: "openapi.json flood",
  hit: (c) => c.call("GET", "/api/v1/openapi.json", undefined, { "accept-encoding": "identity" }),
};
export const mcpAttack: Attack = {
  name: "POST /mcp tools/list flood",
  hit: (c) =>
    c.call(
      "POST",
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { accept: "application/json, text/event-stream" },
    ),
};
let board = 0;
export const standingsAttack: Attack = {
  name: "league standings flood",
  hit: (c) => c.call("GET", `/api/v1/league/standings?board=${board++ % 2 ? "practice" : "prize"}`),
};
/** Screening a token whose name() burns gas; `key` is the attacker's own free key. */
export const screenAttack = (token: Address, key: string): Attack => ({
  name: "screening a gas-burning token",
  hit: (c) => c.call("GET", `/api/v1/tokens/${token}`, undefined, { authorization: `Bearer ${key}` }),
});
/** Polling the public treasury after `token` was airdropped to the platform wallet. */
export const treasuryAttack = (_token: Address): Attack => ({
  name: "GET /treasury after a gas-burner airdrop",
  hit: (c) => c.call("GET", "/api/v1/treasury"),
});

/** Runs `attack` from ATTACKERS addresses until `stop` resolves: what the server answered. */
async function flood(port: number, attack: Attack, stop: Promise<void>) {
  let done = false;
  void stop.then(() => (done = true));
  const counts = { sent: 0, ok: 0, limited: 0, other: 0, bytes: 0 };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: ATTACKERS * IN_FLIGHT_PER_ATTACKER }, async (_, i) => {
      const c = clientAs(port, `10.66.0.${1 + (i % ATTACKERS)}`);
      while (!done) {
        const r = await attack.hit(c).catch(() => ({ status: 0, bytes: 0 }));
        counts.sent++;
        counts.bytes += r.bytes;
        if (r.status === 429) counts.limited++;
        else if (r.status >= 200 && r.status < 400) counts.ok++;
        else counts.other++;
      }
    }),
  );
  return { ...counts, seconds: (performance.now() - t0) / 1000 };
}

type Bystander = { health: Client; config: Client; keyed: { c: Client; key: string; wallet: Address }[] };
/** Rounds of the bystander's four requests, one after another: each request's latency and failures. */
async function measure(b: Bystander, rounds: number) {
  const ms: Record<"health" | "quote" | "prepare" | "config", number[]> = {
    health: [],
    quote: [],
    prepare: [],
    config: [],
  };
  const failed: Record<string, number> = {};
  const quoteBody = { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.05").toString() };
  const time = async (what: keyof typeof ms, f: () => Promise<{ status: number }>) => {
    const t0 = performance.now();
    const r = await f();
    if (r.status === 200) ms[what].push(performance.now() - t0);
    else failed[`${what} ${r.status}`] = (failed[`${what} ${r.status}`] ?? 0) + 1;
  };
  for (let i = 0; i < rounds; i++) {
    const k = b.keyed[i % b.keyed.length]!;
    await time("health", () => b.health.call("GET", "/api/v1/health"));
    await time("quote", () => k.c.call("POST", "/api/v1/live/quote", quoteBody, { authorization: `Bearer ${k.key}` }));
    await time("prepare", () =>
      k.c.call(
        "POST",
        "/api/v1/live/prepare",
        { wallet: k.wallet, ...quoteBody },
        { authorization: `Bearer ${k.key}` },
      ),
    );
    await time("config", () => b.config.call("GET", "/api/v1/config"));
  }
  return { ms, failed };
}

export async function benchAvailability(opts: { rounds: number }): Promise<Row[]> {
  await ensureSnapshot();
  const dn = await startDevnet();
  const { anvil, test } = dn;
  // The hostile token, airdropped to the platform wallet before the indexer starts (it sees the Transfer).
  const gasBurner = await deployGasBurner(dn);
  await airdropGasBurner(dn, gasBurner, dn.universe.devnet!.accounts.platform!);
  const ix = await startIndexer({ anvilPort: anvil.port, backend: "postgres" });
  let child: ChildProcess | null = null;
  try {
    await ix.waitFor(Number(await dn.pub.getBlockNumber()), 180_000);
    const s = await server("app", anvil.port, {
      BENCH_VIEWS: ix.viewsSchema,
      BENCH_DATABASE_URL: ix.databaseUrl!,
      BENCH_RATE_LIMITS: "on",
      BENCH_PROXY_HEADER: PROXY_HEADER,
    });
    child = s.child;
    let phase = 0;
    /** A bystander of its own per phase (fresh addresses and keys): buckets spent in one phase do not carry over. */
    const bystander = async (): Promise<Bystander> => {
      phase++;
      const keyed = [];
      // live/quote allows a key 6 then one per 2 s: enough keys that none is limited in a phase.
      for (let i = 0; i < Math.ceil(opts.rounds / 5); i++) {
        const a = privateKeyToAccount(generatePrivateKey());
        await test.setBalance({ address: a.address, value: parseEther("100") });
        const c = clientAs(s.port, `10.${phase}.1.${i + 1}`);
        const ch = (await c.call("POST", "/api/v1/auth/challenge", { address: a.address })).json();
        const v = await c.call("POST", "/api/v1/auth/verify", {
          address: a.address,
          signature: await a.signMessage({ message: ch.message }),
        });
        if (v.status !== 200) throw new Error(`bystander sign-in: ${v.status} ${JSON.stringify(v.json())}`);
        keyed.push({ c, key: v.json().api_key as string, wallet: a.address });
      }
      return { health: clientAs(s.port, `10.${phase}.2.1`), config: clientAs(s.port, `10.${phase}.2.2`), keyed };
    };
    // Warm caches (token records, marks, pools, stats, the document) as a quiet service has them.
    await measure(await bystander(), 5);

    const attacks: Attack[] = [openApiAttack, mcpAttack, standingsAttack];
    {
      // Screening needs a key of the attacker's own.
      const a = privateKeyToAccount(generatePrivateKey());
      const c = clientAs(s.port, "10.66.1.1");
      const ch = (await c.call("POST", "/api/v1/auth/challenge", { address: a.address })).json();
      const key = (
        await c.call("POST", "/api/v1/auth/verify", {
          address: a.address,
          signature: await a.signMessage({ message: ch.message }),
        })
      ).json().api_key as string;
      attacks.push(screenAttack(gasBurner, key), treasuryAttack(gasBurner));
    }

    const rows: Row[] = [];
    const report = (label: string, m: Awaited<ReturnType<typeof measure>>) => {
      for (const [what, ms] of Object.entries(m.ms))
        rows.push(summarize(`${label}: bystander ${what}`, ms.length ? ms : [NaN], "ms"));
      const failures = Object.entries(m.failed);
      if (failures.length)
        rows.push({
          name: `${label}: bystander failures (${failures.map(([k, n]) => `${k}: ${n}`).join(", ")})`,
          unit: "requests",
          n: failures.reduce((a, [, n]) => a + n, 0),
          p50: NaN,
          p99: NaN,
          min: NaN,
          max: NaN,
          mean: NaN,
        });
    };
    report("no attack", await measure(await bystander(), opts.rounds));
    for (const attack of attacks) {
      const b = await bystander();
      let stop!: () => void;
      const stopped = new Promise<void>((r) => (stop = r));
      const attacking = flood(s.port, attack, stopped);
      // Let the flood spend its addresses' bursts first: the bystander meets the steady state.
      await new Promise((r) => setTimeout(r, 2_000));
      const m = await measure(b, opts.rounds);
      stop();
      const f = await attacking;
      report(attack.name, m);
      rows.push(
        single(
          `${attack.name}: attacker answered per second (${ATTACKERS} addresses; ${f.limited} of ${f.sent} were 429, ` +
            `${f.other} other)`,
          "req/s",
          f.ok / f.seconds,
          f.sent,
        ),
      );
      rows.push(single(`${attack.name}: attacker bytes per second`, "MB/s", f.bytes / f.seconds / 1e6, f.sent));
      // Buckets drained by one attack are not the next phase's: wait for the overall buckets to refill.
      await new Promise((r) => setTimeout(r, 5_000));
    }
    return rows;
  } finally {
    if (child) await new Promise((res) => (child!.once("exit", res), child!.kill("SIGTERM")));
    await ix.cleanup();
    await dn.stop();
  }
}
