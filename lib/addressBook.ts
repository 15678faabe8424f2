/**
 * Chain 4663's address book: where the shared contracts live on Robinhood Chain. The devnet places
 * the same npm bytecode at these addresses (devnet/place.ts), so devnet, a fork and production name
 * every shared contract alike and `/config` on the devnet shows the real addresses.
 *
 * Sources (../shared/CHAIN-4663.md): Uniswap's deployments for 4663 (v4, Universal Router 2.1.2),
 * the canonical Permit2 and Multicall3, Robinhood Chain's docs and public repos (WETH, USDG, the stock
 * tokens and their beacon, Chainlink feeds), and MetaMask's own table for the Delegation Framework
 * v1.3.0 (@metamask/delegation-deployments, read here rather than copied, so it cannot drift).
 * Not checked against the live chain from here: verify with `cast code` in fork mode before trusting.
 */
import { DELEGATOR_CONTRACTS } from "@metamask/delegation-deployments";
import { getAddress, type Address } from "viem";

export const CHAIN_4663_ID = 4663;

const a = (x: string): Address => getAddress(x);

/** MetaMask Delegation Framework v1.3.0 on chain 4663, as MetaMask publishes it. */
const delegation = DELEGATOR_CONTRACTS["1.3.0"]?.[CHAIN_4663_ID];
if (!delegation) throw new Error("@metamask/delegation-deployments has no v1.3.0 entry for chain 4663");
const ENFORCER = /Enforcer$/;

export const DELEGATION_4663 = {
  delegationManager: a(delegation.DelegationManager!),
  entryPoint: a(delegation.EntryPoint!),
  simpleFactory: a(delegation.SimpleFactory!),
  implementations: {
    EIP7702StatelessDeleGatorImpl: a(delegation.EIP7702StatelessDeleGatorImpl!),
    HybridDeleGatorImpl: a(delegation.HybridDeleGatorImpl!),
    MultiSigDeleGatorImpl: a(delegation.MultiSigDeleGatorImpl!),
  },
  /** Every caveat enforcer v1.3.0 deploys, by contract name. */
  enforcers: Object.fromEntries(
    Object.entries(delegation)
      .filter(([name]) => ENFORCER.test(name))
      .map(([name, at]) => [name, a(at)]),
  ) as Record<string, Address>,
} as const;

/** The shared contracts the service names in its universe (lib/universe.ts `contracts`). */
export const CONTRACTS_4663 = {
  poolManager: a("0x8366a39cc670b4001a1121b8f6a443a643e40951"),
  positionManager: a("0x58daec3116aae6d93017baaea7749052e8a04fa7"),
  v4Quoter: a("0x8dc178efb8111bb0973dd9d722ebeff267c98f94"),
  stateView: a("0xf3334192d15450cdd385c8b70e03f9a6bd9e673b"),
  /** Universal Router 2.1.2 (npm ships 2.1.0, whose encoding is the same 2.1 structs). */
  universalRouter: a("0x204FAca1764B154221e35c0d20aBb3c525710498"),
  permit2: a("0x000000000022D473030F116dDEE9F6B43aC78BA3"),
  multicall3: a("0xcA11bde05977b3631167028862bE2a173976CA11"),
  weth9: a("0x0Bd7D308f8E1639FAb988df18A8011f41EAcAD73"),
  delegationManager: DELEGATION_4663.delegationManager,
  statelessDelegator: DELEGATION_4663.implementations.EIP7702StatelessDeleGatorImpl,
  /** The stock tokens' one beacon (upgrading it upgrades every stock token: TOKEN_CHANGED). */
  stockBeacon: a("0xe10b6f6b275de231345c20d14ab812db62151b00"),
} as const;

/** Tokens by symbol (USDG is Paxos's proxy, 6 decimals). */
export const TOKENS_4663 = {
  WETH: CONTRACTS_4663.weth9,
  USDG: a("0x5fc5360D0400a0Fd4f2af552ADD042D716F1d168"),
  TSLA: a("0x322F0929c4625eD5bAd873c95208D54E1c003b2d"),
  AMZN: a("0x12f190a9F9d7D37a250758b26824B97CE941bF54"),
  NVDA: a("0xd0601CE157Db5bdC3162BbaC2a2C8aF5320D9EEC"),
  AAPL: a("0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"),
} as const;

/** The stock tokens' implementation behind the beacon. */
export const STOCK_IMPLEMENTATION_4663 = a("0xb35490d6f9163de4f80d88dc75c3516eb64c5ae2");

/** Chainlink USD feeds (8 decimals), by the symbol they price. */
export const FEEDS_4663 = {
  ETH: a("0x78F3556b67E17Df817D51Ef5a990cDaF09E8d3A9"),
  BTC: a("0xa2c5184bF03d373Dc9dE4876eb4Bce595B460251"),
  USDG: a("0x61B7e5650328764B076A108EFF5fa7282a1B9aD2"),
  TSLA: a("0x4A1166a659A55625345e9515b32adECea5547C38"),
  AMZN: a("0xD5a1508ceD74c084eBf3cBe853e2C968fB2a651C"),
  NVDA: a("0x379EC4f7C378F34a1B47E4F3cbeBCbAC3E8E9F15"),
} as const;
