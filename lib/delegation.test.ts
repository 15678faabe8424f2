import { describe, expect, it } from "vitest";
import { concat, encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from "viem";
import {
  BATCH_DEFAULT_MODE,
  curveBatchPins,
  readRedeem,
  readWalletBatch,
  redeemCalldata,
  walletBatch,
  walletExecuteAbi,
  type Execution,
} from "./delegation.js";

const wallet = getAddress("0x1111111111111111111111111111111111111111");
const launchpad = getAddress("0x2222222222222222222222222222222222222222");
const feeRecipient = getAddress("0x3333333333333333333333333333333333333333");
const token = getAddress("0x4444444444444444444444444444444444444444");
const thief = getAddress("0x5555555555555555555555555555555555555555");
const curve = parseAbi([
  "function buy(address token, uint256 minTokensOut, address to)",
  "function sell(address token, uint256 tokensIn, uint256 minEthOut, address to)",
]);
const fee: Execution = { target: feeRecipient, value: 12_345n, callData: "0x" };
const buy = (to: Address, min = 7n): Execution => ({
  target: launchpad,
  value: 10n ** 15n,
  callData: encodeFunctionData({ abi: curve, functionName: "buy", args: [token, min, to] }),
});
const sell = (to: Address): Execution => ({
  target: launchpad,
  value: 0n,
  callData: encodeFunctionData({ abi: curve, functionName: "sell", args: [token, 99n, 5n, to] }),
});
/** What AllowedCalldata checks on chain: each pinned range equal, byte for byte. */
const pinsHold = (data: Hex, isBuy: boolean) =>
  curveBatchPins({ launchpad, feeRecipient, wallet }, token, isBuy).every(
    (p) =>
      data.slice(2 + 2 * p.start, 2 + 2 * p.start + (p.value.length - 2)).toLowerCase() ===
      p.value.slice(2).toLowerCase(),
  );

describe("a wallet's own batch (a curve trade's fee and trade as one execution)", () => {
  it(
    "reads back exactly the calls it was built from, in order; another wallet, ETH on the call, or single mode read " +
      "as nothing",
    () => {
      const e = walletBatch(wallet, [fee, buy(wallet)]);
      expect(e).toMatchObject({ target: wallet, value: 0n });
      expect(readWalletBatch(e, wallet)).toEqual([fee, buy(wallet)]);
      expect(readWalletBatch(e, thief)).toBeNull();
      expect(readWalletBatch({ ...e, value: 1n }, wallet)).toBeNull();
      const single = encodeFunctionData({
        abi: walletExecuteAbi,
        functionName: "execute",
        args: [`0x${"00".repeat(32)}`, "0x"],
      });
      expect(readWalletBatch({ ...e, callData: single }, wallet)).toBeNull();
    },
  );

  it("refuses a batch whose offsets are not the canonical encoding (decodeBatch trusts them)", () => {
    const e = walletBatch(wallet, [fee, buy(wallet)]);
    // Trailing bytes after the batch: decodes the same in viem, not byte-equal to the canonical form.
    expect(readWalletBatch({ ...e, callData: concat([e.callData, `0x${"00".repeat(32)}`]) }, wallet)).toBeNull();
    // The batch's array offset moved one word on (a blob that decodes elsewhere on chain).
    const args = encodeFunctionData({
      abi: walletExecuteAbi,
      functionName: "execute",
      args: [
        BATCH_DEFAULT_MODE,
        concat([`0x${"00".repeat(31)}40`, `0x${"00".repeat(32)}`, e.callData.slice(2 + 8 + 64 * 4) as Hex]),
      ],
    });
    expect(readWalletBatch({ ...e, callData: args }, wallet)).toBeNull();
  });

  it(
    "the curve root's pins hold for [fee, buy or sell paying the wallet] at any amounts, and fail for another " +
      "recipient, order or fee target",
    () => {
      expect(pinsHold(walletBatch(wallet, [fee, buy(wallet)]).callData, true)).toBe(true);
      expect(pinsHold(walletBatch(wallet, [{ ...fee, value: 1n }, buy(wallet, 10n ** 30n)]).callData, true)).toBe(true);
      expect(pinsHold(walletBatch(wallet, [fee, sell(wallet)]).callData, false)).toBe(true);
      expect(pinsHold(walletBatch(wallet, [fee, buy(thief)]).callData, true)).toBe(false);
      expect(pinsHold(walletBatch(wallet, [fee, sell(thief)]).callData, false)).toBe(false);
      expect(pinsHold(walletBatch(wallet, [buy(wallet), fee]).callData, true)).toBe(false);
      expect(pinsHold(walletBatch(wallet, [{ ...fee, target: thief }, buy(wallet)]).callData, true)).toBe(false);
      expect(pinsHold(walletBatch(wallet, [buy(wallet)]).callData, true)).toBe(false);
      expect(pinsHold(walletBatch(wallet, [fee, buy(wallet)]).callData, false)).toBe(false);
    },
  );

  it(
    "readRedeem names the calls a redeem makes: the root delegator's batch read back, else the execution " + "itself",
    () => {
      const root = {
        delegate: thief,
        delegator: wallet,
        authority: `0x${"ff".repeat(32)}` as Hex,
        caveats: [],
        salt: 1n,
        signature: "0x" as Hex,
      };
      const leaf = { ...root, delegate: launchpad, delegator: thief, authority: `0x${"11".repeat(32)}` as Hex };
      const batch = walletBatch(wallet, [fee, buy(wallet)]);
      expect(readRedeem(redeemCalldata([leaf, root], batch))![0]!.calls).toEqual([fee, buy(wallet)]);
      expect(readRedeem(redeemCalldata([leaf, root], buy(wallet)))![0]!.calls).toEqual([buy(wallet)]);
    },
  );
});
