import { describe, expect, it } from "vitest";
import { zeroAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createNativeBalanceChangeTerms, createValueLteTerms } from "@metamask/delegation-core";
import {
  curveRootCaveats,
  delegationTypedData,
  rootCaveats,
  ROOT_AUTHORITY,
  type Delegation,
} from "../lib/delegation.js";
import { bindingSalt, feeTermsOfSchedule2, type SessionBinding, type SignedMark } from "../lib/sessionBinding.js";
import { MIN_MARK_DEPTH_USD } from "../lib/markSource.js";
import {
  curveBoundProblems,
  curveRootCountProblems,
  feedlessLifeProblems,
  FEEDLESS_MAX_S,
  markProblems,
  rootRefusal,
  signedRootProblems,
  usableMark,
  type RootPins,
} from "./rootRules.js";
import { fakeEnforcers } from "../test/helpers/enforcers.js";

/**
 * Which roots the co-signer holds, rule by rule, without a store or a chain: each test signs a root
 * the wallet would not have agreed to (or one the co-signer must not trust) and shows it is refused.
 */
const enforcers = fakeEnforcers();
const cosigner = privateKeyToAccount(generatePrivateKey());
const wallet = privateKeyToAccount(generatePrivateKey());
const executor = privateKeyToAccount(generatePrivateKey()).address;
const thief = "0x0000000000000000000000000000000000000bad" as Address;
const x: RootPins = {
  cosigner: cosigner.address,
  pins: {
    chainId: 4663,
    delegationManager: "0x00000000000000000000000000000000000000d0",
    enforcers,
    router: "0x00000000000000000000000000000000000000aa",
    permit2: "0x00000000000000000000000000000000000000d4",
    launchpad: "0x00000000000000000000000000000000000000d3",
    feeRecipient: "0x00000000000000000000000000000000000000cc",
  },
};
const now = 1_900_000_000;
const binding = (over: Partial<SessionBinding> = {}): SessionBinding => ({
  version: 3,
  chain_id: 4663,
  wallet: wallet.address,
  executor,
  cosigner: cosigner.address,
  tokens: [zeroAddress],
  limits: { max_trade_usd: 25, max_day_usd: 100, max_trades: 5 },
  expires: now + 3_600,
  setup_budget_usd: 100,
  fee: feeTermsOfSchedule2(),
  risk_terms: { accept_risks: [], shield: false, policies: [] },
  ...over,
});

type RootOver = {
  redeemer?: Address;
  expires?: number;
  salt?: bigint;
  signer?: typeof wallet;
  delegate?: Address;
  router?: Address;
  maxCalls?: number;
  without?: string;
};
/** A session root as the wallet signs it for `b`, with one thing changed. */
async function signedRoot(b: SessionBinding, over: RootOver = {}): Promise<Delegation> {
  const caveats = rootCaveats(
    {
      router: over.router ?? x.pins.router,
      permit2: x.pins.permit2,
      executor: over.redeemer ?? b.executor,
      expires: over.expires ?? b.expires,
      maxValueWei: 1n,
      dayValueWei: 1n,
      dayStart: now,
      maxCalls: over.maxCalls ?? 5,
      walletNonce: 0n,
    },
    enforcers,
  ).filter((c) => c.enforcer.toLowerCase() !== (over.without && enforcers[over.without]!.toLowerCase()));
  const unsigned = {
    delegate: over.delegate ?? cosigner.address,
    delegator: wallet.address,
    authority: ROOT_AUTHORITY as `0x${string}`,
    caveats,
    salt: over.salt ?? bindingSalt(b),
  };
  return {
    ...unsigned,
    signature: await (over.signer ?? wallet).signTypedData(
      delegationTypedData(4663, x.pins.delegationManager, unsigned),
    ),
  };
}
const rulesOf = async (b: SessionBinding, over: RootOver = {}, bound = b) =>
  (await signedRootProblems(x, await signedRoot(b, over), bound, "session")).map((c) => c.rule);

