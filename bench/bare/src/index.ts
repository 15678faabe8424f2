import { ponder } from "ponder:registry";

// Every event the service indexes, handled by doing nothing.
const names = [
  "PoolManager:Initialize",
  "PoolManager:Swap",
  "PoolManager:ModifyLiquidity",
  "Feed:AnswerUpdated",
  "Launchpad:TokenLaunched",
  "Launchpad:Trade",
  "Launchpad:Graduated",
  "PlatformTokenIn:Transfer",
  "PlatformTokenOut:Transfer",
  "Platform:transaction:to",
  "Platform:transaction:from",
  "Trades:block",
] as const;
for (const name of names) ponder.on(name as never, async () => {});
