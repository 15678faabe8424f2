/**
 * Deploys the chain-4663 contract set onto a fresh anvil and writes devnet/universe.json.
 * Real contracts come from their npm packages' bytecode; our fixtures from contracts/out.
 * Run directly (`npm run devnet:deploy`) it also builds the fixtures and snapshots the chain.
 */
import "../lib/noTelemetry.js";
import {
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  http,
  maxUint160,
  maxUint256,
  parseAbi,
  parseEther,
  parseUnits,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Account,
  type Chain,
} from "viem";
import { devnetAccount } from "../lib/devnetAccount.js";
import { erc20Abi, mintableAbi } from "../abis/erc20.js";
import { poolManagerAbi, positionManagerAbi, V4Action, poolKeyParam } from "../abis/uniswapV4.js";
import { universalRouterAbi } from "../abis/universalRouter.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../abis/permit2.js";
import { MULTICALL3_ADDRESS } from "../abis/multicall3.js";
import {
  launchpadAbi,
  partnerAgentVaultAbi,
  proxyTokenAbi,
  sanctionsListAbi,
  stockTokenAbi,
} from "../abis/fixtures.js";
import { fixtureBytecode, realBytecode } from "./artifacts.js";
import { CHAIN_ID } from "./anvil.js";
import {
  fullRangeLiquidity,
  fullRangeTicks,
  poolId,
  sortCurrencies,
  sqrtPriceX96FromAmounts,
  type PoolKey,
} from "../lib/v4.js";
import type { Universe } from "../lib/universe.js";
import { chain4663, publicClient } from "../lib/chain.js";
import { CONTRACTS_4663, FEEDS_4663, STOCK_IMPLEMENTATION_4663, TOKENS_4663 } from "../lib/addressBook.js";
import { placeAt, placeDelegationFramework } from "./place.js";

/** Roles of anvil's ten accounts on the devnet. */
export const ACCOUNT_ROLES = {
  deployer: 0, // deploys everything; issuer of the stock tokens; owner of the fixtures
  platform: 1, // platform fee recipient (the treasury's platform wallet)
  cosigner: 2,
  operations: 3,
  traderA: 5,
  traderB: 6,
  partnerOwner: 7,
  partnerAgentWallet: 8,
  sanctioned: 9,
} as const;

export const devnetChain = (rpcUrl: string): Chain =>
  chain4663({ chainId: CHAIN_ID, rpcUrl, contracts: { multicall3: MULTICALL3_ADDRESS } });

/** Symbols standing for SPEC.md's <BTC_ASSET>, <PARTNER_TOKEN>, <STOCK_A>, <STOCK_B>. */
export const CORE = { btc: "WBTC", partner: "ORBIO", stockA: "TSLA", stockB: "NVDA" } as const;

/** Seeded prices in USD and pool depth per side in USD. */
const PRICES = { ETH: 3_000, [CORE.btc]: 60_000, [CORE.partner]: 0.5, [CORE.stockA]: 250, [CORE.stockB]: 130 } as const;
const DEPTH_USD = {
  ETH: 3_000_000,
  [CORE.btc]: 2_000_000,
  [CORE.partner]: 500_000,
  [CORE.stockA]: 1_000_000,
  [CORE.stockB]: 1_000_000,
} as const;

export type Ctx = { wallet: WalletClient; pub: PublicClient; account: Account; chain: Chain };

async function deploy(ctx: Ctx, abi: Abi, bytecode: Hex, args: readonly unknown[] = []): Promise<Address> {
  const hash = await ctx.wallet.deployContract({ abi, bytecode, args, account: ctx.account, chain: ctx.chain });
  const receipt = await ctx.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deploy failed (${hash})`);
  return getAddress(receipt.contractAddress);
}

async function send(ctx: Ctx, to: Address, data: Hex, value = 0n, from: Account = ctx.account): Promise<void> {
  const hash = await ctx.wallet.sendTransaction({ to, data, value, account: from, chain: ctx.chain });
  const receipt = await ctx.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction to ${to} reverted (${hash})`);
}

const fixtureAbi = parseAbi(["constructor(string, string, uint8)"]);

