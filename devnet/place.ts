/**
 * Places a contract at a chosen address on the devnet, as if deployed there: the address holds the
 * creation code for one call, which runs the constructor with `address(this)` already the chosen
 * address (so EIP-712 domains, NoDelegateCall's own address and every immutable come out as on the
 * real chain), writes the constructor's storage there, and answers the runtime code, which then
 * replaces the creation code. This is how the shared contracts sit at chain 4663's addresses
 * (lib/addressBook.ts) from the same npm bytecode, with no CREATE2 salt or deployer key needed.
 */
import { encodeDeployData, getAddress, type Abi, type Address, type Hex } from "viem";
import * as delegationAbis from "@metamask/delegation-abis";
import * as delegationBytecode from "@metamask/delegation-abis/bytecode";
import { DELEGATION_4663 } from "../lib/addressBook.js";
import type { Ctx } from "./deploy.js";

const rpc = (ctx: Ctx, method: string, params: unknown[]) =>
  ctx.pub.request({ method: method as never, params: params as never }) as Promise<unknown>;

/** Runs `bytecode`'s constructor at `at` and leaves its runtime code and storage there. */
export async function placeAt(
  ctx: Ctx,
  at: Address,
  abi: Abi,
  bytecode: Hex,
  args: readonly unknown[] = [],
): Promise<Address> {
  const creation = encodeDeployData({ abi, bytecode, args } as Parameters<typeof encodeDeployData>[0]);
  // A created contract starts at nonce 1 (EIP-161): a CREATE in the constructor lands where it would.
  await rpc(ctx, "anvil_setNonce", [at, "0x1"]);
  await rpc(ctx, "anvil_setCode", [at, creation]);
  // The same constructor twice: once in a call for the runtime code it answers, once mined for its storage.
  const runtime = (await rpc(ctx, "eth_call", [{ from: ctx.account.address, to: at }, "latest"])) as Hex;
  if (!runtime || runtime === "0x") throw new Error(`constructor placed at ${at} answered no runtime code`);
  const hash = await ctx.wallet.sendTransaction({ to: at, account: ctx.account, chain: ctx.chain });
  const receipt = await ctx.pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`constructor placed at ${at} reverted (${hash})`);
  await rpc(ctx, "anvil_setCode", [at, runtime]);
  return getAddress(at);
}

type Named = Record<string, unknown>;
const abis = delegationAbis as unknown as Named;
const bytecodes = delegationBytecode as unknown as Named;

/**
 * The MetaMask Delegation Framework v1.3.0 at chain 4663's addresses: what the kit's
 * deploySmartAccountsEnvironment deploys, from the same @metamask/delegation-abis bytecode, each
 * constructor given the framework's own addresses. The P-256 library HybridDeleGator links has no
 * published address: it is deployed at a devnet address and linked, as the kit does.
 */
export async function placeDelegationFramework(ctx: Ctx, deploy: (abi: Abi, code: Hex) => Promise<Address>) {
  const book = DELEGATION_4663;
  const argByName: Record<string, Address> = {
    _owner: ctx.account.address,
    _delegationManager: book.delegationManager,
    _entryPoint: book.entryPoint,
    _argsEqualityCheckEnforcer: book.enforcers.ArgsEqualityCheckEnforcer!,
  };
  const place = async (contract: string, at: Address, code?: Hex) => {
    const abi = abis[contract] as Abi;
    const inputs = abi.find((x) => x.type === "constructor")?.inputs ?? [];
    const args = inputs.map((i) => {
      const value = argByName[i.name ?? ""];
      if (!value) throw new Error(`${contract}: no address for constructor argument ${i.name}`);
      return value;
    });
    return placeAt(ctx, at, abi, code ?? (bytecodes[contract] as Hex), args);
  };
  await place("EntryPoint", book.entryPoint);
  await place("DelegationManager", book.delegationManager);
  await place("SimpleFactory", book.simpleFactory);
  // Enforcers in name order, ArgsEqualityCheckEnforcer before NativeTokenPaymentEnforcer reads it.
  for (const [name, at] of Object.entries(book.enforcers).sort(([x], [y]) => x.localeCompare(y))) await place(name, at);
  const scl = await deploy(abis.SCL_RIP7212 as Abi, bytecodes.SCL_RIP7212 as Hex);
  const linked = (bytecodes.HybridDeleGator as string).replace(
    /__\$b8f96b288d4d0429e38b8ed50fd423070f\$__/g,
    scl.slice(2),
  );
  await place("HybridDeleGator", book.implementations.HybridDeleGatorImpl, linked as Hex);
  await place("MultiSigDeleGator", book.implementations.MultiSigDeleGatorImpl);
  await place("EIP7702StatelessDeleGator", book.implementations.EIP7702StatelessDeleGatorImpl);
  return book;
}
