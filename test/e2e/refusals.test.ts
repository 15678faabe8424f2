import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, type Address } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import type { Indexer } from "../helpers/indexer.js";
import { serveApi, type Api } from "../helpers/api.js";
import { freshenMarket, postAnswer, startStack, type Stack } from "../helpers/stack.js";
import type { agentOf } from "../helpers/agent.js";
import { approveForRouter, poolKeyOf, routerSwap } from "../helpers/trades.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import {
  launchpadAbi,
  priceFeedAbi,
  proxyTokenAbi,
  sanctionsListAbi,
  stockRegistryAbi,
  stockTokenAbi,
} from "../../abis/fixtures.js";
import type { SqlIndexedReads } from "../../api/ports/indexed.js";

/**
 * live/prepare over HTTP: every refusal of SPEC.md "Risk and policy" and "Curve trades" that a plan can meet, with its
 * status.
 */
let dn: Devnet;
let ix: Indexer;
let store: Stack["store"];
let api: Api;
let shield: NonNullable<Stack["shield"]>;
let agent: ReturnType<typeof agentOf>;
let wallet: ReturnType<typeof privateKeyToAccount>;
let key: string;
const fx = () =>
  dn.universe.devnet!.fixtures as Record<string, Address> & {
    proxyToken: Address;
    launchToken: Address;
    namespacedToken: Address;
  };

const prepare = (body: Record<string, unknown>, k = key, a = api) =>
  a.call("POST", "/api/v1/live/prepare", { wallet: wallet.address, ...body }, { authorization: `Bearer ${k}` });
async function refused(body: Record<string, unknown>, code: string, status = 422) {
  const r = await prepare(body);
  expect(r.status, `${code}: ${JSON.stringify(r.json)}`).toBe(status);
  expect(r.json.error.code).toBe(code);
  expect(typeof r.json.error.message).toBe("string");
  return r.json.error;
}
const usdg = (n: string) => parseUnits(n, 6).toString();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ shield: true, before: freshenMarket });
  ({ dn, ix, store, api, agent } = stack);
  shield = stack.shield!;
  wallet = await dn.freshWallet(parseEther("100"), [[dn.token("USDG"), parseUnits("100000", 6)]]);
  key = await agent.signIn(wallet);
}, 120_000);
afterAll(() => stack?.stop());

describe("request rules", () => {
  it(
    "400 BAD_REQUEST for malformed bodies; 422 FEE_FIXED for fee_bps; 403 WALLET_MISMATCH for another " + "wallet",
    async () => {
      await refused({ token_in: "ETH" }, "BAD_REQUEST", 400);
      await refused({ token_in: "ETH", token_out: "USDG", amount_in: "1", notional_usd: 5 }, "BAD_REQUEST", 400);
      await refused({ token_in: "ETH", token_out: "USDG", amount_in: "0x10" }, "BAD_REQUEST", 400);
      await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, slipage_bps: 10 }, "BAD_REQUEST", 400);
      await refused(
        { token_in: "ETH", token_out: "USDG", notional_usd: 10, policies: ["block_severe"] },
        "BAD_REQUEST",
        400,
      );
      await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, venues: ["sushi"] }, "BAD_REQUEST", 400);
      await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, fee_bps: 0 }, "FEE_FIXED");
      await refused(
        { token_in: "ETH", token_out: "USDG", notional_usd: 10, wallet: dn.universe.devnet!.accounts.traderA },
        "WALLET_MISMATCH",
        403,
      );
      const noWallet = await api.call(
        "POST",
        "/api/v1/live/prepare",
        { token_in: "ETH", token_out: "USDG", notional_usd: 10 },
        { authorization: `Bearer ${key}` },
      );
      expect(noWallet.status).toBe(400);
    },
  );

  it("451 SANCTIONED when the trading wallet joins the sanctions list after signing in", async () => {
    const w = await dn.freshWallet(parseEther("1"));
    const k = await agent.signIn(w);
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[w.address]],
      }),
    );
    const r = await api.call(
      "POST",
      "/api/v1/live/prepare",
      { wallet: w.address, token_in: "ETH", token_out: "USDG", notional_usd: 10 },
      { authorization: `Bearer ${k}` },
    );
    expect(r.status).toBe(451);
    expect(r.json.error).toMatchObject({ code: "SANCTIONED", field: "wallet" });
    // Every keyed route refuses it; it may still revoke its own key.
    for (const path of ["/tokens/USDG", "/me/trades", "/auth/me"])
      expect((await agent.get(path, k)).status, path).toBe(451);
    expect((await agent.post("/live/quote", { token_in: "ETH", token_out: "USDG", notional_usd: 10 }, k)).status).toBe(
      451,
    );
    expect((await api.call("POST", "/api/v1/auth/revoke", undefined, { authorization: `Bearer ${k}` })).status).toBe(
      200,
    );
  });

  it("tokens: TOKEN_NOT_ALLOWED, SAME_TOKEN, NO_ROUTE, TOKEN_UNKNOWN", async () => {
    await refused({ token_in: "DOGE", token_out: "USDG", notional_usd: 10 }, "TOKEN_NOT_ALLOWED");
    await refused({ token_in: "USDG", token_out: "usdg", notional_usd: 10 }, "SAME_TOKEN");
    await refused({ token_in: "USDG", token_out: fx().noPoolToken, notional_usd: 10 }, "NO_ROUTE");
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, route_id: "v4:0xdead" }, "NO_ROUTE");
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, venues: ["curve"] }, "NO_ROUTE");
    await refused(
      { token_in: "USDG", token_out: dn.universe.devnet!.accounts.traderB, notional_usd: 10 },
      "TOKEN_UNKNOWN",
    );
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, route_id: "zeroex" }, "QUOTE_ONLY");
  });
});