/**
 * Adds a full-range position through the real PositionManager (MINT_POSITION + SETTLE_PAIR, and
 * SWEEP of unused ETH for native pools), paying with the caller's Permit2 allowance.
 */
export async function mintFullRange(
  ctx: Ctx,
  positionManager: Address,
  key: PoolKey,
  sqrtPriceX96: bigint,
  amount0: bigint,
  amount1: bigint,
): Promise<void> {
  // 1% headroom under the amounts so rounding never asks for more than we allow.
  const liquidity = (fullRangeLiquidity(sqrtPriceX96, key.tickSpacing, amount0, amount1) * 99n) / 100n;
  const [tickLower, tickUpper] = fullRangeTicks(key.tickSpacing);
  await mintPosition(ctx, positionManager, key, [tickLower, tickUpper], liquidity, amount0, amount1);
}

/** A new pool of `key` at `sqrtPriceX96` (PoolManager.initialize) with a full-range position of at most amount0/1. */
export async function openFullRangePool(
  ctx: Ctx,
  c: { poolManager: Address; positionManager: Address },
  key: PoolKey,
  sqrtPriceX96: bigint,
  amount0: bigint,
  amount1: bigint,
): Promise<void> {
  await send(
    ctx,
    c.poolManager,
    encodeFunctionData({ abi: poolManagerAbi, functionName: "initialize", args: [key, sqrtPriceX96] }),
  );
  await mintFullRange(ctx, c.positionManager, key, sqrtPriceX96, amount0, amount1);
}

/** `token` spendable by the PositionManager through Permit2 (it settles through Permit2), without limit. */
export async function approveForPositions(ctx: Ctx, token: Address, positionManager: Address) {
  await send(
    ctx,
    token,
    encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [PERMIT2_ADDRESS, maxUint256] }),
  );
  await send(
    ctx,
    PERMIT2_ADDRESS,
    encodeFunctionData({
      abi: permit2Abi,
      functionName: "approve",
      args: [token, positionManager, maxUint160, 2 ** 48 - 1],
    }),
  );
}

/** A position of `liquidity` over [lower, upper) through the real PositionManager, paying at most amount0/amount1. */
export async function mintPosition(
  ctx: Ctx,
  positionManager: Address,
  key: PoolKey,
  [tickLower, tickUpper]: [number, number],
  liquidity: bigint,
  amount0: bigint,
  amount1: bigint,
): Promise<void> {
  const native = key.currency0 === zeroAddress;
  const actions: number[] = [V4Action.MINT_POSITION, V4Action.SETTLE_PAIR];
  const params: Hex[] = [
    encodeAbiParameters(
      [
        poolKeyParam,
        { type: "int24" },
        { type: "int24" },
        { type: "uint256" },
        { type: "uint128" },
        { type: "uint128" },
        { type: "address" },
        { type: "bytes" },
      ],
      [key, tickLower, tickUpper, liquidity, amount0, amount1, ctx.account.address, "0x"],
    ),
    encodeAbiParameters([{ type: "address" }, { type: "address" }], [key.currency0, key.currency1]),
  ];
  if (native) {
    actions.push(V4Action.SWEEP);
    params.push(encodeAbiParameters([{ type: "address" }, { type: "address" }], [zeroAddress, ctx.account.address]));
  }
  const unlockData = encodeAbiParameters(
    [{ type: "bytes" }, { type: "bytes[]" }],
    [`0x${actions.map((a) => a.toString(16).padStart(2, "0")).join("")}`, params],
  );
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 365 * 86400);
  await send(
    ctx,
    positionManager,
    encodeFunctionData({ abi: positionManagerAbi, functionName: "modifyLiquidities", args: [unlockData, deadline] }),
    native ? amount0 : 0n,
  );
}

