import { parseAbi } from "viem";

export const universalRouterAbi = parseAbi([
  "constructor((address permit2, address weth9, address v2Factory, address v3Factory, bytes32 pairInitCodeHash, bytes32 poolInitCodeHash, address v4PoolManager, address v3NFTPositionManager, address v4PositionManager, address spokePool) params)",
  "function execute(bytes commands, bytes[] inputs, uint256 deadline) payable",
  "function execute(bytes commands, bytes[] inputs) payable",
  "error ExecutionFailed(uint256 commandIndex, bytes message)",
  "error TransactionDeadlinePassed()",
  "error V4TooLittleReceived(uint256 minAmountOutReceived, uint256 amountReceived)",
]);

/** Universal Router command bytes (Commands.sol, 2.1). */
export const Command = {
  PERMIT2_TRANSFER_FROM: 0x02,
  SWEEP: 0x04,
  TRANSFER: 0x05,
  PAY_PORTION: 0x06,
  PERMIT2_PERMIT: 0x0a,
  WRAP_ETH: 0x0b,
  UNWRAP_WETH: 0x0c,
  V4_SWAP: 0x10,
  EXECUTE_SUB_PLAN: 0x21,
} as const;

/** Commands.sol: the low 6 bits name the command; bit 7 lets it revert without reverting the call. */
export const COMMAND_TYPE_MASK = 0x3f;
export const FLAG_ALLOW_REVERT = 0x80;

/** Router's ActionConstants: MSG_SENDER = address(1), ADDRESS_THIS = address(2), CONTRACT_BALANCE = 2^255. */
export const ROUTER_MSG_SENDER = "0x0000000000000000000000000000000000000001" as const;
export const ROUTER_ADDRESS_THIS = "0x0000000000000000000000000000000000000002" as const;
export const CONTRACT_BALANCE = 1n << 255n;
