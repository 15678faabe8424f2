import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  erc20Abi,
  keccak256,
  maxUint256,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { createPitClient, PitError, readPins, type Pins } from "@pit/sdk";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { mintableAbi } from "../../abis/erc20.js";
import { PERMIT2_ADDRESS } from "../../abis/permit2.js";
import { fastRoutesSha256, type FastRouteTable } from "../../lib/fastRoutes.js";
import { poolId } from "../../lib/v4.js";
import { freshenMarket, postAnswer, startStack, untilMarked, type Stack } from "../../test/helpers/stack.js";
import { counted, startHostile, type Hostile } from "./hostileServer.js";

/**
 * The SDK's fast mode (issue 19): the transaction built from the pinned route table, each reason
 * the client leaves fast mode (FAST_PAIR, STALE, APPROVAL, POOL_FAR, ROUTE_CAP, MARKS_DIFFER,
 * COOLDOWN, CONFIG_MISMATCH, the server's refusal) with nothing signed before it, the fallback at
 * the fast transaction's nonce, and a server that refuses while relaying getting one trade, not two.
 */
let stack: Stack;
let hostile: Hostile;
let pins: Pins;
const ATTACKER = "0x000000000000000000000000000000000000dead" as Address;
const sell = { tokenIn: "ETH", tokenOut: "USDG", notionalUsd: 40 };

beforeAll(async () => {
  stack = await startStack({ before: freshenMarket });
  hostile = await startHostile(() => stack.api.url);
  pins = await readPins(stack.api.url);
}, 180_000);
afterAll(async () => {
  await hostile?.close();
  await stack?.stop();
});

/** One wallet for the refusals (nothing it signs is sent): a client address opens 20 accounts a day. */
const SHARED = generatePrivateKey();
async function funded(eth = "1", pk: Hex = generatePrivateKey()) {
  const a = counted(pk);
  await stack.dn.test.setBalance({ address: a.address, value: parseEther(eth) });
  return a;
}
/** A signed-in client with the route table pinned (from the real service: pins are taken when trusted). */
async function client(account: LocalAccount, base = hostile.url) {
  hostile.reset();
  const pit = await createPitClient({ baseUrl: base, rpcUrl: stack.dn.anvil.rpcUrl, account, pins });
  await pit.signIn();
  await pit.pinFastRoutes();
  return pit;
}
const nonceOf = (a: Address) => stack.dn.pub.getTransactionCount({ address: a });
const usdgOf = (a: Address) =>
  stack.dn.pub.readContract({ address: stack.dn.token("USDG"), abi: erc20Abi, functionName: "balanceOf", args: [a] });
const fastAnswer = (code: string, status: number) => async (path: string) =>
  path.startsWith("/api/v1/live/fast") && !path.includes("terms")
    ? { status, json: { error: { code, message: `the stand-in answers ${code}` } } }
    : undefined;
/** live/fast relayed by the real service, then answered as a refusal before any relay would be. */
const relayThenRefuse = (code: string) => async (path: string, _body: unknown, forward: () => Promise<unknown>) => {
  if (!path.startsWith("/api/v1/live/fast") || path.includes("terms")) return undefined;
  await forward();
  return { status: 422, json: { error: { code, message: "the stand-in relayed, then refused" } } };
};
const refusal = async (p: Promise<unknown>) => {
  const err = await p.catch((e) => e);
  expect(err).toBeInstanceOf(PitError);
  return err as PitError;
};