export async function deployUniverse(rpcUrl: string): Promise<Universe> {
  const started = Date.now();
  const chain = devnetChain(rpcUrl);
  const account = devnetAccount(ACCOUNT_ROLES.deployer);
  const transport = http(rpcUrl);
  const pub = publicClient({ chain, transport, pollingInterval: 20, cacheTime: 0 });
  const wallet = createWalletClient({ chain, transport, account });
  const ctx: Ctx = { wallet, pub, account, chain };
  const real = realBytecode();
  const accounts = Object.fromEntries(
    Object.entries(ACCOUNT_ROLES).map(([role, i]) => [role, devnetAccount(i).address]),
  ) as Record<keyof typeof ACCOUNT_ROLES, Address>;
  const rpc = (method: string, params: unknown[]) => pub.request({ method: method as never, params: params as never });
  const startBlock = Number(await pub.getBlockNumber()) + 1;

  // Canonical-address contracts, placed as runtime code.
  await rpc("anvil_setCode", [PERMIT2_ADDRESS, real.permit2Runtime]);
  await rpc("anvil_setCode", [MULTICALL3_ADDRESS, real.multicall3Runtime]);

  // Shared contracts sit at chain 4663's addresses (lib/addressBook.ts, devnet/place.ts); fixtures of
  // our own with no counterpart there (WBTC, the partner token, hostile tokens, the sanctions list, the
  // launchpad, the partner vault, the stock registry) keep devnet addresses.
  const book = CONTRACTS_4663;
  // Fixture tokens first: the routers need WETH9.
  const weth9 = await placeAt(ctx, book.weth9, parseAbi(["constructor()"]), fixtureBytecode("WETH9", "WETH9"));
  const token = (name: string, symbol: string, decimals: number) =>
    deploy(ctx, fixtureAbi, fixtureBytecode("TestToken", "TestToken"), [name, symbol, decimals]);
  const usdg = await placeAt(ctx, TOKENS_4663.USDG, fixtureAbi, fixtureBytecode("TestToken", "TestToken"), [
    "Global Dollar",
    "USDG",
    6,
  ]);
  const btc = await token("Wrapped BTC", CORE.btc, 8);
  const partner = await token("Orbio", CORE.partner, 18);

  // Uniswap v4 + Universal Router from npm bytecode.
  const poolManager = await placeAt(ctx, book.poolManager, poolManagerAbi, real.poolManager, [account.address]);
  const positionManager = await placeAt(ctx, book.positionManager, positionManagerAbi, real.positionManager, [
    poolManager,
    PERMIT2_ADDRESS,
    300_000n,
    zeroAddress,
    weth9,
  ]);
  const byPoolManager = parseAbi(["constructor(address)"]);
  const v4Quoter = await placeAt(ctx, book.v4Quoter, byPoolManager, real.v4Quoter, [poolManager]);
  const stateView = await placeAt(ctx, book.stateView, byPoolManager, real.stateView, [poolManager]);
  const zero32 = `0x${"00".repeat(32)}` as Hex;
  const universalRouter = await placeAt(ctx, book.universalRouter, universalRouterAbi, real.universalRouter, [
    {
      permit2: PERMIT2_ADDRESS,
      weth9,
      v2Factory: zeroAddress,
      v3Factory: zeroAddress,
      pairInitCodeHash: zero32,
      poolInitCodeHash: zero32,
      v4PoolManager: poolManager,
      v3NFTPositionManager: zeroAddress,
      v4PositionManager: positionManager,
      spokePool: zeroAddress,
    },
  ]);

  // MetaMask Delegation Framework (DelegationManager, deleGators, caveat enforcers).
  const delegation = await placeDelegationFramework(ctx, (abi, code) => deploy(ctx, abi, code));

  // Stock tokens behind one issuer beacon.
  const stockRegistry = await deploy(ctx, parseAbi(["constructor()"]), fixtureBytecode("Stocks", "StockRegistry"));
  const stockImpl = await placeAt(
    ctx,
    STOCK_IMPLEMENTATION_4663,
    parseAbi(["constructor()"]),
    fixtureBytecode("Stocks", "StockToken"),
  );
  const stockBeacon = await placeAt(
    ctx,
    book.stockBeacon,
    parseAbi(["constructor(address)"]),
    fixtureBytecode("Stocks", "UpgradeableBeacon"),
    [stockImpl],
  );
  const stock = (at: Address, name: string, symbol: string) =>
    placeAt(ctx, at, parseAbi(["constructor(address, bytes)"]), fixtureBytecode("Stocks", "BeaconProxy"), [
      stockBeacon,
      encodeFunctionData({ abi: stockTokenAbi, functionName: "initialize", args: [name, symbol, stockRegistry] }),
    ]);
  const stockA = await stock(TOKENS_4663[CORE.stockA], "Tesla Inc. (tokenised)", CORE.stockA);
  const stockB = await stock(TOKENS_4663[CORE.stockB], "NVIDIA Corp. (tokenised)", CORE.stockB);

  // Price feeds, 8 decimals like Chainlink's USD feeds.
  const feed = (at: Address, desc: string, usd: number) =>
    placeAt(ctx, at, parseAbi(["constructor(uint8, string, int256)"]), fixtureBytecode("PriceFeed", "PriceFeed"), [
      8,
      desc,
      BigInt(Math.round(usd * 1e8)),
    ]);
  const feeds = {
    ETH: await feed(FEEDS_4663.ETH, "ETH / USD", PRICES.ETH),
    [CORE.btc]: await feed(FEEDS_4663.BTC, "BTC / USD", PRICES[CORE.btc]),
    [CORE.stockA]: await feed(FEEDS_4663[CORE.stockA], `${CORE.stockA} / USD`, PRICES[CORE.stockA]),
    [CORE.stockB]: await feed(FEEDS_4663[CORE.stockB], `${CORE.stockB} / USD`, PRICES[CORE.stockB]),
    USDG: await feed(FEEDS_4663.USDG, "USDG / USD", 1),
  } as Record<string, Address>;

  const sanctionsList = await deploy(
    ctx,
    parseAbi(["constructor()"]),
    fixtureBytecode("SanctionsList", "SanctionsList"),
  );
  await send(
    ctx,
    sanctionsList,
    encodeFunctionData({ abi: sanctionsListAbi, functionName: "addToSanctionsList", args: [[accounts.sanctioned]] }),
  );

  // Launchpad curve with one live token, launched by trader B with creator fee mode.
  const launchpad = await deploy(
    ctx,
    parseAbi(["constructor(uint256, address)"]),
    fixtureBytecode("LaunchpadCurve", "LaunchpadCurve"),
    [parseEther("85"), account.address],
  );
  const creator = devnetAccount(ACCOUNT_ROLES.traderB);
  await send(
    ctx,
    launchpad,
    encodeFunctionData({ abi: launchpadAbi, functionName: "launch", args: ["Pit Launch Demo", "PLD", 1] }),
    0n,
    creator,
  );
  const launchToken = (await pub.readContract({
    address: launchpad,
    abi: launchpadAbi,
    functionName: "tokens",
    args: [0n],
  })) as Address;

  const partnerAgentVault = await deploy(
    ctx,
    parseAbi(["constructor()"]),
    fixtureBytecode("PartnerAgentVault", "PartnerAgentVault"),
  );
  await send(
    ctx,
    partnerAgentVault,
    encodeFunctionData({
      abi: partnerAgentVaultAbi,
      functionName: "register",
      args: [launchToken, "PLD", "Demo Agent", accounts.partnerOwner, accounts.partnerAgentWallet],
    }),
  );

  // Hostile tokens for screening, and one token with no pool at all.
  const honeypot = await deploy(
    ctx,
    parseAbi(["constructor(string, string, address)"]),
    fixtureBytecode("HostileTokens", "HoneypotToken"),
    ["Honey Pot", "HONEY", poolManager],
  );
  const feeOnTransfer = await deploy(
    ctx,
    parseAbi(["constructor(string, string, uint256)"]),
    fixtureBytecode("HostileTokens", "FeeOnTransferToken"),
    ["Taxed Token", "TAX", 500n],
  );
  const proxyImplV1 = await deploy(ctx, parseAbi(["constructor()"]), fixtureBytecode("HostileTokens", "ProxyTokenV1"));
  const proxyImplV2 = await deploy(ctx, parseAbi(["constructor()"]), fixtureBytecode("HostileTokens", "ProxyTokenV2"));
  const proxyToken = await deploy(
    ctx,
    parseAbi(["constructor(address, address, bytes)"]),
    fixtureBytecode("HostileTokens", "UpgradeableProxy"),
    [
      proxyImplV1,
      account.address,
      encodeFunctionData({
        abi: proxyTokenAbi,
        functionName: "initialize",
        args: ["Shifty Proxy", "SHIFT", account.address],
      }),
    ],
  );
  const noPoolToken = await token("Lonely Token", "LONE", 18);
  const markupToken = await token('<img src=x onerror="alert(1)">\u0007Evil\u202e', "<b>EVIL</b>\n", 18);
  const namespacedToken = await deploy(
    ctx,
    parseAbi(["constructor(string, string)"]),
    fixtureBytecode("HostileTokens", "NamespacedToken"),
    ["Namespaced Token", "NSPC"],
  );

  // Balances: liquidity for the pools plus trading money for the test traders.
  const mint = (tokenAddr: Address, to: Address, amount: bigint) =>
    send(ctx, tokenAddr, encodeFunctionData({ abi: mintableAbi, functionName: "mint", args: [to, amount] }));
  const big = {
    [usdg]: parseUnits("100000000", 6),
    [btc]: parseUnits("1000", 8),
    [partner]: parseUnits("100000000", 18),
    [stockA]: parseUnits("100000", 18),
    [stockB]: parseUnits("100000", 18),
    [honeypot]: parseUnits("10000000", 18),
    [feeOnTransfer]: parseUnits("10000000", 18),
    [proxyToken]: parseUnits("10000000", 18),
    [noPoolToken]: parseUnits("10000000", 18),
    [markupToken]: parseUnits("10000000", 18),
    [namespacedToken]: parseUnits("10000000", 18),
  } as Record<Address, bigint>;
  for (const [tokenAddr, amount] of Object.entries(big) as [Address, bigint][]) {
    await mint(tokenAddr, account.address, amount);
    for (const trader of [accounts.traderA, accounts.traderB, accounts.partnerAgentWallet])
      await mint(tokenAddr, trader, amount / 1000n);
  }

  // Permit2 approvals for the PositionManager, which settles through Permit2.
  for (const tokenAddr of Object.keys(big) as Address[]) await approveForPositions(ctx, tokenAddr, positionManager);

  // Pools: every core asset against USDG, full range at the seeded price.
  const decimalsOf: Record<Address, number> = {
    [zeroAddress]: 18,
    [usdg]: 6,
    [btc]: 8,
    [partner]: 18,
    [stockA]: 18,
    [stockB]: 18,
    [honeypot]: 18,
    [feeOnTransfer]: 18,
    [proxyToken]: 18,
    [markupToken]: 18,
    [namespacedToken]: 18,
  };
  const symbolOf: Record<Address, string> = {
    [zeroAddress]: "ETH",
    [usdg]: "USDG",
    [btc]: CORE.btc,
    [partner]: CORE.partner,
    [stockA]: CORE.stockA,
    [stockB]: CORE.stockB,
    [honeypot]: "HONEY",
    [feeOnTransfer]: "TAX",
    [proxyToken]: "SHIFT",
    [markupToken]: "EVIL",
    [namespacedToken]: "NSPC",
  };
  const pools: Universe["pools"] = [];
  const seedPool = async (asset: Address, priceUsd: number, depthUsd: number, fee: number, tickSpacing: number) => {
    const assetAmount = parseUnits((depthUsd / priceUsd).toFixed(decimalsOf[asset]!), decimalsOf[asset]!);
    const usdAmount = parseUnits(String(depthUsd), 6);
    const [currency0, currency1] = sortCurrencies(asset, usdg);
    const [amount0, amount1] = currency0 === asset ? [assetAmount, usdAmount] : [usdAmount, assetAmount];
    const key: PoolKey = { currency0, currency1, fee, tickSpacing, hooks: zeroAddress };
    const sqrtPriceX96 = sqrtPriceX96FromAmounts(amount0, amount1);
    await openFullRangePool(ctx, { poolManager, positionManager }, key, sqrtPriceX96, amount0, amount1);
    pools.push({ id: poolId(key), ...key, symbol0: symbolOf[currency0]!, symbol1: symbolOf[currency1]! });
  };
  await seedPool(zeroAddress, PRICES.ETH, DEPTH_USD.ETH, 500, 10);
  await seedPool(btc, PRICES[CORE.btc], DEPTH_USD[CORE.btc], 500, 10);
  await seedPool(partner, PRICES[CORE.partner], DEPTH_USD[CORE.partner], 3000, 60);
  await seedPool(stockA, PRICES[CORE.stockA], DEPTH_USD[CORE.stockA], 3000, 60);
  await seedPool(stockB, PRICES[CORE.stockB], DEPTH_USD[CORE.stockB], 3000, 60);
  await seedPool(honeypot, 1, 50_000, 3000, 60);
  await seedPool(feeOnTransfer, 1, 50_000, 3000, 60);
  await seedPool(proxyToken, 1, 50_000, 3000, 60);
  await seedPool(markupToken, 1, 20_000, 3000, 60);
  await seedPool(namespacedToken, 1, 50_000, 3000, 60);

  const tickPools = await seedTickPools(ctx, { poolManager, positionManager, account: account.address });

  const tokens: Universe["tokens"] = {
    ETH: { address: zeroAddress, decimals: 18, kind: "native", native: true, name: "Ether", feed: feeds.ETH },
    WETH: { address: weth9, decimals: 18, kind: "wrapped", native: false, name: "Wrapped Ether", feed: feeds.ETH },
    USDG: { address: usdg, decimals: 6, kind: "stable", native: false, name: "Global Dollar", feed: feeds.USDG },
    [CORE.btc]: {
      address: btc,
      decimals: 8,
      kind: "crypto",
      native: false,
      name: "Wrapped BTC",
      feed: feeds[CORE.btc],
    },
    [CORE.partner]: { address: partner, decimals: 18, kind: "partner", native: false, name: "Orbio" },
    [CORE.stockA]: {
      address: stockA,
      decimals: 18,
      kind: "stock",
      native: false,
      name: "Tesla Inc. (tokenised)",
      feed: feeds[CORE.stockA],
    },
    [CORE.stockB]: {
      address: stockB,
      decimals: 18,
      kind: "stock",
      native: false,
      name: "NVIDIA Corp. (tokenised)",
      feed: feeds[CORE.stockB],
    },
  };

  return {
    chainId: CHAIN_ID,
    startBlock,
    contracts: {
      poolManager,
      positionManager,
      v4Quoter,
      stateView,
      universalRouter,
      permit2: PERMIT2_ADDRESS,
      multicall3: MULTICALL3_ADDRESS,
      weth9,
      delegationManager: delegation.delegationManager,
      statelessDelegator: delegation.implementations.EIP7702StatelessDeleGatorImpl,
      enforcers: delegation.enforcers,
      stockRegistry,
      stockBeacon,
      launchpad,
      partnerAgentVault,
      sanctionsList,
    },
    tokens,
    pools,
    devnet: {
      accounts,
      fixtures: {
        honeypot,
        feeOnTransfer,
        proxyToken,
        proxyImplV1,
        proxyImplV2,
        noPoolToken,
        markupToken,
        namespacedToken,
        launchToken,
        tickA: tickPools.tickA,
        tickB: tickPools.tickB,
        stockImplementation: stockImpl,
        ...Object.fromEntries(Object.entries(feeds).map(([s, a]) => [`feed${s}`, a])),
      },
      deployedAt: Math.floor(Date.now() / 1000),
      deployMs: Date.now() - started,
      lastBlock: Number(await pub.getBlockNumber()),
    },
  };
}

