import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAbi, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import type { Indexer } from "../helpers/indexer.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { SCREEN_DEFAULTS, type ScreenTuning } from "../../api/tokens/index.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { erc20Abi } from "../../abis/erc20.js";
import { proxyTokenAbi, stockTokenAbi } from "../../abis/fixtures.js";
import { fixtureBytecode } from "../../devnet/artifacts.js";

let dn: Devnet;
let ix: Indexer;
let api: Api;
let shield: NonNullable<Stack["shield"]>;
let key: string;
const fx = () => dn.universe.devnet!.fixtures as Record<string, Address>;

async function signIn(target: Api = api): Promise<string> {
  const a = privateKeyToAccount(generatePrivateKey());
  const ch = (await target.call("POST", "/api/v1/auth/challenge", { address: a.address })).json;
  return (
    await target.call("POST", "/api/v1/auth/verify", {
      address: a.address,
      signature: await a.signMessage({ message: ch.message }),
    })
  ).json.api_key;
}
const getOn = (target: Api, path: string, k: string) =>
  target.call("GET", `/api/v1${path}`, undefined, { authorization: `Bearer ${k}` });
const get = (path: string, k = key) => getOn(api, path, k);
const deployToken = async (name: string, symbol: string): Promise<Address> =>
  (
    await dn.mined(
      await dn.walletFor(dn.deployer).deployContract({
        abi: parseAbi(["constructor(string, string, uint8)"]),
        bytecode: fixtureBytecode("TestToken", "TestToken"),
        args: [name, symbol, 18],
      }),
    )
  ).contractAddress!;
/** Another API instance over the same devnet and indexer, on the given store or a fresh one (dropped on close). */
async function serveAnother(db?: Stack["store"]["db"], screen?: ScreenTuning): Promise<Api> {
  const own = db ? null : await freshStore();
  const other = await serveApi({
    rpcUrl: dn.anvil.rpcUrl,
    db: db ?? own!.db,
    indexed: ix.liveReads().reads,
    limiter: new RateLimiter(Date.now, 1000, false),
    screen,
  });
  return { ...other, close: async () => (await other.close(), await own?.drop()) };
}

/** The shared server's screening limits: its own, tightened by the tests that need it and restored after. */
const SCREEN: ScreenTuning = { ...SCREEN_DEFAULTS };
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    shield: true,
    screen: SCREEN,
    before: async (d) => {
      // NVDA paused before anything screens it.
      await d.mined(
        await d.walletFor(d.deployer).writeContract({
          address: d.token("NVDA"),
          abi: stockTokenAbi,
          functionName: "setTokenPaused",
          args: [true],
        }),
      );
      // A second token calling itself USDG.
      const fakeHash = await d.walletFor(d.deployer).deployContract({
        abi: parseAbi(["constructor(string, string, uint8)"]),
        bytecode: fixtureBytecode("TestToken", "TestToken"),
        args: ["Global Dollar", "USDG", 6],
      });
      (globalThis as any).fakeUsdg = (await d.mined(fakeHash)).contractAddress;
    },
  });
  ({ dn, ix, api } = stack);
  shield = stack.shield!;
  key = await signIn();
}, 120_000);
afterAll(() => stack?.stop());

