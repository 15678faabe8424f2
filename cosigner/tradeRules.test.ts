import { describe, expect, it } from "vitest";
import { encodeFunctionData, getAddress, toHex, zeroAddress, type Address, type Hex } from "viem";
import { Command, ROUTER_ADDRESS_THIS, ROUTER_MSG_SENDER, universalRouterAbi } from "../abis/universalRouter.js";
import type { Refusal } from "../api/errors/index.js";
import { inputs, v4, v4SwapInput } from "../lib/router/encode.js";
import { readRouterCall } from "../lib/router/read.js";
import { bindingSalt, feeTermsOfSchedule2, type SessionBinding } from "../lib/sessionBinding.js";
import { checkExecution, type Counters } from "./checks.js";
import {
  boundRefusal,
  curveRefusal,
  executionRefusal,
  heldRefusal,
  leafExpiry,
  roundUsdPrice,
  sanctionedRefusal,
  signedSide,
  spendAfter,
} from "./tradeRules.js";

/**
 * The gates of one co-signing, pure: each test tries to get a trade co-signed that the owner did
 * not allow, through the same rules the co-signer composes (its own reading of the router call,
 * checkExecution, then the refusal), and shows the code it answers.
 */
const router = "0x00000000000000000000000000000000000000aa" as Address;
const wallet = "0x00000000000000000000000000000000000000bb" as Address;
const feeRecipient = "0x00000000000000000000000000000000000000cc" as Address;
const weth = "0x00000000000000000000000000000000000000dd" as Address;
const usdg = "0x00000000000000000000000000000000000000ee" as Address;
const executor = "0x00000000000000000000000000000000000000e1" as Address;
const thief = "0x0000000000000000000000000000000000000bad" as Address;
const deadline = 2_000_000_000n;
const now = Number(deadline) - 120;
const binding = (over: Partial<SessionBinding> = {}): SessionBinding => ({
  version: 3,
  chain_id: 4663,
  wallet,
  executor,
  cosigner: "0x00000000000000000000000000000000000000c0",
  tokens: [zeroAddress, usdg],
  limits: { max_trade_usd: 50, max_day_usd: 100, max_trades: 3 },
  expires: now + 3_600,
  setup_budget_usd: 100,
  fee: feeTermsOfSchedule2(),
  risk_terms: { accept_risks: [], shield: false, policies: [] },
  ...over,
});

/**
 * ETH -> USDG as the service builds it: 25 bps of the input to the fee recipient, the swap, the output
 * swept to the wallet with its minimum.
 */
function routerCall(o: { amountIn?: bigint; sweepTo?: Address; minOut?: bigint } = {}): Hex {
  const amountIn = o.amountIn ?? 10n ** 16n;
  const fee = (amountIn * 25n) / 10_000n;
  const key = { currency0: zeroAddress, currency1: usdg, fee: 500, tickSpacing: 10, hooks: zeroAddress };
  const swap = v4SwapInput([
    v4.settle(zeroAddress, amountIn - fee, false),
    v4.swapExactInSingle({ poolKey: key, zeroForOne: true, amountIn: amountIn - fee, amountOutMinimum: 0n }),
    v4.take(usdg, ROUTER_ADDRESS_THIS, 0n),
  ]);
  const steps: [number, Hex][] = [
    [Command.TRANSFER, inputs.transfer(zeroAddress, feeRecipient, fee)],
    [Command.V4_SWAP, swap],
    [Command.SWEEP, inputs.sweep(usdg, o.sweepTo ?? ROUTER_MSG_SENDER, o.minOut ?? (amountIn * 2_950n) / 10n ** 12n)],
  ];
  return encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [toHex(Uint8Array.from(steps.map((s) => s[0]))), steps.map((s) => s[1]), deadline],
  });
}
/** The co-signer's verdict on a call: null when it would sign, else its refusal. ETH at $3,000, USDG at $1. */
function verdict(call: Hex, o: { value?: bigint; counters?: Counters; b?: SessionBinding } = {}): Refusal | null {
  const b = o.b ?? binding();
  const reading = readRouterCall(router, o.value ?? 10n ** 16n, call, { router, wallet: b.wallet, feeRecipient, weth });
  const marks = { usdIn: 3_000, usdOut: 1, decimalsIn: 18, decimalsOut: 6 };
  return executionRefusal(
    checkExecution({
      binding: b,
      reading,
      marks,
      counters: o.counters ?? { tradesUsed: 0, last24hUsd: 0 },
      now,
      feeClassOf: () => "major",
      declaredFeeBps: 25,
    }),
  );
}
const codeOf = (r: Refusal | null) =>
  r
    ? `${r.code}:${(r.extra.signer_checks as { rule: string }[] | undefined)?.map((c) => c.rule).join(",") ?? ""}`
    : "signed";

