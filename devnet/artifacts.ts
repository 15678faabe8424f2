import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";

export { ROOT } from "../lib/root.js";
import { ROOT } from "../lib/root.js";
const nm = (p: string) => join(ROOT, "node_modules", p);
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8"));

/** Creation bytecode of the real contracts, exactly as their npm packages ship it. */
export function realBytecode() {
  const foundry = (p: string): Hex => readJson(nm(p)).bytecode.object;
  const permit2Source = readFileSync(nm("@uniswap/v4-periphery/lib/permit2/test/utils/DeployPermit2.sol"), "utf8");
  const permit2 = /hex"([0-9a-fA-F]+)"/.exec(permit2Source)?.[1];
  if (!permit2) throw new Error("Permit2 runtime code not found in @uniswap/v4-periphery lib/permit2");
  return {
    poolManager: foundry("@uniswap/v4-core/out/PoolManager.sol/PoolManager.json"),
    positionManager: foundry("@uniswap/v4-periphery/foundry-out/PositionManager.sol/PositionManager.json"),
    v4Quoter: foundry("@uniswap/v4-periphery/foundry-out/V4Quoter.sol/V4Quoter.json"),
    stateView: foundry("@uniswap/v4-periphery/foundry-out/StateView.sol/StateView.json"),
    universalRouter: readJson(
      nm("@uniswap/universal-router/artifacts/contracts/UniversalRouter.sol/UniversalRouter.json"),
    ).bytecode as Hex,
    /** Runtime code, placed at the canonical address with anvil_setCode. */
    permit2Runtime: `0x${permit2}` as Hex,
    /** Canonical Multicall3 runtime code (as deployed at 0xcA11...CA11 on every chain). */
    multicall3Runtime: readFileSync(join(ROOT, "devnet", "multicall3.runtime.hex"), "utf8").trim() as Hex,
  };
}

/** Creation bytecode of one of our fixtures, compiled by `forge build` into contracts/out. */
export function fixtureBytecode(file: string, contract: string): Hex {
  return readJson(join(ROOT, "contracts", "out", `${file}.sol`, `${contract}.json`)).bytecode.object;
}