describe("GET /tokens/<address>", () => {
  it("answers each core asset by symbol", async () => {
    for (const [symbol, t] of Object.entries(dn.universe.tokens)) {
      const r = await get(`/tokens/${symbol}`);
      expect(r.status, symbol).toBe(200);
      expect(r.json).toMatchObject({
        address: t.address,
        symbol,
        decimals: t.decimals,
        tier: symbol === "NVDA" ? "blocked" : "A",
        screen_status: "SCREENED",
        shield: false,
        shield_available: true,
      });
      expect(r.json.kind, symbol).toBe(t.kind === "stock" ? "stock" : "core");
      if (symbol !== "NVDA") expect(r.json.tradable, symbol).toBe(true);
      // The partner token is the one core symbol outside the major class (as /config says).
      expect(r.json.fee_bps, symbol).toBe(symbol === "ORBIO" ? 50 : 25);
      expect(r.json.fee_class, symbol).toBe(symbol === "ORBIO" ? "other" : "major");
      expect(r.json.venues.length, symbol).toBeGreaterThan(0);
      expect(r.json.reference.source, symbol).toBe(t.feed ? "oracle" : "twap");
    }
  });

  it("reads stock tokens from the issuer's beacon, with their pause", async () => {
    const tsla = (await get("/tokens/TSLA")).json;
    expect(tsla).toMatchObject({ kind: "stock", stock_beacon: true, multiplier: 1, flags: { paused: false } });
    const nvda = (await get(`/tokens/${dn.token("NVDA")}`)).json;
    expect(nvda).toMatchObject({
      kind: "stock",
      stock_beacon: true,
      tier: "blocked",
      tradable: false,
      blocked_reason: "STOCK_PAUSED",
      flags: { paused: true },
    });
    expect(nvda.risks[0]).toMatchObject({ code: "STOCK_PAUSED", severity: "severe" });
  });

  it("finds the honeypot by a real buy-then-sell simulation", async () => {
    const r = (await get(`/tokens/${fx().honeypot}`)).json;
    expect(r).toMatchObject({
      kind: "erc20",
      tier: "blocked",
      tradable: false,
      blocked_reason: "HONEYPOT",
      simulation: { honeypot: true, funded_by_overrides: true },
    });
    expect(r.risks[0]).toMatchObject({ code: "HONEYPOT", severity: "severe" });
    expect(r.fee_bps).toBe(50);
    const severities = r.risks.map((x: any) => x.severity);
    expect(severities).toEqual([...severities].sort((a: string, b: string) => (a === b ? 0 : a === "severe" ? -1 : 1)));
  });

  it("measures a fee-on-transfer token's tax", async () => {
    const r = (await get(`/tokens/${fx().feeOnTransfer}`)).json;
    expect(r.simulation.buy_tax_bps).toBeGreaterThanOrEqual(495);
    expect(r.simulation.buy_tax_bps).toBeLessThanOrEqual(505);
    expect(r.simulation.sell_tax_bps).toBeGreaterThan(900); // two taxed transfers on the way in
    expect(r.creator_tax_bps).toBe(r.simulation.sell_tax_bps);
    expect(r.risks.map((x: any) => x.code)).toContain("TRANSFER_TAX");
    expect(r.tier).toBe("C");
    // Not independent: priced at its pool's mid, and the record says so.
    expect(r.reference).toMatchObject({ source: "spot", pool_id: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(r.risks.map((x: any) => x.code)).toContain("NO_INDEPENDENT_MARK");
  });

  it("blocks a token with no pool (NO_ROUTE) and refuses an address with no code", async () => {
    const r = (await get(`/tokens/${fx().noPoolToken}`)).json;
    expect(r).toMatchObject({ tier: "blocked", tradable: false, blocked_reason: "NO_ROUTE", venues: [] });
    const none = await get("/tokens/0x00000000000000000000000000000000000a11ce");
    expect([none.status, none.json.error.code]).toEqual([404, "NOT_A_TOKEN"]);
    const notErc20 = await get(`/tokens/${dn.universe.contracts.poolManager}`);
    expect([notErc20.status, notErc20.json.error.code]).toEqual([404, "NOT_A_TOKEN"]);
  });

  it("returns hostile names exactly as read, as JSON strings", async () => {
    const t = fx().markupToken!;
    const [name, symbol] = await Promise.all([
      dn.pub.readContract({ address: t, abi: erc20Abi, functionName: "name" }),
      dn.pub.readContract({ address: t, abi: erc20Abi, functionName: "symbol" }),
    ]);
    const r = await get(`/tokens/${t}`);
    expect(r.json.name).toBe(name);
    expect(r.json.symbol).toBe(symbol);
    expect(r.text).toContain("\\u0007"); // a control character travels escaped inside a JSON string
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
  });

  it("answers 409 TOKEN_CHANGED when a proxy's implementation changes, then the fresh screen", async () => {
    const proxy = fx().proxyToken!;
    const first = (await get(`/tokens/${proxy}`)).json;
    expect(first.flags.implementation).toBe(fx().proxyImplV1);
    expect(first.risks.map((x: any) => x.code)).toContain("UPGRADEABLE");
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: proxy,
        abi: proxyTokenAbi,
        functionName: "upgradeProxyTo",
        args: [fx().proxyImplV2!],
      }),
    );
    await new Promise((r) => setTimeout(r, SCREEN.implCheckTtlMs + 100));
    const changed = await get(`/tokens/${proxy}`);
    expect([changed.status, changed.json.error.code]).toEqual([409, "TOKEN_CHANGED"]);
    let fresh: any;
    for (let i = 0; i < 50; i++) {
      fresh = await get(`/tokens/${proxy}`);
      if (fresh.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(fresh.status).toBe(200);
    expect(fresh.json.flags.implementation).toBe(fx().proxyImplV2);
  });

  it("adds the Shield report with shield=1, and 503 REPORT_UNAVAILABLE when the provider is down", async () => {
    shield.set(dn.token("USDG"), "verified");
    const r = (await get("/tokens/USDG?shield=1")).json;
    expect(r.report).toMatchObject({
      verdict: "verified",
      source: "shield-stand-in",
      url: expect.stringMatching(/^https:\/\//),
    });
    expect(typeof r.report.checked_at).toBe("number");
    expect(r.shield).toBe(true);
    expect(r.fee_bps).toBe(35);
    expect(r.shield_available).toBeUndefined();
    shield.down(true);
    const down = await get("/tokens/USDG?shield=1");
    shield.down(false);
    expect([down.status, down.json.error.code]).toEqual([503, "REPORT_UNAVAILABLE"]);
    expect(down.headers.get("retry-after")).toBe("15");
  });

  it("refuses bare non-core symbols, bad queries, spent budgets and a full screening queue", async () => {
    const sym = await get("/tokens/PEPE");
    expect([sym.status, sym.json.error.code]).toEqual([400, "ADDRESS_REQUIRED"]);
    expect((await get("/tokens/USDG?other=1")).status).toBe(400);
    expect((await get("/tokens/USDG?shield=yes")).status).toBe(400);

    const saved = { ...SCREEN };
    try {
      SCREEN.maxWaiting = 0;
      const fresh = (
        await dn.mined(
          await dn.walletFor(dn.deployer).deployContract({
            abi: parseAbi(["constructor(string, string, uint8)"]),
            bytecode: fixtureBytecode("TestToken", "TestToken"),
            args: ["Queue Test", "QT", 18],
          }),
        )
      ).contractAddress!;
      const full = await get(`/tokens/${fresh}`);
      expect([full.status, full.json.error.code]).toEqual([503, "SCREEN_UNAVAILABLE"]);
      expect(Number(full.headers.get("retry-after"))).toBeGreaterThan(0);
      SCREEN.maxWaiting = saved.maxWaiting;

      SCREEN.newPerCallerBurst = 1;
      const other = await signIn();
      expect((await get(`/tokens/${fresh}`, other)).status).toBe(200);
      const another = (
        await dn.mined(
          await dn.walletFor(dn.deployer).deployContract({
            abi: parseAbi(["constructor(string, string, uint8)"]),
            bytecode: fixtureBytecode("TestToken", "TestToken"),
            args: ["Budget Test", "BT", 18],
          }),
        )
      ).contractAddress!;
      // Budget is per caller and only for tokens not yet seen: cached reads stay free.
      const spent = await get(`/tokens/${another}`, other);
      expect([spent.status, spent.json.error.code]).toEqual([429, "RATE_LIMITED"]);
      expect(spent.headers.get("retry-after")).toBe("60");
      expect((await get(`/tokens/${fresh}`, other)).status).toBe(200);
    } finally {
      Object.assign(SCREEN, saved);
    }
  });
});

describe("GET /tokens (search) and /tokens/stats", () => {
  it("finds the core asset exactly by symbol and says how many others use it; never screens", async () => {
    // Screen what the search looks for first (the impostor, the honeypot, the taxed token), so the
    // registry holds them whatever ran before.
    for (const t of [(globalThis as any).fakeUsdg, fx().honeypot!, fx().feeOnTransfer!])
      expect((await get(`/tokens/${t}`)).status).toBe(200);
    const r = (await get("/tokens?q=usdg")).json;
    expect(r.tokens.map((t: any) => t.address)).toEqual([dn.token("USDG")]);
    expect(r.query).toMatchObject({ core_symbol: "USDG", others_with_symbol: 1 });
    expect(r.warnings[0]).toMatch(/1 other token/);
    const byPrefix = (await get(`/tokens?q=${fx().honeypot!.slice(0, 8)}`)).json;
    expect(byPrefix.tokens.some((t: any) => t.address === fx().honeypot)).toBe(true);
    const byName = (await get("/tokens?q=taxed")).json;
    expect(byName.tokens.map((t: any) => t.symbol)).toContain("TAX");
    const blocked = (await get("/tokens?tier=blocked&limit=100")).json;
    expect(blocked.tokens.every((t: any) => t.tier === "blocked")).toBe(true);
    expect(blocked.tokens.map((t: any) => t.address)).toEqual(
      expect.arrayContaining([fx().honeypot, dn.token("NVDA")]),
    );
    expect(blocked.count).toBe(blocked.tokens.length);
    const stocks = (await get("/tokens?kind=stock")).json;
    expect(stocks.tokens.map((t: any) => t.symbol).sort()).toEqual(["NVDA", "TSLA"]);
    expect((await get("/tokens?limit=1")).json.tokens).toHaveLength(1);
    const neverScreened = (await get("/tokens?q=0x00000000000000000000000000000000000b0b")).json;
    expect(neverScreened.count).toBe(0);
    for (const bad of ["limit=0", "limit=101", "limit=x", "tier=Z", "kind=meme", `q=${"a".repeat(65)}`, "q="]) {
      expect((await get(`/tokens?${bad}`)).status, bad).toBe(400);
    }
  });

  it(
    "carries each row's Shield report with shield=1, core assets' too; one unreadable verdict is 503 " +
      "REPORT_UNAVAILABLE",
    async () => {
      expect((await get(`/tokens/${fx().honeypot}`)).status).toBe(200); // in the registry whatever ran before
      shield.set(fx().honeypot!, "flagged");
      shield.set(dn.token("USDG"), "verified");
      const hp = (await get(`/tokens?q=${fx().honeypot!.slice(0, 12)}&shield=1`)).json;
      expect(hp.shield).toBe(true);
      const row = hp.tokens.find((t: any) => t.address === fx().honeypot);
      expect(row.report).toEqual({
        verdict: "flagged",
        url: expect.stringMatching(/^https:\/\//),
        source: "shield-stand-in",
        checked_at: expect.any(Number),
      });
      expect(row).toMatchObject({ shield: true, fee_bps: 60 });
      expect(row.shield_available).toBeUndefined();
      // A core asset's report is the provider's verdict, exactly as GET /tokens/<symbol>?shield=1 gives it.
      const usdg = (await get("/tokens?q=USDG&shield=1")).json.tokens[0];
      const single = (await get("/tokens/USDG?shield=1")).json;
      expect(usdg.report).toMatchObject({ verdict: "verified", source: "shield-stand-in" });
      expect({ ...usdg.report, checked_at: 0 }).toEqual({ ...single.report, checked_at: 0 });
      expect(usdg.fee_bps).toBe(single.fee_bps);
      const all = (await get("/tokens?limit=100&shield=1")).json;
      expect(all.count).toBeGreaterThan(7);
      for (const t of all.tokens) expect(["verified", "unverified", "flagged"], t.address).toContain(t.report.verdict);
      const plain = (await get("/tokens?limit=100")).json;
      expect(
        plain.tokens.every((t: any) => t.shield === false && t.shield_available === true && t.report === undefined),
      ).toBe(true);

      // One row's verdict unreadable: the whole answer is refused, never that row read as verified.
      shield.set(dn.token("WBTC"), "verified");
      shield.downFor(dn.token("WBTC"));
      try {
        const one = await get("/tokens?limit=100&shield=1");
        expect([one.status, one.json.error.code]).toEqual([503, "REPORT_UNAVAILABLE"]);
        expect(one.headers.get("retry-after")).toBe("15");
        expect((await get("/tokens?q=WBTC&shield=1")).status).toBe(503);
        expect((await get("/tokens?q=USDG&shield=1")).status).toBe(200);
        expect((await get("/tokens?limit=100")).status).toBe(200);
      } finally {
        shield.downFor(dn.token("WBTC"), false);
      }
    },
  );

  it("counts the registry", async () => {
    // In the registry whatever ran before.
    for (const t of [fx().honeypot!, fx().noPoolToken!]) expect((await get(`/tokens/${t}`)).status).toBe(200);
    const s = (await get("/tokens/stats")).json;
    const [{ n }] = (await stack.store.db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.tokens")) as [
      { n: string },
    ];
    expect(s.total).toBe(Number(n));
    expect(s.total).toBeGreaterThanOrEqual(Object.keys(dn.universe.tokens).length + 1);
    expect(s.tradable).toBeLessThan(s.total);
    expect(s.by_tier.A).toBeGreaterThanOrEqual(6);
    expect(s.by_kind.stock).toBe(2);
    expect(s.by_risk.HONEYPOT).toBe(1);
    expect(s.blocked_by_reason).toMatchObject({ HONEYPOT: 1, NO_ROUTE: expect.any(Number), STOCK_PAUSED: 1 });
    expect(s.cached_s).toBe(0);
  });

  it("gives /stats the registry's count of tradable tokens", async () => {
    const counted = (await get("/tokens/stats")).json;
    // Stats is rebuilt in the background (issue 26): the answer after this test's screens.
    await api.app.services.stats.refresh();
    const stats = (await api.call("GET", "/api/v1/stats")).json;
    expect(stats.tokens).toEqual({ tradable: counted.tradable });
    const [{ n }] = (await stack.store.db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM app.tokens WHERE tradable",
    )) as [{ n: string }];
    expect(counted.tradable).toBe(Number(n));
  });
});

describe("core records seeded at start", () => {
  const coreAddresses = () => new Set(Object.values(dn.universe.tokens).map((t) => t.address.toLowerCase()));
  async function untilSeeded(db: Stack["store"]["db"]) {
    for (let i = 0; i < 150; i++) {
      const rows = await db.query<{ address: string }>("SELECT address FROM app.tokens");
      if (rows.filter((r) => coreAddresses().has(r.address)).length === coreAddresses().size) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  it(
    "fills a fresh registry with every core record before anyone asks, and each instance on one PostgreSQL finds " +
      "them at once",
    async () => {
      const store = await freshStore("postgres");
      const opened: Api[] = [];
      try {
        const first = await serveAnother(store.db);
        opened.push(first);
        expect(await untilSeeded(store.db)).toBe(true);
        const k = await signIn(first);
        // An empty registry again, and two new instances on it: each one's first search finds the core assets.
        await store.db.query("DELETE FROM app.tokens");
        const [a, b] = [await serveAnother(store.db), await serveAnother(await store.reopen())];
        opened.push(a, b);
        const [wbtc, usdg, stocks] = await Promise.all([
          getOn(a, "/tokens?q=wbtc", k),
          getOn(b, "/tokens?q=USDG", k),
          getOn(b, "/tokens?kind=stock", k),
        ]);
        expect(wbtc.json.tokens.map((t: any) => t.address)).toEqual([dn.token("WBTC")]);
        expect(wbtc.json.tokens[0]).toMatchObject({
          screen_status: "SCREENED",
          kind: "core",
          tier: "A",
          tradable: true,
        });
        expect(usdg.json.tokens.map((t: any) => t.address)).toEqual([dn.token("USDG")]);
        expect(stocks.json.tokens.map((t: any) => t.symbol).sort()).toEqual(["NVDA", "TSLA"]);
        const counted = (await getOn(a, "/tokens/stats", k)).json;
        expect(counted.by_tier.A).toBe(coreAddresses().size - 1); // NVDA is paused: blocked
        await a.app.services.stats.refresh();
        expect((await a.call("GET", "/api/v1/stats")).json.tokens).toEqual({ tradable: counted.tradable });
      } finally {
        for (const o of opened) await o.close();
        await store.drop();
      }
    },
  );

  it(
    "finds a core asset by symbol even while its seed cannot land (no pool indexed yet), and stores no NO_ROUTE " +
      "record for it",
    async () => {
      const store = await freshStore();
      // Indexed reads over an app store see no pools: as a server started before its indexer caught up.
      const early = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: store.db,
        limiter: new RateLimiter(Date.now, 1000, false),
      });
      try {
        const k = await signIn(early);
        const r = (await getOn(early, "/tokens?q=WBTC", k)).json;
        expect(r.tokens).toEqual([
          expect.objectContaining({
            address: dn.token("WBTC"),
            symbol: "WBTC",
            screen_status: "UNSCREENED",
            tradable: false,
            shield_available: true,
          }),
        ]);
        expect(r.warnings.join(" ")).toMatch(/has not finished/);
        expect(
          await store.db.query("SELECT address FROM app.tokens WHERE address = $1", [dn.token("WBTC").toLowerCase()]),
        ).toHaveLength(0);
      } finally {
        await early.close();
        await store.drop();
      }
    },
  );

  it(
    "answers a core asset looked up before its pools are indexed as not screened yet, stores nothing, and screens " +
      "it once they are",
    async () => {
      const store = await freshStore();
      const early = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: store.db,
        limiter: new RateLimiter(Date.now, 1000, false),
      });
      try {
        const k = await signIn(early);
        const r = await getOn(early, "/tokens/ORBIO", k);
        expect(r.status).toBe(200);
        expect(r.json).toMatchObject({
          address: dn.token("ORBIO"),
          screen_status: "UNSCREENED",
          tradable: false,
          tier: null,
        });
        expect(r.json.blocked_reason ?? null).toBe(null);
        expect(
          await store.db.query("SELECT address FROM app.tokens WHERE address = $1", [dn.token("ORBIO").toLowerCase()]),
        ).toHaveLength(0);
        // The same store once an indexer has the pools (no restart of the record: it was never stored).
        const later = await serveApi({
          rpcUrl: dn.anvil.rpcUrl,
          db: store.db,
          indexed: ix.liveReads().reads,
          limiter: new RateLimiter(Date.now, 1000, false),
        });
        try {
          const s = await getOn(later, "/tokens/ORBIO", k);
          expect(s.json).toMatchObject({ screen_status: "SCREENED", tradable: true, tier: "A", blocked_reason: null });
        } finally {
          await later.close();
        }
      } finally {
        await early.close();
        await store.drop();
      }
    },
  );
});