/**
 * Pools for the local-quote equality test (issue 31 point 2), deployed after everything else so no
 * other address moves, on two tokens of their own (TICKA, 18 decimals; TICKB, 6) that no route of
 * the core assets passes through. Their keys are TICK_POOLS over the pair (ETH for `native`).
 * Each has many narrow positions, so swaps cross initialised ticks and tick-bitmap words.
 */
export const TICK_POOLS = [
  // A full-range floor under 40 overlapping positions: every size fills, crossing many ticks.
  { fee: 500, tickSpacing: 10, fullRange: true, native: false, positions: 40, width: 400 },
  // Narrow positions only, with gaps: liquidity runs out for large sizes (the quoter's NotEnoughLiquidity).
  { fee: 3000, tickSpacing: 60, fullRange: false, native: false, positions: 24, width: 1_200 },
  // Native ETH against TICKA at tick spacing 1: steps end at word boundaries (256 ticks) between positions.
  { fee: 100, tickSpacing: 1, fullRange: true, native: true, positions: 30, width: 300 },
] as const;

/** The tick pools' keys, in TICK_POOLS order, over the fixtures' TICKA and TICKB. */
export function tickPoolKeys(tickA: Address, tickB: Address): PoolKey[] {
  return TICK_POOLS.map((spec) => {
    const [currency0, currency1] = spec.native ? [zeroAddress, tickA] : sortCurrencies(tickA, tickB);
    return { currency0, currency1, fee: spec.fee, tickSpacing: spec.tickSpacing, hooks: zeroAddress };
  });
}