describe("the roots the co-signer holds", () => {
  it("holds the root the wallet signed for this binding, this co-signer and this executor", async () => {
    expect(await rulesOf(binding())).toEqual([]);
  });

  it("refuses a root another executor may redeem (BINDING_TERMS)", async () => {
    expect(await rulesOf(binding(), { redeemer: thief })).toEqual(["BINDING_TERMS"]);
  });

  it("refuses limits raised after the wallet signed: the salt hashes another binding (ROOT_BINDS_LIMITS)", async () => {
    const signed = binding();
    expect(await rulesOf(signed, {}, { ...signed, limits: { ...signed.limits, max_trade_usd: 10_000 } })).toEqual([
      "ROOT_BINDS_LIMITS",
    ]);
    expect(await rulesOf(signed, { salt: 1n })).toEqual(["ROOT_BINDS_LIMITS"]);
  });

  it(
    "refuses a root delegated to another co-signer, another chain, a root outliving the binding, " +
      "a signature not the wallet's",
    async () => {
      expect(await rulesOf(binding(), { delegate: thief })).toEqual(["BINDING_TERMS"]);
      const elsewhere = binding({ chain_id: 1 });
      expect(await rulesOf(elsewhere)).toEqual(["BINDING_TERMS"]);
      expect(await rulesOf(binding(), { expires: now + 3_601 })).toEqual(["BINDING_TERMS"]);
      expect(await rulesOf(binding(), { signer: privateKeyToAccount(generatePrivateKey()) })).toEqual([
        "BINDING_TERMS",
      ]);
    },
  );

  it("refuses targets it does not pin, more calls than the session needs, no nonce bound or ETH day cap", async () => {
    expect(await rulesOf(binding(), { router: thief })).toEqual(["BINDING_TERMS"]);
    // max_trades 5 plus one approval per token: 6 calls at most.
    expect(await rulesOf(binding(), { maxCalls: 6 })).toEqual([]);
    expect(await rulesOf(binding(), { maxCalls: 7 })).toEqual(["BINDING_TERMS"]);
    expect(await rulesOf(binding(), { without: "NonceEnforcer" })).toEqual(["BINDING_NONCE"]);
    expect(await rulesOf(binding(), { without: "NativeTokenPeriodTransferEnforcer" })).toEqual(["ROOT_DAY_CAP"]);
    expect(await rulesOf(binding(), { without: "RedeemerEnforcer" })).toEqual(["BINDING_TERMS", "BINDING_TERMS"]);
  });

  it(
    "a curve root must carry no ETH on its call and bound the wallet's own ETH decrease; " +
      "one exactly when the binding lists curve tokens",
    () => {
      const b = binding({ curve_tokens: ["0x00000000000000000000000000000000000000f1"] });
      const honest = curveRootCaveats(
        {
          executor,
          expires: b.expires,
          maxValueWei: 10n ** 17n,
          dayValueWei: null,
          dayStart: 0,
          maxCalls: 5,
          walletNonce: 0n,
          launchpad: x.pins.launchpad,
          feeRecipient: x.pins.feeRecipient,
          wallet: wallet.address,
          tokens: ["0x00000000000000000000000000000000000000f1"],
        },
        enforcers,
      ).slice(1);
      expect(curveBoundProblems(enforcers, honest, b)).toEqual([]);
      const swapped = (name: string, terms: `0x${string}`) =>
        honest.map((c) => (c.enforcer.toLowerCase() === enforcers[name]!.toLowerCase() ? { ...c, terms } : c));
      expect(
        curveBoundProblems(enforcers, swapped("ValueLteEnforcer", createValueLteTerms({ maxValue: 1n })), b).map(
          (c) => c.rule,
        ),
      ).toEqual(["BINDING_TERMS"]);
      expect(
        curveBoundProblems(
          enforcers,
          swapped(
            "NativeBalanceChangeEnforcer",
            createNativeBalanceChangeTerms({ recipient: thief, balance: 10n ** 17n, changeType: 1 }),
          ),
          b,
        ).map((c) => c.rule),
      ).toEqual(["BINDING_TERMS"]);
      expect(
        curveBoundProblems(
          enforcers,
          swapped(
            "NativeBalanceChangeEnforcer",
            createNativeBalanceChangeTerms({ recipient: wallet.address, balance: 10n ** 17n, changeType: 0 }),
          ),
          b,
        ).map((c) => c.rule),
      ).toEqual(["BINDING_TERMS"]);
      const root = { sessionId: "s", binding: b, root: {} as Delegation };
      expect(curveRootCountProblems(root).map((c) => c.rule)).toEqual(["BINDING_TERMS"]);
      expect(curveRootCountProblems({ ...root, curveRoots: [{} as Delegation] })).toEqual([]);
      expect(
        curveRootCountProblems({ ...root, binding: binding(), curveRoots: [{} as Delegation] }).map((c) => c.rule),
      ).toEqual(["BINDING_TERMS"]);
    },
  );
});

