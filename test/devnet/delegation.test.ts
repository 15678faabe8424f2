import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  parseUnits,
  type Address,
  type Hex,
} from "viem";
import { getDelegation } from "viem/actions";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { erc20Abi } from "../../abis/erc20.js";
import {
  delegationArrayParam,
  delegationManagerAbi,
  delegationTypes,
  ROOT_AUTHORITY,
  SINGLE_DEFAULT_MODE,
  statelessDelegatorAbi,
} from "../../abis/delegation.js";

let dn: Devnet;
beforeAll(async () => {
  dn = await startDevnet();
});
afterAll(() => dn?.stop());

describe("EIP-7702 wallet + MetaMask Delegation Framework", () => {
  it(
    "upgrades a wallet to EIP7702StatelessDeleGator v1.3.0 and redeems a delegation within an ERC-20 " + "budget",
    async () => {
      const { contracts } = dn.universe;
      const usdg = dn.token("USDG");
      const wallet = await dn.freshWallet(10n ** 18n, [[usdg, parseUnits("1000", 6)]]);
      const executor = await dn.freshWallet(10n ** 18n);
      const recipient = (await dn.freshWallet(0n)).address;

      expect(
        await dn.pub.readContract({
          address: contracts.statelessDelegator,
          abi: statelessDelegatorAbi,
          functionName: "VERSION",
        }),
      ).toBe("1.3.0");

      // The wallet signs an authorization; anyone (here the executor) may carry it in a type-4 tx.
      const authorization = await wallet.signAuthorization({
        contractAddress: contracts.statelessDelegator,
        chainId: 4663,
        nonce: await dn.pub.getTransactionCount({ address: wallet.address }),
      });
      const upgrade = await dn
        .walletFor(executor)
        .sendTransaction({ to: wallet.address, data: "0x", authorizationList: [authorization] });
      expect((await dn.mined(upgrade)).status).toBe("success");
      const code = await dn.pub.getCode({ address: wallet.address });
      expect(code?.toLowerCase()).toBe(concat(["0xef0100", contracts.statelessDelegator]).toLowerCase());
      // viem's getDelegation reads the same designator on anvil (a plain EOA has none).
      expect((await getDelegation(dn.pub, { address: wallet.address }))?.toLowerCase()).toBe(
        contracts.statelessDelegator.toLowerCase(),
      );
      expect(await getDelegation(dn.pub, { address: executor.address })).toBeUndefined();

      // Root delegation: the executor may move at most 100 USDG of the wallet's.
      const budget = parseUnits("100", 6);
      const caveats = [
        {
          enforcer: contracts.enforcers.ERC20TransferAmountEnforcer!,
          terms: encodePacked(["address", "uint256"], [usdg, budget]),
          args: "0x" as Hex,
        },
      ];
      const unsigned = {
        delegate: executor.address,
        delegator: wallet.address,
        authority: ROOT_AUTHORITY as Hex,
        caveats,
        salt: 1n,
      };
      const signature = await wallet.signTypedData({
        domain: {
          name: "DelegationManager",
          version: "1",
          chainId: 4663,
          verifyingContract: contracts.delegationManager,
        },
        types: delegationTypes,
        primaryType: "Delegation",
        message: { ...unsigned, caveats: caveats.map(({ enforcer, terms }) => ({ enforcer, terms })) },
      });
      const context = encodeAbiParameters([delegationArrayParam], [[{ ...unsigned, signature }]]);
      const transferCall = (amount: bigint) =>
        encodePacked(
          ["address", "uint256", "bytes"],
          [usdg, 0n, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [recipient, amount] })],
        );
      const redeem = (amount: bigint) =>
        encodeFunctionData({
          abi: delegationManagerAbi,
          functionName: "redeemDelegations",
          args: [[context], [SINGLE_DEFAULT_MODE], [transferCall(amount)]],
        });

      const within = await dn
        .walletFor(executor)
        .sendTransaction({ to: contracts.delegationManager, data: redeem(parseUnits("60", 6)) });
      expect((await dn.mined(within)).status).toBe("success");
      expect(
        await dn.pub.readContract({ address: usdg, abi: erc20Abi, functionName: "balanceOf", args: [recipient] }),
      ).toBe(parseUnits("60", 6));

      // 60 spent; another 60 would pass 100: the enforcer refuses (eth_call shows the revert, a sent tx reverts).
      await expect(
        dn.pub.call({ account: executor.address, to: contracts.delegationManager, data: redeem(parseUnits("60", 6)) }),
      ).rejects.toThrow(/allowance-exceeded|revert/i);
      const over = await dn
        .walletFor(executor)
        .sendTransaction({ to: contracts.delegationManager, data: redeem(parseUnits("60", 6)), gas: 500_000n });
      expect((await dn.mined(over)).status).toBe("reverted");
      expect(
        await dn.pub.readContract({ address: usdg, abi: erc20Abi, functionName: "balanceOf", args: [recipient] }),
      ).toBe(parseUnits("60", 6));

      // The rest of the budget still goes through.
      const rest = await dn
        .walletFor(executor)
        .sendTransaction({ to: contracts.delegationManager, data: redeem(parseUnits("40", 6)) });
      expect((await dn.mined(rest)).status).toBe("success");
    },
  );

  it("refuses a delegation signed by someone other than the delegator", async () => {
    const { contracts } = dn.universe;
    const usdg = dn.token("USDG");
    const wallet = await dn.freshWallet(10n ** 18n, [[usdg, parseUnits("10", 6)]]);
    const executor = await dn.freshWallet(10n ** 18n);
    const auth = await wallet.signAuthorization({
      contractAddress: contracts.statelessDelegator,
      chainId: 4663,
      nonce: 0,
    });
    await dn.mined(
      await dn.walletFor(executor).sendTransaction({ to: wallet.address, data: "0x", authorizationList: [auth] }),
    );
    const unsigned = {
      delegate: executor.address,
      delegator: wallet.address,
      authority: ROOT_AUTHORITY as Hex,
      caveats: [],
      salt: 7n,
    };
    // The executor signs for the wallet: recovery gives the wrong signer.
    const forged = await executor.signTypedData({
      domain: {
        name: "DelegationManager",
        version: "1",
        chainId: 4663,
        verifyingContract: contracts.delegationManager,
      },
      types: delegationTypes,
      primaryType: "Delegation",
      message: unsigned,
    });
    const call = encodePacked(
      ["address", "uint256", "bytes"],
      [
        usdg,
        0n,
        encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [executor.address as Address, 1n] }),
      ],
    );
    const redeem = (signature: Hex) =>
      dn.pub.call({
        account: executor.address,
        to: contracts.delegationManager,
        data: encodeFunctionData({
          abi: delegationManagerAbi,
          functionName: "redeemDelegations",
          args: [
            [encodeAbiParameters([delegationArrayParam], [[{ ...unsigned, signature }]])],
            [SINGLE_DEFAULT_MODE],
            [call],
          ],
        }),
      });
    await expect(redeem(forged)).rejects.toThrow();
    // The same delegation signed by the wallet goes through: the refusal above is the signer, not the call.
    const genuine = await wallet.signTypedData({
      domain: {
        name: "DelegationManager",
        version: "1",
        chainId: 4663,
        verifyingContract: contracts.delegationManager,
      },
      types: delegationTypes,
      primaryType: "Delegation",
      message: unsigned,
    });
    await expect(redeem(genuine)).resolves.toBeDefined();
  });
});
