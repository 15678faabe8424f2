import { parseAbi } from "viem";

// ABIs of the devnet fixtures (contracts/src). On the real chain the same roles are played by the
// issuer's, oracle's, launchpad's and partner's contracts with these read interfaces.

export const priceFeedAbi = parseAbi([
  "function decimals() view returns (uint8)",
  "function description() view returns (string)",
  "function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)",
  "function getRoundData(uint80 roundId) view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)",
  "function setAnswer(int256 answer)",
  "function setAnswerAt(int256 answer, uint256 updatedAt)",
  "event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)",
  "event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt)",
]);

export const stockRegistryAbi = parseAbi([
  "function paused() view returns (bool)",
  "function isBlocked(address) view returns (bool)",
  "function setPaused(bool)",
  "function setBlocked(address account, bool blocked)",
  "function owner() view returns (address)",
]);

export const stockTokenAbi = parseAbi([
  "function initialize(string name, string symbol, address registry)",
  "function paused() view returns (bool)",
  "function tokenPaused() view returns (bool)",
  "function uiMultiplier() view returns (uint256)",
  "function effectiveAt() view returns (uint256)",
  "function registry() view returns (address)",
  "function setTokenPaused(bool)",
  "function mint(address to, uint256 value)",
]);

export const beaconAbi = parseAbi([
  "function implementation() view returns (address)",
  "function upgradeTo(address newImplementation)",
  "event Upgraded(address indexed implementation)",
]);

export const launchpadAbi = parseAbi([
  "function launch(string name, string symbol, uint8 feeMode) returns (address token)",
  "function buy(address token, uint256 minTokensOut, address to) payable returns (uint256)",
  "function sell(address token, uint256 tokensIn, uint256 minEthOut, address to) returns (uint256)",
  "function quoteBuy(address token, uint256 ethIn) view returns (uint256 tokensOut, uint256 fee)",
  "function quoteSell(address token, uint256 tokensIn) view returns (uint256 ethOut, uint256 fee)",
  "function feeBps(address token) view returns (uint256 protocolBps, uint256 creatorBps, uint256 snipeBps)",
  "function curves(address token) view returns (address creator, uint8 feeMode, bool graduated, uint64 launchedAt, uint256 virtualEth, uint256 virtualToken, uint256 realEth)",
  "function tokenCount() view returns (uint256)",
  "function tokens(uint256) view returns (address)",
  "function graduationWei() view returns (uint256)",
  "event TokenLaunched(address indexed token, address indexed creator, string name, string symbol, uint8 feeMode, uint256 virtualEth, uint256 virtualToken)",
  "event Trade(address indexed token, address indexed trader, bool isBuy, uint256 ethAmount, uint256 tokenAmount, uint256 fee, uint256 virtualEth, uint256 virtualToken)",
  "event FeeSplit(address indexed token, uint256 protocolFee, uint256 creatorFee, uint256 snipeTax)",
  "event Graduated(address indexed token, uint256 realEth)",
]);

export const partnerAgentVaultAbi = parseAbi([
  "function register(address token, string symbol, string name, address agentOwner, address agentWallet) returns (uint256)",
  "function agentCount() view returns (uint256)",
  "function agentIdOf(address wallet) view returns (uint256)",
  "function getAgent(uint256 id) view returns ((address token, string symbol, string name, address owner, address agentWallet))",
  "event AgentRegistered(uint256 indexed agentId, address indexed token, address indexed owner, address agentWallet)",
]);

export const sanctionsListAbi = parseAbi([
  "function isSanctioned(address addr) view returns (bool)",
  "function addToSanctionsList(address[] addrs)",
  "function removeFromSanctionsList(address[] addrs)",
]);

export const proxyTokenAbi = parseAbi([
  "function initialize(string name, string symbol, address owner)",
  "function upgradeProxyTo(address implementation)",
  "function version() view returns (uint256)",
  "function mint(address to, uint256 value)",
  "event Upgraded(address indexed implementation)",
]);