describe("the SDK's fast mode", () => {
  it("trades ETH -> USDG from the pinned table: one signature, relayed byte for byte, output checked", async () => {
    const a = await funded();
    const pit = await client(a, stack.api.url);
    const t = await pit.fastTrade(sell);
    expect([t.path, t.reason]).toEqual(["fast", null]);
    expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
    expect(a.signed.tx).toBe(1);
    const trades = await pit.account<{ trades: { path: string; tx_hash: string }[] }>("/me/trades");
    expect(trades.trades[0]).toMatchObject({ path: "fast", tx_hash: t.txHash });
  });

  it("needs Permit2 approved for an ERC-20 input (APPROVAL), then carries a permit for exactly the input", async () => {
    const a = await funded();
    await stack.dn.mined(
      await stack.dn.walletFor(stack.dn.deployer).writeContract({
        address: stack.dn.token("USDG"),
        abi: mintableAbi,
        functionName: "mint",
        args: [a.address, 1_000_000_000n],
      }),
    );
    const pit = await client(a, stack.api.url);
    const buy = { tokenIn: "USDG", tokenOut: "ETH", amountIn: 30_000_000n };
    const err = await refusal(pit.fastTrade({ ...buy, fallback: false }));
    expect(err.code).toBe("APPROVAL");
    expect([a.signed.tx, a.signed.typed]).toEqual([0, 0]);
    // The wallet's own one-time approve of Permit2 (signed by the same account: counted too).
    await stack.dn.mined(
      await stack.dn.walletFor(a as never).writeContract({
        address: stack.dn.token("USDG"),
        abi: erc20Abi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, maxUint256],
      }),
    );
    const t = await pit.fastTrade({ ...buy, fallback: false });
    expect(t.path).toBe("fast");
    expect([a.signed.tx, a.signed.typed]).toEqual([2, 1]);
    expect(t.amountIn).toBe(buy.amountIn);
  });

  it("leaves fast mode for a pair the table does not pin (FAST_PAIR), over the route's cap (ROUTE_CAP)", async () => {
    const a = await funded("3");
    const pit = await client(a, stack.api.url);
    expect(
      (
        await refusal(
          pit.fastTrade({ tokenIn: "ETH", tokenOut: "WBTC", amountIn: parseEther("0.007"), fallback: false }),
        )
      ).code,
    ).toBe("FAST_PAIR");
    expect(
      (await refusal(pit.fastTrade({ tokenIn: "ETH", tokenOut: "USDG", amountIn: parseEther("2"), fallback: false })))
        .code,
    ).toBe("ROUTE_CAP");
    expect(a.signed.tx).toBe(0);
    const t = await pit.fastTrade({ tokenIn: "ETH", tokenOut: "WBTC", amountIn: parseEther("0.007") });
    expect([t.path, t.reason]).toEqual(["fallback", "FAST_PAIR"]);
    expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
  });

  const mismatches: [string, (path: string, body: any) => any][] = [
    [
      "another route table",
      (path, b) => (path.includes("fast/terms") ? { ...b, routes: { ...b.routes, sha256: keccak256("0x01") } } : b),
    ],
    [
      "another fee recipient",
      (path, b) => (path.includes("fast/terms") ? { ...b, fee: { ...b.fee, recipient: ATTACKER } } : b),
    ],
    [
      "a fee above the pinned schedule",
      (path, b) => (path.includes("fast/terms") ? { ...b, fee: { ...b.fee, bps: 100 } } : b),
    ],
  ];
  it.each(mismatches)("refuses terms with %s (CONFIG_MISMATCH), signs nothing", async (_name, edit) => {
    const a = await funded("1", SHARED);
    const pit = await client(a);
    hostile.tamper = edit;
    const err = await refusal(pit.fastTrade({ ...sell, fallback: false }));
    expect(err.code).toBe("CONFIG_MISMATCH");
    expect(a.signed.tx).toBe(0);
  });

  const tables: [string, (pairs: any[]) => void][] = [
    ["a hooked pool", (pairs) => (pairs[0].hops[0].hooks = ATTACKER)],
    ["a pool charging 50 %", (pairs) => (pairs[0].hops[0].fee = 500_000)],
    ["a band of 90 %", (pairs) => (pairs[0].band_bps = 9_000)],
    ["a cap above SPEC's", (pairs) => (pairs[0].max_usd = 1_000_000)],
    ["hops that end elsewhere", (pairs) => (pairs[0].hops = [pairs[0].hops[0], pairs[0].hops[0]])],
    [
      "the partner token",
      (pairs) => ((pairs[0].token_out = "ORBIO"), (pairs[0].address_out = pins.tokens.ORBIO!.address)),
    ],
    [
      "two hops through another token than USDG",
      (pairs) => {
        const two = pairs.find((p: any) => p.hops.length === 2 && p.token_in === "ETH");
        const wbtc = pins.tokens.WBTC!.address;
        const hop = (a: Address, b: Address, from: Address) => {
          const [c0, c1] = a.toLowerCase() < b.toLowerCase() ? [a, b] : [b, a];
          const key = { currency0: c0, currency1: c1, fee: 3_000, tickSpacing: 60, hooks: zeroAddress };
          return {
            pool_id: poolId(key),
            currency0: c0,
            currency1: c1,
            fee: 3_000,
            tick_spacing: 60,
            hooks: zeroAddress,
            zero_for_one: c0 === from,
          };
        };
        two.hops = [hop(zeroAddress, wbtc, zeroAddress), hop(wbtc, two.address_out, wbtc)];
      },
    ],
    ["a gas floor no transaction can meet", (pairs) => (pairs[0].gas_floor = 5_000_000)],
    [
      "a hookless pool of pinned tokens at 1 % that is not a pinned pool (one the server made)",
      (pairs) => {
        const h = pairs.find((p: any) => p.token_in === "ETH" && p.token_out === "USDG").hops[0];
        Object.assign(h, {
          fee: 10_000,
          tick_spacing: 200,
          pool_id: poolId({
            currency0: h.currency0,
            currency1: h.currency1,
            fee: 10_000,
            tickSpacing: 200,
            hooks: zeroAddress,
          }),
        });
      },
    ],
  ];
  it.each(tables)(
    "refuses to pin a table with %s, even under its own SHA-256 (CONFIG_MISMATCH)",
    async (_name, edit) => {
      const a = await funded("1", SHARED);
      hostile.reset();
      const pit = await createPitClient({ baseUrl: hostile.url, rpcUrl: stack.dn.anvil.rpcUrl, account: a, pins });
      await pit.signIn();
      hostile.tamper = (path, b) => {
        if (!path.includes("fast/terms")) return b;
        const pairs = structuredClone(b.routes.pairs);
        edit(pairs);
        const table: FastRouteTable = {
          version: b.routes.version,
          chain_id: pins.chainId,
          router: pins.router,
          pairs,
          max_usd: b.routes.max_usd,
        };
        return { ...b, routes: { ...b.routes, pairs, sha256: fastRoutesSha256(table) } };
      };
      expect((await refusal(pit.pinFastRoutes())).code).toBe("CONFIG_MISMATCH");
      // A table edited after pinning is caught when it is used.
      hostile.reset();
      const pinned = await pit.pinFastRoutes();
      edit(pinned.table.pairs);
      expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("CONFIG_MISMATCH");
      expect(a.signed.tx).toBe(0);
    },
  );

  it("refuses fast terms that are not in the disclosed shape (CONFIG_MISMATCH), signs nothing", async () => {
    const a = await funded("1", SHARED);
    const pit = await client(a);
    hostile.tamper = (path, b) => (path.includes("fast/terms") ? { enabled: true, routes: null } : b);
    expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("CONFIG_MISMATCH");
    expect(a.signed.tx).toBe(0);
  });

  it("refuses marks more than 3 % from the server's (MARKS_DIFFER), signs nothing", async () => {
    const a = await funded("1", SHARED);
    const pit = await client(a);
    hostile.tamper = (path, b) =>
      path.startsWith("/api/v1/stats")
        ? { ...b, assets: b.assets.map((x: any) => (x.symbol === "ETH" ? { ...x, mark: x.mark * 1.05 } : x)) }
        : b;
    expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("MARKS_DIFFER");
    expect(a.signed.tx).toBe(0);
  });

  it("falls back at the fast tx's nonce when the server refuses it, then rests the pair (COOLDOWN)", async () => {
    const a = await funded();
    const pit = await client(a);
    const before = await nonceOf(a.address);
    hostile.handle = fastAnswer("MIN_OUT", 422);
    const t = await pit.fastTrade(sell);
    expect([t.path, t.reason]).toEqual(["fallback", "MIN_OUT"]);
    // Two signatures (the refused fast one and the prepared one), one nonce used.
    expect(a.signed.tx).toBe(2);
    expect(await nonceOf(a.address)).toBe(before + 1);
    hostile.handle = null;
    expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("COOLDOWN");
    expect(a.signed.tx).toBe(2);
  });

  it("gives a server that relays while answering a refusal one trade, not two, and reports it", async () => {
    const a = await funded();
    const pit = await client(a);
    const [nonce, usdg] = [await nonceOf(a.address), await usdgOf(a.address)];
    hostile.handle = relayThenRefuse("POOL_FAR");
    // The fallback signs at the fast transaction's nonce; the chain refuses it as spent, and the
    // client finds the fast bytes mined: they are the trade.
    const t = await pit.fastTrade(sell);
    expect([t.path, t.reason]).toEqual(["fast", "POOL_FAR"]);
    expect(a.signed.tx).toBe(2);
    expect(await nonceOf(a.address)).toBe(nonce + 1);
    const gained = (await usdgOf(a.address)) - usdg;
    expect(gained).toBe(t.amountOut);
    // One $40 trade at ~$3,000 ETH, never two.
    expect(Number(gained) / 1e6).toBeGreaterThan(35);
    expect(Number(gained) / 1e6).toBeLessThan(45);
  });

  it("with fallback off, finds refused bytes the server relayed anyway and answers them", async () => {
    const a = await funded();
    const pit = await client(a);
    const nonce = await nonceOf(a.address);
    hostile.handle = relayThenRefuse("MIN_OUT");
    const t = await pit.fastTrade({ ...sell, fallback: false });
    expect([t.path, t.reason]).toEqual(["fast", "MIN_OUT"]);
    expect(a.signed.tx).toBe(1);
    expect(await nonceOf(a.address)).toBe(nonce + 1);
  });

  it(
    "signs nothing else after an answer that may follow a relay (SEQUENCER_UNREACHABLE): " +
      "sends its own bytes and reports them",
    async () => {
      const a = await funded();
      const pit = await client(a);
      const nonce = await nonceOf(a.address);
      hostile.handle = fastAnswer("SEQUENCER_UNREACHABLE", 502);
      const t = await pit.fastTrade(sell);
      expect([t.path, t.reason]).toEqual(["fast", "SEQUENCER_UNREACHABLE"]);
      expect(a.signed.tx).toBe(1);
      expect(await nonceOf(a.address)).toBe(nonce + 1);
      expect(t.amountOut).toBeGreaterThanOrEqual(t.minOut);
    },
  );

  it(
    "raises HASH_MISMATCH for another hash than the signed bytes' (or none), " +
      "with the signed hash, without falling back",
    async () => {
      for (const answer of [{ tx_hash: keccak256("0x02") }, null]) {
        const a = await funded();
        const pit = await client(a);
        hostile.tamper = (path, b) => (path === "/api/v1/live/fast" ? answer : b);
        const err = await refusal(pit.fastTrade(sell));
        expect(err.code).toBe("HASH_MISMATCH");
        expect(err.detail.signed?.hash).toMatch(/^0x[0-9a-f]{64}$/);
        expect(a.signed.tx).toBe(1);
      }
    },
  );

  describe("with the market moved", () => {
    const feed = () => stack.dn.universe.tokens.ETH!.feed!;
    const setFeed = (answer: bigint) => postAnswer(stack.dn, feed(), answer);
    /** Until the server's stats publish ETH at about `usd` (its index and 5 s cache follow the chain). */
    const statsShow = (usd: number) => untilMarked(stack.api, "ETH", usd);

    it("refuses a pinned pool further under the oracle than its fees and band (POOL_FAR)", async () => {
      const [, answer] = await stack.dn.pub.readContract({
        address: feed(),
        abi: priceFeedAbi,
        functionName: "latestRoundData",
      });
      const a = await funded();
      const pit = await client(a, stack.api.url);
      await setFeed((answer * 108n) / 100n);
      try {
        await statsShow((Number(answer) / 1e8) * 1.08);
        expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("POOL_FAR");
        expect(a.signed.tx).toBe(0);
      } finally {
        await setFeed(answer);
        await statsShow(Number(answer) / 1e8);
      }
    });

    it("refuses a mark of its own older than three days (STALE)", async () => {
      const a = await funded("1", SHARED);
      const pit = await client(a, stack.api.url);
      await stack.dn.test.increaseTime({ seconds: 4 * 86_400 });
      await stack.dn.test.mine({ blocks: 1 });
      expect((await refusal(pit.fastTrade({ ...sell, fallback: false }))).code).toBe("STALE");
      expect(a.signed.tx).toBe(0);
    });
  });
});