describe("policy", () => {
  it("fees: FEE_BPS when the fee is above max_fee_bps; the same request under the cap passes", async () => {
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, max_fee_bps: 20 }, "FEE_BPS");
    expect((await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 10, max_fee_bps: 25 })).status).toBe(200);
    // Shield adds 10 bps: 35 > 30.
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10, max_fee_bps: 30, shield: true }, "FEE_BPS");
  });

  it("size: MIN_NOTIONAL, MAX_NOTIONAL (service and tier), MAX_SLIPPAGE by size, LIMIT_NOT_REACHABLE", async () => {
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 0.5 }, "MIN_NOTIONAL");
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10_001 }, "MAX_NOTIONAL");
    await refused({ token_in: "ETH", token_out: "USDG", amount_in: parseEther("4").toString() }, "MAX_NOTIONAL");
    // A tier-C token allows $500.
    await refused(
      { token_in: "USDG", token_out: fx().markupToken, notional_usd: 600, accept_risks: ["NO_INDEPENDENT_MARK"] },
      "MAX_NOTIONAL",
    );
    expect((await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 900, slippage_bps: 500 })).status).toBe(
      200,
    );
    await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 2_000, slippage_bps: 400 }, "MAX_SLIPPAGE");
    await refused(
      { token_in: "ETH", token_out: "USDG", notional_usd: 10, min_amount_out: usdg("11") },
      "LIMIT_NOT_REACHABLE",
    );
  });

  it("slippage defaults to the pair's for its size, as /config slippage_tolerance_by_size publishes", async () => {
    const config = (await api.call("GET", "/api/v1/config")).json;
    const rows = config.limits.slippage_tolerance_by_size as {
      max_notional_usd: number;
      default_slippage_bps: { major: number; other: number };
    }[];
    const quote = async (body: Record<string, unknown>) =>
      (await api.call("POST", "/api/v1/live/quote", body, { authorization: `Bearer ${key}` })).json;
    const major = await quote({ token_in: "ETH", token_out: "USDG", notional_usd: 2_000 });
    expect([major.fee_class, major.slippage_bps]).toEqual(["major", rows[1]!.default_slippage_bps.major]);
    const other = await quote({ token_in: "USDG", token_out: "ORBIO", notional_usd: 2_000 });
    expect([other.fee_class, other.slippage_bps]).toEqual(["other", rows[1]!.default_slippage_bps.other]);
    expect(other.slippage_bps).not.toBe(major.slippage_bps);
    const small = await quote({ token_in: "USDG", token_out: "ORBIO", notional_usd: 100 });
    expect(small.slippage_bps).toBe(rows[0]!.default_slippage_bps.other);
    // A slippage the request names is kept as named.
    expect(
      (await quote({ token_in: "USDG", token_out: "ORBIO", notional_usd: 100, slippage_bps: 30 })).slippage_bps,
    ).toBe(30);
  });

  it(
    "approvals: APPROVAL_MODE, APPROVAL_BUDGET, UNLIMITED_APPROVAL; UNLIMITED_APPROVAL_IN_PLACE is a " + "check",
    async () => {
      const base = { token_in: "USDG", token_out: "ETH", notional_usd: 10 };
      await refused({ ...base, approval_mode: "forever" }, "APPROVAL_MODE");
      await refused({ ...base, approval_budget_usd: 0 }, "APPROVAL_BUDGET");
      await refused({ ...base, approval_budget_usd: 10_001 }, "APPROVAL_BUDGET");
      await refused({ ...base, approval_mode: "unlimited" }, "UNLIMITED_APPROVAL");
      const p = await prepare({
        ...base,
        approval_mode: "unlimited",
        allow_unlimited_approval: true,
        permit_mode: "transaction",
      });
      expect(p.status, JSON.stringify(p.json)).toBe(200);
      for (const s of p.json.steps.filter((x: any) => x.kind === "approve"))
        await dn.mined(await dn.pub.sendRawTransaction({ serializedTransaction: await agent.sign(wallet, s.tx) }));
      const again = await prepare(base);
      expect(again.json.checks).toContain("UNLIMITED_APPROVAL_IN_PLACE");
      expect(again.json.steps.map((s: any) => s.kind)).toEqual(["swap"]);
    },
  );

  it(
    "risks: RISK_NOT_ACCEPTED lists what is unaccepted; Shield policies give RISK_BLOCKED; an unreadable verdict is " +
      "503",
    async () => {
      const e = await refused({ token_in: "USDG", token_out: fx().proxyToken, notional_usd: 20 }, "RISK_NOT_ACCEPTED");
      expect(e.unaccepted).toEqual(["NO_INDEPENDENT_MARK"]);
      const body = {
        token_in: "USDG",
        token_out: fx().proxyToken,
        notional_usd: 20,
        accept_risks: ["NO_INDEPENDENT_MARK"],
        shield: true,
      };
      const b1 = await refused({ ...body, policies: ["verified_only"] }, "RISK_BLOCKED");
      expect(b1).toMatchObject({ blocked: ["UNVERIFIED"], policy: ["verified_only"] });
      const b2 = await refused({ ...body, policies: ["block_severe"] }, "RISK_BLOCKED");
      expect(b2.blocked).toEqual(["NO_INDEPENDENT_MARK"]);
      shield.set(fx().proxyToken, "verified");
      const ok = await prepare({ ...body, policies: ["verified_only"], permit_mode: "transaction" });
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expect(ok.json).toMatchObject({ shield: true, fee_bps: 60, fee_tier: 50 });
      expect(ok.json.report).toMatchObject({ verdict: "verified", source: "shield-stand-in" });
      expect(ok.json.report.tokens[fx().proxyToken.toLowerCase()].verdict).toBe("verified");
      const core = await agent.post(
        "/live/quote",
        { token_in: "ETH", token_out: "USDG", notional_usd: 10, shield: true },
        key,
      );
      expect(core.json.report).toMatchObject({ verdict: null, tokens: {} });
      shield.down();
      await refused(body, "REPORT_UNAVAILABLE", 503);
      shield.down(false);
    },
  );

  it(
    "price: ROUTE_VS_MID for a size far under the pool mid, ROUTE_VS_REF when the oracle disagrees with the " + "pool",
    async () => {
      // The indexer stalls (a real process, frozen) while a whale sells several percent off the
      // BTC pool on chain: the route now pays far under the mid the service knows.
      const resume = ix.pause();
      try {
        const whale = await dn.freshWallet(parseEther("1"), [[dn.token("WBTC"), parseUnits("20", 8)]]);
        await approveForRouter(dn, whale, dn.token("WBTC"));
        await routerSwap(dn, whale, {
          poolKey: poolKeyOf(dn, "WBTC", "USDG"),
          tokenIn: dn.token("WBTC"),
          tokenOut: dn.token("USDG"),
          amountIn: parseUnits("15", 8),
          minOut: 0n,
          feeBips: 0n,
          feeRecipient: whale.address,
        });
        // Pool states are re-read at most once a second.
        await new Promise((r) => setTimeout(r, 1_100));
        const r = await prepare({
          token_in: "WBTC",
          token_out: "USDG",
          notional_usd: 100,
          accept_risks: ["HIGH_PRICE_IMPACT"],
        });
        expect(r.status, JSON.stringify(r.json)).toBe(422);
        expect(r.json.error.code).toBe("ROUTE_VS_MID");
        expect(r.json.error.message).toMatch(/under the pool mid/);
      } finally {
        resume();
      }
      await ix.waitFor(await dn.pub.getBlockNumber());
      // A size that moves a real pool shows in the quote as distance from the mid.
      const q = await api.call(
        "POST",
        "/api/v1/live/quote",
        { token_in: "USDG", token_out: "ORBIO", notional_usd: 9_900 },
        { authorization: `Bearer ${key}` },
      );
      expect(q.json.best.vs_mid_bps).toBeLessThan(-200);
      // TSLA's oracle doubles; its pool does not move.
      const feed = fx().feedTSLA!;
      const [, answer] = await dn.pub.readContract({
        address: feed,
        abi: priceFeedAbi,
        functionName: "latestRoundData",
      });
      await postAnswer(dn, feed, answer * 2n);
      await ix.waitFor(await dn.pub.getBlockNumber());
      await new Promise((r) => setTimeout(r, 1_100));
      const e = await refused(
        { token_in: "USDG", token_out: "TSLA", notional_usd: 100, owner_attests_non_us: true },
        "ROUTE_VS_REF",
      );
      expect(e.message).toMatch(/oracle/);
      await postAnswer(dn, feed, answer);
    },
  );

  it("stock tokens: GEOFENCE, STOCK_PAUSED, WALLET_BLOCKED", async () => {
    await refused({ token_in: "USDG", token_out: "NVDA", notional_usd: 50 }, "GEOFENCE");
    const deployer = dn.walletFor(dn.deployer);
    await dn.mined(
      await deployer.writeContract({
        address: dn.universe.contracts.stockRegistry,
        abi: stockRegistryAbi,
        functionName: "setBlocked",
        args: [wallet.address, true],
      }),
    );
    await refused(
      { token_in: "USDG", token_out: "NVDA", notional_usd: 50, owner_attests_non_us: true },
      "WALLET_BLOCKED",
    );
    await dn.mined(
      await deployer.writeContract({
        address: dn.universe.contracts.stockRegistry,
        abi: stockRegistryAbi,
        functionName: "setBlocked",
        args: [wallet.address, false],
      }),
    );
    await dn.mined(
      await deployer.writeContract({
        address: dn.token("NVDA"),
        abi: stockTokenAbi,
        functionName: "setTokenPaused",
        args: [true],
      }),
    );
    await refused(
      { token_in: "USDG", token_out: "NVDA", notional_usd: 50, owner_attests_non_us: true },
      "STOCK_PAUSED",
    );
    await dn.mined(
      await deployer.writeContract({
        address: dn.token("NVDA"),
        abi: stockTokenAbi,
        functionName: "setTokenPaused",
        args: [false],
      }),
    );
  });
});

