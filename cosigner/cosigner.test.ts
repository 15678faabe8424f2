import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosignerDecisions } from "../lib/metrics.js";
import { openMigratedMemory } from "../api/ports/store/memory.js";
import {
  createPublicClient,
  custom,
  defineChain,
  encodeFunctionData,
  http,
  parseAbi,
  type Address,
  zeroAddress,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Db } from "../api/ports/store/db.js";
import { migrate } from "../api/ports/store/migrations.js";
import type { Refusal } from "../api/errors/index.js";
import {
  delegationHash,
  delegationTypedData,
  rootCaveats,
  ROOT_AUTHORITY,
  type Delegation,
} from "../lib/delegation.js";
import { bindingSalt, feeTermsOfSchedule2, type SessionBinding } from "../lib/sessionBinding.js";
import { createCosigner, feeClassOf, type CosignerPins } from "./cosigner.js";
import { beaconOf } from "../lib/eip1967.js";
import { startDevnet, type Devnet } from "../test/helpers/devnet.js";
import { fakeEnforcers } from "../test/helpers/enforcers.js";
import { fixtureBytecode } from "../devnet/artifacts.js";
import { stockTokenAbi } from "../abis/fixtures.js";
import { cosignerFromEnv } from "./index.js";
import { loadConfig } from "../lib/config.js";

/**
 * The co-signer's own gate, without a chain: which roots it agrees to hold, and that a frozen or
 * revoked co-signer signs nothing. (Trades against the chain: test/e2e/session*.test.ts.)
 */
const enforcers = fakeEnforcers();
const pins: CosignerPins = {
  chainId: 4663,
  delegationManager: "0x00000000000000000000000000000000000000d0",
  multicall3: "0x00000000000000000000000000000000000000d1",
  enforcers,
  router: "0x00000000000000000000000000000000000000aa",
  weth: "0x00000000000000000000000000000000000000dd",
  feeRecipient: "0x00000000000000000000000000000000000000cc",
  permit2: "0x00000000000000000000000000000000000000d4",
  stateView: "0x00000000000000000000000000000000000000d2",
  poolManager: "0x00000000000000000000000000000000000000d6",
  launchpad: "0x00000000000000000000000000000000000000d3",
  stockBeacon: "0x00000000000000000000000000000000000000d7",
  sanctionsList: "0x00000000000000000000000000000000000000d8",
  tokens: [
    {
      address: zeroAddress,
      decimals: 18,
      feed: "0x00000000000000000000000000000000000000d5",
      stock: false,
      major: true,
    },
  ],
};
const now = 1_900_000_000;
const key = privateKeyToAccount(generatePrivateKey());
const wallet = privateKeyToAccount(generatePrivateKey());
const executor = privateKeyToAccount(generatePrivateKey()).address;
// No chain is reached by these tests: a closed port would fail loudly if one were.
const chain = createPublicClient({ transport: http("http://127.0.0.1:9", { retryCount: 0 }) });
let db: Db;
beforeAll(async () => {
  db = await openMigratedMemory();
  await migrate(db);
});
afterAll(() => db?.close());

