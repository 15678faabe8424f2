import type { Address } from "viem";
import { partnerAgentVaultAbi } from "../../abis/fixtures.js";
import type { Devnet } from "./devnet.js";

/** Registers a partner agent (USDG-paired token `symbol`) in the devnet's vault; answers its agent id. */
export async function registerAgent(
  dn: Devnet,
  owner: Address,
  wallet: Address,
  symbol: string,
  name = `Agent ${symbol}`,
): Promise<number> {
  const w = dn.walletFor(dn.deployer);
  const call = {
    address: dn.universe.contracts.partnerAgentVault,
    abi: partnerAgentVaultAbi,
    functionName: "register",
    args: [dn.token("USDG"), symbol, name, owner, wallet],
  } as const;
  const { result } = await dn.pub.simulateContract({ account: w.account!, ...call });
  await dn.mined(await w.writeContract(call));
  return Number(result);
}