describe("the overall screening budget", () => {
  it(
    "refuses a token not yet seen when the service's budget is spent, even to a caller with its own budget " + "left",
    async () => {
      // Its own server with a service-wide budget of one new screen an hour.
      const other = await serveAnother(undefined, {
        ...SCREEN_DEFAULTS,
        newOverallBurst: 1,
        newOverallPerSecond: 1 / 3600,
      });
      try {
        const [one, two] = [await signIn(other), await signIn(other)];
        const [x, y] = [await deployToken("Overall One", "OV1"), await deployToken("Overall Two", "OV2")];
        expect((await getOn(other, `/tokens/${x}`, one)).status).toBe(200);
        const spent = await getOn(other, `/tokens/${y}`, two);
        expect([spent.status, spent.json.error.code]).toEqual([429, "RATE_LIMITED"]);
        expect(spent.headers.get("retry-after")).toBe("60");
        // Tokens already seen and core assets spend no budget.
        expect((await getOn(other, `/tokens/${x}`, two)).status).toBe(200);
        expect((await getOn(other, "/tokens/WBTC", two)).status).toBe(200);
      } finally {
        await other.close();
      }
    },
  );
});

describe("slow screens and an unreachable registry", () => {
  it("answers UNSCREENED while a screen outlasts the answer window, then the record", async () => {
    const saved = { ...SCREEN };
    const token = (
      await dn.mined(
        await dn.walletFor(dn.deployer).deployContract({
          abi: parseAbi(["constructor(string, string, uint8)"]),
          bytecode: fixtureBytecode("TestToken", "TestToken"),
          args: ["Slow Token", "SLOW", 18],
        }),
      )
    ).contractAddress!;
    try {
      SCREEN.answerWithinMs = 0;
      const first = await get(`/tokens/${token}`);
      expect(first.status).toBe(200);
      expect(first.json).toMatchObject({ screen_status: "UNSCREENED", tradable: false, shield_available: true });
      expect(first.json.address.toLowerCase()).toBe(token.toLowerCase());
    } finally {
      Object.assign(SCREEN, saved);
    }
    let later: any;
    for (let i = 0; i < 50; i++) {
      later = await get(`/tokens/${token}`);
      if (later.json.screen_status === "SCREENED") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(later.json).toMatchObject({
      screen_status: "SCREENED",
      symbol: "SLOW",
      tier: "blocked",
      blocked_reason: "NO_ROUTE",
    });
  });

  it("answers 503 REGISTRY_UNAVAILABLE when the app store does not answer", async () => {
    // Keys answer from the live store; everything else (the registry) from a closed one. A warmed
    // key cache would do the same only while its 2 s last, which a busy CI machine can outlast.
    const { openPglite } = await import("../../api/ports/store/db.js");
    const closed = await openPglite();
    await closed.close();
    const live = stack.store.db;
    const keysOnly: typeof live = {
      kind: closed.kind,
      query: (text, params) =>
        (/app\.api_keys/.test(text) ? live.query(text, params) : closed.query(text, params)) as any,
      exec: (text) => closed.exec(text),
      tx: (fn) => closed.tx(fn),
      exclusive: (name, fn) => closed.exclusive(name, fn),
      close: async () => {},
    };
    const broken = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: keysOnly,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 100, false),
    });
    const r = await broken.call("GET", `/api/v1/tokens/${fx().honeypot}`, undefined, {
      authorization: `Bearer ${key}`,
    });
    await broken.close();
    expect([r.status, r.json.error.code]).toEqual([503, "REGISTRY_UNAVAILABLE"]);
    expect(r.headers.get("retry-after")).toBeTruthy();
  });
});