const binding = (over: Partial<SessionBinding> = {}): SessionBinding => ({
  version: 3,
  chain_id: 4663,
  wallet: wallet.address,
  executor,
  cosigner: key.address,
  tokens: [zeroAddress],
  limits: { max_trade_usd: 25, max_day_usd: 100, max_trades: 5 },
  expires: now + 3_600,
  setup_budget_usd: 100,
  fee: feeTermsOfSchedule2(),
  risk_terms: { accept_risks: [], shield: false, policies: [] },
  ...over,
});
async function signedRoot(
  b: SessionBinding,
  over: {
    redeemer?: Address;
    expires?: number;
    salt?: bigint;
    signer?: typeof wallet;
    router?: Address;
    maxCalls?: number;
    without?: string;
  } = {},
): Promise<Delegation> {
  const caveats = rootCaveats(
    {
      router: over.router ?? pins.router,
      permit2: pins.permit2,
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
    delegate: key.address,
    delegator: wallet.address,
    authority: ROOT_AUTHORITY as `0x${string}`,
    caveats,
    salt: over.salt ?? bindingSalt(b),
  };
  return {
    ...unsigned,
    signature: await (over.signer ?? wallet).signTypedData(delegationTypedData(4663, pins.delegationManager, unsigned)),
  };
}
const rulesOf = (p: Promise<unknown>) =>
  p.then(
    () => "held",
    (e: Refusal) =>
      `${e.code}:${(e.extra.signer_checks as { rule: string }[] | undefined)?.map((c) => c.rule).join(",") ?? ""}`,
  );

describe("the co-signer's roots", () => {
  const cosigner = () => createCosigner({ account: key, db, chain, pins, clock: () => now * 1000 });

  it("holds a root signed by the wallet, salted with the binding, redeemable by the executor alone; once", async () => {
    const b = binding();
    const root = await signedRoot(b);
    expect(await rulesOf(cosigner().register({ sessionId: "s1", root, binding: b }))).toBe("held");
    expect(await rulesOf(cosigner().register({ sessionId: "s1", root, binding: b }))).toBe("REFUSED:ROOT_REUSED");
  });

  it("refuses a salt that is not the binding's hash, another redeemer, a later expiry, another signer", async () => {
    const b = binding({ expires: now + 7_200 });
    expect(
      await rulesOf(cosigner().register({ sessionId: "s2", root: await signedRoot(b, { salt: 1n }), binding: b })),
    ).toBe("REFUSED:ROOT_BINDS_LIMITS");
    expect(
      await rulesOf(
        cosigner().register({ sessionId: "s2", root: await signedRoot(b, { redeemer: key.address }), binding: b }),
      ),
    ).toBe("REFUSED:BINDING_TERMS");
    expect(
      await rulesOf(
        cosigner().register({ sessionId: "s2", root: await signedRoot(b, { expires: b.expires + 1 }), binding: b }),
      ),
    ).toBe("REFUSED:BINDING_TERMS");
    expect(
      await rulesOf(
        cosigner().register({
          sessionId: "s2",
          root: await signedRoot(b, { signer: privateKeyToAccount(generatePrivateKey()) }),
          binding: b,
        }),
      ),
    ).toBe("REFUSED:BINDING_TERMS");
    // The groups and bounds as the co-signer would build them: another router, or more calls than
    // the session needs, are not held.
    expect(
      await rulesOf(
        cosigner().register({ sessionId: "s2", root: await signedRoot(b, { router: executor }), binding: b }),
      ),
    ).toBe("REFUSED:BINDING_TERMS");
    expect(
      await rulesOf(cosigner().register({ sessionId: "s2", root: await signedRoot(b, { maxCalls: 7 }), binding: b })),
    ).toBe("REFUSED:BINDING_TERMS");
  });

  it("names the missing wallet nonce bound and ETH day cap as SPEC does (BINDING_NONCE, ROOT_DAY_CAP)", async () => {
    const b = binding({ expires: now + 7_100 });
    expect(
      await rulesOf(
        cosigner().register({ sessionId: "s6", root: await signedRoot(b, { without: "NonceEnforcer" }), binding: b }),
      ),
    ).toBe("REFUSED:BINDING_NONCE");
    expect(
      await rulesOf(
        cosigner().register({
          sessionId: "s6",
          root: await signedRoot(b, { without: "NativeTokenPeriodTransferEnforcer" }),
          binding: b,
        }),
      ),
    ).toBe("REFUSED:ROOT_DAY_CAP");
  });

  it(
    "a feedless token needs an owner-signed mark it can read again (CAP_PRICE when it cannot), " +
      "and a session of at most 24 hours (NO_FEED_SESSION)",
    async () => {
      const feedless = "0x00000000000000000000000000000000000000f1";
      const mark = {
        usd: 2,
        decimals: 18,
        source: { kind: "curve" as const, launchpad: pins.launchpad.toLowerCase() },
      };
      const long = binding({ tokens: [zeroAddress, feedless], marks: { [feedless]: mark }, expires: now + 86_401 });
      // The chain is unreachable here: the co-signer cannot read the curve, so the mark is not held either.
      expect(await rulesOf(cosigner().register({ sessionId: "s5", root: await signedRoot(long), binding: long }))).toBe(
        "REFUSED:NO_FEED_SESSION,CAP_PRICE",
      );
      const unmarked = binding({ tokens: [zeroAddress, feedless] });
      expect(
        await rulesOf(cosigner().register({ sessionId: "s5", root: await signedRoot(unmarked), binding: unmarked })),
      ).toBe("REFUSED:BINDING_TERMS");
    },
  );

  it("signs nothing frozen, for an unknown root, or after revoke", async () => {
    const decisionsBefore: Record<string, number> = {};
    for (const v of (await cosignerDecisions.get()).values) decisionsBefore[String(v.labels.rule)] = v.value;
    for (const rule of ["SIGNER_FROZEN", "TRADE_REFUSED", "SESSION_REVOKED"]) decisionsBefore[rule] ??= 0;
    const b = binding({ expires: now + 1_800 });
    const root = await signedRoot(b);
    const c = cosigner();
    await c.register({ sessionId: "s3", root, binding: b });
    const req = {
      delegationHash: delegationHash(root),
      execution: { target: pins.router, value: 0n, callData: "0x" as const },
      declared: { feeBps: 25 },
    };
    expect(
      await rulesOf(
        createCosigner({ account: key, db, chain, pins, clock: () => now * 1000, frozen: true }).cosign(req),
      ),
    ).toBe("SIGNER_FROZEN:");
    expect(await rulesOf(c.cosign({ ...req, delegationHash: `0x${"11".repeat(32)}` }))).toBe("REFUSED:TRADE_REFUSED");
    await c.revoke(delegationHash(root));
    expect(await rulesOf(c.cosign(req))).toBe("SESSION_REVOKED:");
    // Each decision counted by the rule that made it (pit_cosigner_decisions_total): the failed check a REFUSED
    // names, else the refusal's code.
    const refusedBy = async (rule: string) =>
      (await cosignerDecisions.get()).values.find((v) => v.labels.decision === "refused" && v.labels.rule === rule)
        ?.value ?? 0;
    for (const rule of ["SIGNER_FROZEN", "TRADE_REFUSED", "SESSION_REVOKED"])
      expect(await refusedBy(rule), rule).toBe(decisionsBefore[rule]! + 1);
  });
});

describe("the co-signer under load", () => {
  it("answers BUSY past its co-signings in hand", async () => {
    const b = binding({ expires: now + 1_700 });
    const root = await signedRoot(b);
    // A chain that never answers: the first co-signing waits on its marks.
    const hanging = createPublicClient({
      chain: defineChain({
        id: 4663,
        name: "hang",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: ["http://127.0.0.1:9"] } },
        contracts: { multicall3: { address: pins.multicall3 } },
      }),
      transport: custom({ request: () => new Promise(() => {}) }),
    });
    const c = createCosigner({ account: key, db, chain: hanging, pins, clock: () => now * 1000, maxInFlight: 1 });
    await c.register({ sessionId: "s4", root, binding: b });
    const req = {
      delegationHash: delegationHash(root),
      execution: { target: pins.router, value: 0n, callData: "0x" as const },
      declared: { feeBps: 25 },
    };
    void c.cosign(req).catch(() => {});
    await new Promise((r) => setTimeout(r, 50));
    expect(await rulesOf(c.cosign(req))).toBe("BUSY:");
  });
});

