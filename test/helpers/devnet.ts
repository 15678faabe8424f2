import { createTestClient, createWalletClient, http, type Address, type Hex } from "viem";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { startAnvil, type Anvil } from "../../devnet/anvil.js";
import { SNAPSHOT_FILE, UNIVERSE_FILE } from "../../devnet/snapshot.js";
import { devnetChain, ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import { readUniverse, type Universe } from "../../lib/universe.js";
import { mintableAbi } from "../../abis/erc20.js";
import { publicClient } from "../../lib/chain.js";

export type Devnet = Awaited<ReturnType<typeof startDevnet>>;

/**
 * A private anvil for one test file, loaded from the pristine snapshot on a free port. Nothing is
 * shared between files: each gets its own chain and must stop it (afterAll).
 */
export async function startDevnet(opts: { blockTime?: number } = {}) {
  // A test process that dies (a hook timed out, the run was stopped) takes its devnet with it: no anvil outlives its
  // file to load the rest of the run.
  const anvil: Anvil = await startAnvil({ loadState: SNAPSHOT_FILE, blockTime: opts.blockTime, dieWithParent: true });
  const universe: Universe = readUniverse(UNIVERSE_FILE);
  const chain = devnetChain(anvil.rpcUrl);
  const transport = http(anvil.rpcUrl);
  // cacheTime 0: viem otherwise reuses a block number for the polling interval, so a test that
  // mines and then asks for the head could wait for the block before its own.
  const pub = publicClient({ chain, transport, pollingInterval: 50, cacheTime: 0 });
  const test = createTestClient({ chain, transport, mode: "anvil" });
  const walletFor = (account: ReturnType<typeof privateKeyToAccount> | ReturnType<typeof devnetAccount>) =>
    createWalletClient({ chain, transport, account });
  const deployer = devnetAccount(ACCOUNT_ROLES.deployer);

  return {
    anvil,
    universe,
    chain,
    pub,
    test,
    deployer,
    walletFor,
    account: devnetAccount,
    token(symbol: string): Address {
      const t = universe.tokens[symbol];
      if (!t) throw new Error(`no core token ${symbol}`);
      return t.address;
    },
    /** A brand-new wallet with `eth` ETH and, optionally, freshly minted fixture tokens. */
    async freshWallet(eth = 10n ** 20n, mints: [Address, bigint][] = []) {
      const account = privateKeyToAccount(generatePrivateKey());
      await test.setBalance({ address: account.address, value: eth });
      const deployerWallet = walletFor(deployer);
      for (const [token, amount] of mints) {
        const hash = await deployerWallet.writeContract({
          address: token,
          abi: mintableAbi,
          functionName: "mint",
          args: [account.address, amount],
        });
        await pub.waitForTransactionReceipt({ hash });
      }
      return account;
    },
    async mined(hash: Hex) {
      return pub.waitForTransactionReceipt({ hash });
    },
    stop: () => anvil.stop(),
  };
}