async function seedTickPools(ctx: Ctx, c: { poolManager: Address; positionManager: Address; account: Address }) {
  const tickA = await deploy(ctx, fixtureAbi, fixtureBytecode("TestToken", "TestToken"), ["Tick A", "TICKA", 18]);
  const tickB = await deploy(ctx, fixtureAbi, fixtureBytecode("TestToken", "TestToken"), ["Tick B", "TICKB", 6]);
  for (const t of [tickA, tickB]) {
    await send(
      ctx,
      t,
      encodeFunctionData({ abi: mintableAbi, functionName: "mint", args: [c.account, parseUnits("1000000000", 18)] }),
    );
    await approveForPositions(ctx, t, c.positionManager);
  }
  // A fixed generator: the same positions on every rebuild.
  let seed = 0x5eed;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (const spec of TICK_POOLS) {
    const [currency0, currency1] = spec.native ? [zeroAddress, tickA] : sortCurrencies(tickA, tickB);
    const key: PoolKey = { currency0, currency1, fee: spec.fee, tickSpacing: spec.tickSpacing, hooks: zeroAddress };
    // 1 TICKA = 2 TICKB, or 1 ETH = 1,500 TICKA.
    const [a0, a1] = spec.native
      ? [parseUnits("1", 18), parseUnits("1500", 18)]
      : currency0 === tickA
        ? [parseUnits("1", 18), parseUnits("2", 6)]
        : [parseUnits("2", 6), parseUnits("1", 18)];
    const sqrtPriceX96 = sqrtPriceX96FromAmounts(a0, a1);
    await send(
      ctx,
      c.poolManager,
      encodeFunctionData({ abi: poolManagerAbi, functionName: "initialize", args: [key, sqrtPriceX96] }),
    );
    const [max0, max1] = spec.native ? [parseUnits("50", 18), parseUnits("100000", 18)] : [a0 * 50_000n, a1 * 50_000n];
    if (spec.fullRange) await mintFullRange(ctx, c.positionManager, key, sqrtPriceX96, max0 / 10n, max1 / 10n);
    const mid = Math.round((Math.log(Number(sqrtPriceX96) / 2 ** 96) / Math.log(1.0001)) * 2);
    for (let i = 0; i < spec.positions; i++) {
      const centre = mid + Math.round((rand() - 0.5) * spec.width * 6);
      const half = Math.max(1, Math.round((rand() * spec.width) / spec.tickSpacing)) * spec.tickSpacing;
      const lower = Math.floor((centre - half) / spec.tickSpacing) * spec.tickSpacing;
      const liquidity =
        fullRangeLiquidity(sqrtPriceX96, spec.tickSpacing, max0, max1) / BigInt(20 + Math.floor(rand() * 80));
      await mintPosition(ctx, c.positionManager, key, [lower, lower + 2 * half], liquidity, max0, max1);
    }
  }
  return { tickA, tickB };
}