describe("a trade the owner did not allow", () => {
  it("the honest $30 trade is signed", () => {
    expect(codeOf(verdict(routerCall()))).toBe("signed");
  });

  it("output sent to anyone but the wallet: SESSION_RECIPIENTS", () => {
    // The wallet is also left without its output (SESSION_EXECUTION): both are limits, the first names the code.
    expect(codeOf(verdict(routerCall({ sweepTo: thief })))).toBe(
      "SESSION_RECIPIENTS:SESSION_RECIPIENTS,SESSION_EXECUTION",
    );
  });

  it("over the per-trade limit: SESSION_MAX_TRADE ($60 against $50)", () => {
    expect(codeOf(verdict(routerCall({ amountIn: 2n * 10n ** 16n }), { value: 2n * 10n ** 16n }))).toBe(
      "SESSION_MAX_TRADE:SESSION_MAX_TRADE",
    );
  });

  it("over the 24 h limit across the wallet's sessions, past its trades: SESSION_MAX_DAY, SESSION_TRADES_LEFT", () => {
    expect(codeOf(verdict(routerCall(), { counters: { tradesUsed: 1, last24hUsd: 70 } }))).toBe("signed");
    expect(codeOf(verdict(routerCall(), { counters: { tradesUsed: 1, last24hUsd: 70.01 } }))).toBe(
      "SESSION_MAX_DAY:SESSION_MAX_DAY",
    );
    expect(codeOf(verdict(routerCall(), { counters: { tradesUsed: 3, last24hUsd: 0 } }))).toBe(
      "SESSION_TRADES_LEFT:SESSION_TRADES_LEFT",
    );
  });

  it("a limit broken together with another rule answers REFUSED listing both; an unpriceable trade REFUSED", () => {
    const r = verdict(routerCall({ amountIn: 2n * 10n ** 16n, minOut: 1n }), { value: 2n * 10n ** 16n });
    expect(codeOf(r)).toBe("REFUSED:PRICE,SESSION_MAX_TRADE");
    expect(r!.message).toMatch(/^the co-signer refused: PRICE \(.*\); SESSION_MAX_TRADE \(/);
    expect(codeOf(verdict(routerCall(), { b: binding({ tokens: [zeroAddress] }) }))).toBe(
      "SESSION_TOKENS:SESSION_TOKENS",
    );
    expect(codeOf(executionRefusal({ checks: [], notionalUsd: null }))).toBe("REFUSED:");
    expect(executionRefusal({ checks: [], notionalUsd: null })!.message).toBe("the co-signer refused: no price");
  });
});

describe("the held root's gates", () => {
  it("signs under no unknown or revoked root", () => {
    expect(codeOf(heldRefusal(undefined))).toBe("REFUSED:TRADE_REFUSED");
    expect(codeOf(heldRefusal({ revoked_at: "1900000000" }))).toBe("SESSION_REVOKED:");
    expect(heldRefusal({ revoked_at: null })).toBeNull();
  });

  it(
    "signs nothing when the stored limits were changed after the wallet signed (SESSION_BOUND), " +
      "nor once the session ended (SESSION_EXPIRED)",
    () => {
      const b = binding();
      const salt = bindingSalt(b).toString();
      expect(boundRefusal(b, salt, now)).toBeNull();
      expect(codeOf(boundRefusal({ ...b, limits: { ...b.limits, max_day_usd: 1_000_000 } }, salt, now))).toBe(
        "SESSION_BOUND:",
      );
      expect(codeOf(boundRefusal({ ...b, executor: thief }, salt, now))).toBe("SESSION_BOUND:");
      expect(codeOf(boundRefusal(b, salt, b.expires))).toBe("SESSION_EXPIRED:");
      expect(boundRefusal(b, salt, b.expires - 1)).toBeNull();
    },
  );

  it("signs no curve trade for a session without a curve root (SESSION_CURVE)", () => {
    expect(codeOf(curveRefusal(true, false))).toBe("SESSION_CURVE:");
    expect(curveRefusal(true, true)).toBeNull();
    expect(curveRefusal(false, false)).toBeNull();
  });

  it("signs nothing for a sanctioned wallet or executor (SANCTIONED names which)", () => {
    expect(sanctionedRefusal(binding(), [false, false])).toBeNull();
    expect(sanctionedRefusal(binding(), [true, false])!.extra).toEqual({
      address: getAddress(wallet),
      field: "wallet",
    });
    expect(sanctionedRefusal(binding(), [false, true])!.extra).toMatchObject({ field: "executor" });
    expect(sanctionedRefusal(binding(), [false, true])!.code).toBe("SANCTIONED");
  });
});

describe("what a signed trade carries", () => {
  it("a leaf never outlives the session, and runs by the chain's clock when it is ahead", () => {
    expect(leafExpiry(now, now, 120, now + 3_600)).toBe(now + 120);
    expect(leafExpiry(now, now + 30, 120, now + 3_600)).toBe(now + 150);
    expect(leafExpiry(now, now, 120, now + 60)).toBe(now + 60);
  });

  it("the spend counts this trade: used, left (never below 0), 24 h and what remains of it, in cents", () => {
    expect(spendAfter(binding(), 1, 40.004, 30.006)).toEqual({
      notional_usd: 30.01,
      trades_used: 2,
      trades_left: 1,
      last_24h_usd: 70.01,
      remaining_24h_usd: 29.99,
    });
    expect(spendAfter(binding(), 3, 99, 30)).toMatchObject({ trades_left: 0, remaining_24h_usd: 0 });
  });

  it(
    "prices a feedless side at whichever of the signed mark and its own read protects the wallet; " +
      "unreadable prices nothing",
    () => {
      const m = { usdIn: 1, usdOut: 1, decimalsIn: 18, decimalsOut: 18, chainTime: now };
      const mark = { usd: 2, decimals: 6, source: { kind: "curve" as const, launchpad: zeroAddress } };
      expect(signedSide(m, "in", mark, 2.5)).toEqual({ ...m, usdIn: 2.5, decimalsIn: 6, signedIn: true });
      expect(signedSide(m, "in", mark, 1.5)).toMatchObject({ usdIn: 2 });
      expect(signedSide(m, "out", mark, 2.5)).toEqual({ ...m, usdOut: 2, decimalsOut: 6, signedOut: true });
      expect(signedSide(m, "out", mark, 1.5)).toMatchObject({ usdOut: 1.5 });
      expect(signedSide(m, "out", mark, null)).toMatchObject({ usdOut: null });
    },
  );

  it("takes no oracle round that is not positive or is stale", () => {
    expect(roundUsdPrice({ stock: false }, 3_000n * 10n ** 8n, BigInt(now), now)).toBe(3_000);
    expect(roundUsdPrice({ stock: false }, 0n, BigInt(now), now)).toBeNull();
    expect(roundUsdPrice({ stock: false }, 3_000n * 10n ** 8n, BigInt(now - 90_000), now)).toBeNull();
  });
});