describe("the co-signer's key", () => {
  const config = loadConfig({ ANVIL_PORT: "8545", PORT: "3000" });
  it(
    "comes from COSIGNER_KEY, else the devnet's account 2; " +
      "a malformed key or one that is not the published co-signer fails at start",
    () => {
      expect(cosignerFromEnv({ config, db, chain: chain as never, clock: Date.now, env: {} })!.address).toBe(
        config.cosigner,
      );
      expect(() =>
        cosignerFromEnv({ config, db, chain: chain as never, clock: Date.now, env: { COSIGNER_KEY: "0x1234" } }),
      ).toThrow(/COSIGNER_KEY/);
      expect(() =>
        cosignerFromEnv({
          config,
          db,
          chain: chain as never,
          clock: Date.now,
          env: { COSIGNER_KEY: generatePrivateKey() },
        }),
      ).toThrow(/COSIGNER_KEY: signs as .* but the service publishes co-signer/);
      expect(
        cosignerFromEnv({
          config: { ...config, devnet: false, cosigner: null },
          db,
          chain: chain as never,
          clock: Date.now,
          env: {},
        }),
      ).toBeNull();
    },
  );
});

describe("the co-signer's fee class of a token named by address", () => {
  let dn: Devnet;
  beforeAll(async () => {
    dn = await startDevnet();
  });
  afterAll(() => dn?.stop());

  it(
    "is major behind the stock issuer's beacon, as the API bills it (stock_beacon), " +
      "and other for any other bound token",
    async () => {
      const deployer = dn.walletFor(dn.deployer);
      const c = dn.universe.contracts;
      const init = encodeFunctionData({
        abi: stockTokenAbi,
        functionName: "initialize",
        args: ["Listed Later Inc. (tokenised)", "LATR", c.stockRegistry],
      });
      const stock = (
        await dn.mined(
          await deployer.deployContract({
            abi: parseAbi(["constructor(address, bytes)"]),
            bytecode: fixtureBytecode("Stocks", "BeaconProxy"),
            args: [c.stockBeacon, init],
          }),
        )
      ).contractAddress!;
      const plain = (
        await dn.mined(
          await deployer.deployContract({
            abi: parseAbi(["constructor(string, string, uint8)"]),
            bytecode: fixtureBytecode("TestToken", "TestToken"),
            args: ["Plain", "PLN", 18],
          }),
        )
      ).contractAddress!;
      const live = { ...pins, stockBeacon: c.stockBeacon };
      const b = binding({ tokens: [zeroAddress, stock.toLowerCase() as Address, plain.toLowerCase() as Address] });
      const beacon = (t: Address) => beaconOf(dn.pub, t);
      expect(await feeClassOf(live, beacon, stock, b)).toBe("major");
      expect(await feeClassOf(live, beacon, plain, b)).toBe("other");
      expect(await feeClassOf(live, beacon, zeroAddress, b)).toBe("major");
      // Outside the binding, or a beacon that cannot be read: no class (FEE_CLASS).
      expect(await feeClassOf(live, beacon, stock, binding())).toBe(null);
      expect(await feeClassOf(live, async () => Promise.reject(new Error("down")), stock, b)).toBe(null);
    },
  );
});