describe("simulation", () => {
  it(
    "QUOTE_SIM_MISMATCH when a transfer tax eats the output; DRY_RUN_UNFUNDABLE; SIMULATION_FAILED when the sale " +
      "reverts",
    async () => {
      // A 5% tax on each transfer: within 500 bps of slippage the router's minimum passes, but the
      // wallet receives about 90% of the quote.
      const body = {
        token_in: "USDG",
        token_out: fx().feeOnTransfer,
        notional_usd: 20,
        accept_risks: ["NO_INDEPENDENT_MARK"],
        permit_mode: "transaction",
      };
      const e = await refused({ ...body, slippage_bps: 500 }, "QUOTE_SIM_MISMATCH");
      expect(BigInt(e.simulation.amount_out)).toBeLessThan(BigInt(e.quoted));
      // With the default 50 bps the router's own minimum stops it.
      const f = await refused(body, "SIMULATION_FAILED");
      expect(f.simulation.ok).toBe(false);
      // Selling a honeypot: the wallet has none, the simulation lends it, and the transfer reverts.
      // A token whose balances overrides cannot reach: lending it for the dry run is impossible.
      const u = await refused(
        {
          token_in: fx().namespacedToken,
          token_out: "USDG",
          amount_in: parseEther("10").toString(),
          accept_risks: ["NO_INDEPENDENT_MARK"],
          permit_mode: "transaction",
        },
        "DRY_RUN_UNFUNDABLE",
      );
      expect(u.message).toMatch(/fund false/);
      await refused(
        {
          token_in: fx().honeypot,
          token_out: "USDG",
          amount_in: parseEther("5").toString(),
          accept_risks: ["NO_INDEPENDENT_MARK", "HONEYPOT"],
          permit_mode: "transaction",
        },
        "SIMULATION_FAILED",
      );
    },
  );
});