describe("a feedless token's owner-signed mark", () => {
  const mark: SignedMark = { usd: 2, decimals: 18, source: { kind: "curve", launchpad: x.pins.launchpad } };
  const own = { usd: 2, stableShare: 1, spotUsd: 2, depthUsd: MIN_MARK_DEPTH_USD };
  const rules = (o: typeof own | null, m = mark) => markProblems("0xf1", m, o, zeroAddress).map((c) => c.rule);

  it("holds a session with a feedless token for 24 hours at most (NO_FEED_SESSION)", () => {
    expect(feedlessLifeProblems(binding({ expires: now + FEEDLESS_MAX_S }), now)).toEqual([]);
    expect(feedlessLifeProblems(binding({ expires: now + FEEDLESS_MAX_S + 1 }), now).map((c) => c.rule)).toEqual([
      "NO_FEED_SESSION",
    ]);
  });

  it("takes no mark without a positive price and sane decimals", () => {
    const b = (m: unknown) => binding({ marks: { "0xf1": m as SignedMark } });
    expect(usableMark(b(mark), "0xf1")).toEqual(mark);
    expect(usableMark(binding(), "0xf1")).toBeNull();
    expect(usableMark(b({ ...mark, usd: 0 }), "0xf1")).toBeNull();
    expect(usableMark(b({ ...mark, usd: Number.NaN }), "0xf1")).toBeNull();
    expect(usableMark(b({ ...mark, decimals: 37 }), "0xf1")).toBeNull();
    expect(usableMark(b({ ...mark, decimals: 1.5 }), "0xf1")).toBeNull();
  });

  it("refuses a mark it cannot reread, one off its own median, an unsettled source, a shallow one (CAP_PRICE)", () => {
    expect(rules(own)).toEqual([]);
    expect(rules(null)).toEqual(["CAP_PRICE"]);
    // The owner signs $2.10 where the co-signer reads $2: 500 bps off, over the curve's 125 bps band.
    expect(rules(own, { ...mark, usd: 2.1 })).toEqual(["CAP_PRICE"]);
    expect(rules({ ...own, stableShare: 0.5 })).toEqual(["CAP_PRICE"]);
    expect(rules({ ...own, spotUsd: 2.1 })).toEqual(["CAP_PRICE"]);
    expect(rules({ ...own, depthUsd: MIN_MARK_DEPTH_USD - 1 })).toEqual(["CAP_PRICE"]);
  });
});

describe("the refusal of a root", () => {
  it("is none without a problem, else REFUSED listing every problem", () => {
    expect(rootRefusal([])).toBeNull();
    const r = rootRefusal([
      { rule: "BINDING_TERMS", ok: false, message: "a" },
      { rule: "ROOT_BINDS_LIMITS", ok: false, message: "b" },
    ])!;
    expect([r.code, r.message]).toEqual(["REFUSED", "the co-signer will not hold this root: a; b"]);
    expect((r.extra.signer_checks as { rule: string }[]).map((c) => c.rule)).toEqual([
      "BINDING_TERMS",
      "ROOT_BINDS_LIMITS",
    ]);
  });
});
