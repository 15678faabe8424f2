import { parseAbi, type Address } from "viem";
import { fixtureBytecode } from "../../devnet/artifacts.js";
import type { Devnet } from "./devnet.js";

/**
 * Gas a GasBurnerToken's name() and symbol() burn by default: under anvil's 30M call gas, about 1.5 s of node time each
 * (pairing checks).
 */
export const BURN_GAS = 29_000_000n;

export const gasBurnerAbi = parseAbi([
  "constructor(string, string, uint256)",
  "function mint(address to, uint256 value)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function name() view returns (string)",
]);

/**
 * Deploys a GasBurnerToken (contracts/src/HostileTokens.sol) from its bytecode at run time: a
 * token whose name() and symbol() burn `burnGas` before answering (decimals and transfers plain).
 * Not in the devnet snapshot: each caller gets a fresh address.
 */
export async function deployGasBurner(
  dn: Devnet,
  o: { name?: string; symbol?: string; burnGas?: bigint } = {},
): Promise<Address> {
  const hash = await dn.walletFor(dn.deployer).deployContract({
    abi: gasBurnerAbi,
    bytecode: fixtureBytecode("HostileTokens", "GasBurnerToken"),
    args: [o.name ?? "Gas Burner", o.symbol ?? "BURN", o.burnGas ?? BURN_GAS],
  });
  return (await dn.mined(hash)).contractAddress!;
}

export const balanceBurnerAbi = parseAbi([
  "constructor(string, string, uint256)",
  "function mint(address to, uint256 value)",
  "function balanceOf(address) view returns (uint256)",
]);

/**
 * Deploys a BalanceBurnerToken (contracts/src/HostileTokens.sol) at run time: honest name, symbol
 * and decimals (screening passes it), but balanceOf and allowance burn `burnGas`. `holders` get
 * `amount` each.
 */
export async function deployBalanceBurner(
  dn: Devnet,
  o: { name?: string; symbol?: string; burnGas?: bigint; holders?: Address[]; amount?: bigint } = {},
): Promise<Address> {
  const wallet = dn.walletFor(dn.deployer);
  const hash = await wallet.deployContract({
    abi: balanceBurnerAbi,
    bytecode: fixtureBytecode("HostileTokens", "BalanceBurnerToken"),
    args: [o.name ?? "Balance Burner", o.symbol ?? "BBURN", o.burnGas ?? BURN_GAS],
  });
  const token = (await dn.mined(hash)).contractAddress!;
  for (const to of o.holders ?? [])
    await dn.mined(
      await wallet.writeContract({
        address: token,
        abi: balanceBurnerAbi,
        functionName: "mint",
        args: [to, o.amount ?? 10n ** 21n],
      }),
    );
  return token;
}

/** Mints `amount` of a gas burner straight to `to` (an airdrop: a Transfer log to that wallet). */
export async function airdropGasBurner(dn: Devnet, token: Address, to: Address, amount = 10n ** 21n): Promise<void> {
  await dn.mined(
    await dn
      .walletFor(dn.deployer)
      .writeContract({ address: token, abi: gasBurnerAbi, functionName: "mint", args: [to, amount] }),
  );
}
