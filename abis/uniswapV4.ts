import { parseAbi } from "viem";

const poolKey = "(address currency0, address currency1, uint24 fee, int24 tickSpacing, address hooks)";

export const poolManagerAbi = parseAbi([
  "constructor(address initialOwner)",
  `function initialize(${poolKey} key, uint160 sqrtPriceX96) returns (int24 tick)`,
  "event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  "event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  "event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  "event ProtocolFeeUpdated(bytes32 indexed id, uint24 protocolFee)",
]);

export const positionManagerAbi = parseAbi([
  "constructor(address poolManager, address permit2, uint256 unsubscribeGasLimit, address tokenDescriptor, address weth9)",
  "function modifyLiquidities(bytes unlockData, uint256 deadline) payable",
  "function nextTokenId() view returns (uint256)",
]);

export const v4QuoterAbi = parseAbi([
  "constructor(address poolManager)",
  `function quoteExactInputSingle((${poolKey} poolKey, bool zeroForOne, uint128 exactAmount, bytes hookData) params) returns (uint256 amountOut, uint256 gasEstimate)`,
  `function quoteExactInput((address exactCurrency, (address intermediateCurrency, uint24 fee, int24 tickSpacing, address hooks, bytes hookData)[] path, uint128 exactAmount) params) returns (uint256 amountOut, uint256 gasEstimate)`,
  `function quoteExactOutputSingle((${poolKey} poolKey, bool zeroForOne, uint128 exactAmount, bytes hookData) params) returns (uint256 amountIn, uint256 gasEstimate)`,
]);

export const stateViewAbi = parseAbi([
  "constructor(address poolManager)",
  "function getSlot0(bytes32 poolId) view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee, uint24 lpFee)",
  "function getLiquidity(bytes32 poolId) view returns (uint128 liquidity)",
]);

/** v4-periphery action codes (Actions.sol). */
export const V4Action = {
  MINT_POSITION: 0x02,
  SWAP_EXACT_IN_SINGLE: 0x06,
  SETTLE: 0x0b,
  SETTLE_ALL: 0x0c,
  SETTLE_PAIR: 0x0d,
  TAKE: 0x0e,
  TAKE_ALL: 0x0f,
  TAKE_PORTION: 0x10,
  CLOSE_CURRENCY: 0x12,
  SWEEP: 0x14,
} as const;

export const poolKeyParam = {
  type: "tuple",
  components: [
    { name: "currency0", type: "address" },
    { name: "currency1", type: "address" },
    { name: "fee", type: "uint24" },
    { name: "tickSpacing", type: "int24" },
    { name: "hooks", type: "address" },
  ],
} as const;

/** IV4Router.ExactInputSingleParams (unchanged in Universal Router 2.1). */
export const exactInputSingleParams = [
  {
    type: "tuple",
    components: [
      { name: "poolKey", ...poolKeyParam },
      { name: "zeroForOne", type: "bool" },
      { name: "amountIn", type: "uint128" },
      { name: "amountOutMinimum", type: "uint128" },
      { name: "hookData", type: "bytes" },
    ],
  },
] as const;