describe("curve trades", () => {
  it("CURVE_PAIR, CURVE_GRADUATED, FEE_TOO_SMALL, SNIPE_TAX", async () => {
    await refused({ token_in: "USDG", token_out: fx().launchToken, notional_usd: 20 }, "CURVE_PAIR");
    await refused(
      {
        token_in: "ETH",
        token_out: fx().launchToken,
        amount_in: parseEther("90").toString(),
        accept_risks: ["NO_INDEPENDENT_MARK"],
      },
      "CURVE_GRADUATED",
    );
    await refused(
      { token_in: "ETH", token_out: fx().launchToken, amount_in: "100", accept_risks: ["NO_INDEPENDENT_MARK"] },
      "FEE_TOO_SMALL",
    );
    // A token launched this block is inside its snipe-tax window.
    const creator = await dn.freshWallet(parseEther("1"));
    const hash = await dn.walletFor(creator).writeContract({
      address: dn.universe.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "launch",
      args: ["Fresh", "FRSH", 0],
    });
    await dn.mined(hash);
    await ix.waitFor(await dn.pub.getBlockNumber());
    const count = await dn.pub.readContract({
      address: dn.universe.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "tokenCount",
    });
    const token = await dn.pub.readContract({
      address: dn.universe.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "tokens",
      args: [count - 1n],
    });
    const e = await refused(
      {
        token_in: "ETH",
        token_out: token,
        amount_in: parseEther("0.01").toString(),
        accept_risks: ["NO_INDEPENDENT_MARK"],
      },
      "SNIPE_TAX",
    );
    expect(e.message).toMatch(/snipe/);
  });
});

