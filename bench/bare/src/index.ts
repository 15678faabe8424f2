import { ponder } from "ponder:registry";

// Every log event of the bare config (../ponder.config.ts), handled by doing nothing.
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
] as const;
for (const name of names) ponder.on(name as never, async () => {});