describe("a token that changed under the registry", () => {
  it("409 TOKEN_CHANGED when a proxy token's implementation moved since its screen", async () => {
    const body = {
      token_in: "USDG",
      token_out: fx().proxyToken,
      notional_usd: 20,
      accept_risks: ["NO_INDEPENDENT_MARK"],
      permit_mode: "transaction",
    };
    expect((await prepare(body)).status).toBe(200);
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: fx().proxyToken,
        abi: proxyTokenAbi,
        functionName: "upgradeProxyTo",
        args: [fx().proxyImplV2!],
      }),
    );
    // The implementation is re-read at most every 5 s.
    await new Promise((r) => setTimeout(r, 5_100));
    await refused(body, "TOKEN_CHANGED", 409);
  });
});

describe("outside the happy path of the service itself", () => {
  it("NO_REFERENCE_MID while the indexer has not seen the pool; NO_MARK with no price to size by", async () => {
    const real = ix.liveReads().reads;
    let marks = true;
    // An indexer that has not yet read the universe's pools (and, second, no oracle round). A real
    // Ponder cannot be held there: its PostgreSQL views appear only once the backfill is done, so
    // the reads are the real ones with those two tables seen empty.
    const lagging: SqlIndexedReads = {
      ...real,
      pools: async () => [],
      latestMark: async (feed, now) => (marks ? real.latestMark(feed, now) : null),
    };
    const lag = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: store.db,
      indexed: lagging,
      limiter: new RateLimiter(Date.now, 10_000, false),
    });
    try {
      const r = await prepare(
        { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.01").toString() },
        key,
        lag,
      );
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe("NO_REFERENCE_MID");
      marks = false;
      await new Promise((r) => setTimeout(r, 1_100));
      const m = await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 10 }, key, lag);
      expect(m.status).toBe(503);
      expect(m.json.error.code).toBe("NO_MARK");
      expect(m.headers.get("retry-after")).toBeTruthy();
    } finally {
      await lag.close();
    }
  });

  it(
    "502 VENUE_FAILED when the venue's quoter fails (retryable; a quote from the pool book still answers); NO_ROUTE " +
      "stays for a pair no venue trades",
    async () => {
      const quoter = dn.universe.contracts.v4Quoter;
      const code = (await dn.pub.getCode({ address: quoter }))!;
      // A quoter that fails every call: the pools exist, their read does not answer.
      await dn.test.setCode({ address: quoter, bytecode: "0xfe" });
      try {
        const e = await refused({ token_in: "ETH", token_out: "USDG", notional_usd: 10 }, "VENUE_FAILED", 502);
        expect(e.message).toMatch(/v4:/);
        expect(
          (await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 10 })).headers.get("retry-after"),
        ).toBeTruthy();
        // A quote of hookless pools is computed from the indexer's pool book (issue 31 point 2): the quoter is not
        // asked, so it answers; a prepare reads its quotes on chain (above) and fails.
        await ix.waitFor(await dn.pub.getBlockNumber());
        const q = await api.call(
          "POST",
          "/api/v1/live/quote",
          { token_in: "ETH", token_out: "USDG", notional_usd: 10 },
          { authorization: `Bearer ${key}` },
        );
        expect(q.status, JSON.stringify(q.json)).toBe(200);
        expect(q.json.best).toMatchObject({ venue: "v4", ok: true });
        await refused({ token_in: "USDG", token_out: fx().noPoolToken, notional_usd: 10 }, "NO_ROUTE");
      } finally {
        await dn.test.setCode({ address: quoter, bytecode: code });
      }
      expect((await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 10 })).status).toBe(200);
    },
  );

  it("502 RPC_UNAVAILABLE when the chain stops answering mid-session (prepare and quote)", async () => {
    const proxy = await startRpcProxy(dn.anvil.rpcUrl);
    const flaky = await serveApi({
      rpcUrl: proxy.url,
      db: store.db,
      indexed: ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 10_000, false),
    });
    try {
      const body = { token_in: "ETH", token_out: fx().proxyToken, notional_usd: 10 };
      expect((await prepare({ token_in: "ETH", token_out: "USDG", notional_usd: 10 }, key, flaky)).status).toBe(200);
      proxy.down();
      const r = await prepare(body, key, flaky);
      expect(r.status, JSON.stringify(r.json)).toBe(502);
      expect(r.json.error.code).toBe("RPC_UNAVAILABLE");
      expect(r.headers.get("retry-after")).toBeTruthy();
      const q = await flaky.call(
        "POST",
        "/api/v1/live/quote",
        { token_in: "ETH", token_out: "USDG", notional_usd: 10 },
        { authorization: `Bearer ${key}` },
      );
      expect([q.status, q.json.error.code]).toEqual([502, "RPC_UNAVAILABLE"]);
    } finally {
      await flaky.close();
      await proxy.close();
    }
  });

  it("429 RATE_LIMITED past a key's quote bucket (6, then one per 2 s), with Retry-After", async () => {
    const limited = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, indexed: ix.liveReads().reads });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 7; i++)
        codes.push(
          (
            await limited.call(
              "POST",
              "/api/v1/live/quote",
              { token_in: "ETH", token_out: "USDG", notional_usd: 10 },
              { authorization: `Bearer ${key}` },
            )
          ).status,
        );
      expect(codes.slice(0, 6).every((c) => c === 200)).toBe(true);
      const last = await limited.call(
        "POST",
        "/api/v1/live/quote",
        { token_in: "ETH", token_out: "USDG", notional_usd: 10 },
        { authorization: `Bearer ${key}` },
      );
      expect(last.status).toBe(429);
      expect(last.json.error.code).toBe("RATE_LIMITED");
      expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});

describe("messages that say what to do (issue 30)", () => {
  it("1 wei is MIN_NOTIONAL naming the minimum; tokenIn points to token_in; request_id is the header's", async () => {
    const tiny = await refused({ token_in: "ETH", token_out: "USDG", amount_in: "1" }, "MIN_NOTIONAL");
    expect(tiny.message).toMatch(/\(1 atoms of ETH\), below the \$1 minimum: send amount_in of at least \d+ atoms/);
    const camel = await refused({ tokenIn: "ETH", token_out: "USDG", notional_usd: 5 }, "BAD_REQUEST", 400);
    expect(camel.message).toBe("tokenIn: fields are snake_case; send token_in");
    const r = await prepare({ token_in: "ETH", token_out: "USDG", amount_in: "1" });
    expect(r.json.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json.error.request_id).toBe(r.headers.get("x-request-id"));
  });
});
