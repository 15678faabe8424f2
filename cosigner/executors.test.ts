import { describe, expect, it } from "vitest";
import { openMigratedMemory } from "../api/ports/store/memory.js";
import {
  getAddress,
  parseTransaction,
  recoverTransactionAddress,
  toFunctionSelector,
  verifyMessage,
  type Address,
} from "viem";
import { migrate } from "../api/ports/store/migrations.js";
import { createExecutorKeys } from "./executors.js";
import { delegationHash, redeemCalldata, ROOT_AUTHORITY, type Delegation } from "../lib/delegation.js";
import { stockAttestationText } from "../lib/stockAttestation.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { encodeAbiParameters, type Hex } from "viem";

const dm = "0x00000000000000000000000000000000000000d1" as Address;
const router = "0x00000000000000000000000000000000000000e1" as Address;
const stockToken = "0x00000000000000000000000000000000000057c4" as Address;
const usdg = "0x0000000000000000000000000000000000005d90" as Address;
const root = (salt: bigint): Delegation => ({
  delegate: "0x00000000000000000000000000000000000000c0",
  delegator: "0x00000000000000000000000000000000000000aa",
  authority: ROOT_AUTHORITY as Hex,
  caveats: [],
  salt,
  signature: "0x",
});
/** A redeem of one router call whose calldata names `tokens` (as a swap's ABI words do). */
const redeemOf = (r: Delegation, tokens: Address[], executor: Address) => {
  const leaf: Delegation = {
    delegate: executor,
    delegator: r.delegate,
    authority: delegationHash(r),
    caveats: [],
    salt: 1n,
    signature: "0x",
  };
  return redeemCalldata([leaf, r], {
    target: router,
    value: 0n,
    callData: `0x3593564c${encodeAbiParameters([{ type: "address[]" }], [tokens]).slice(2)}`,
  });
};

const owner = "0x00000000000000000000000000000000000000aa" as Address;
const ask = { chainId: 4663, nonce: 0, gas: 21_000n, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 1n, value: 5n };

describe("executor keys at the signing service", () => {
  it("seals each key: no row holds it in the clear, another secret or another row cannot open it", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const keys = createExecutorKeys({ db, secret: "s".repeat(40), chainId: 4663, clock: Date.now, payout: null });
    const a = await keys.create("ha_a", owner);
    const b = await keys.create("ha_b", owner);
    expect(
      await verifyMessage({ address: a.executor, message: a.attestation.message, signature: a.attestation.signature }),
    ).toBe(true);
    expect(a.attestation).toMatchObject({
      executor: a.executor,
      agent_id: "ha_a",
      owner: getAddress(owner),
      chain_id: 4663,
    });
    expect(a.attestation.message).toContain(`agent: ha_a`);
    const rows = await db.query<{ address: string; sealed: string }>(
      "SELECT address, sealed FROM app.executor_keys ORDER BY address",
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(Buffer.from(r.sealed, "base64").length).toBe(12 + 16 + 32);
    // Another secret cannot open a key.
    const wrong = createExecutorKeys({ db, secret: "t".repeat(40), chainId: 4663, clock: Date.now, payout: null });
    await expect(wrong.attestation(a.executor)).rejects.toThrow();
    // A's sealed key copied onto B's row does not open as B (the address is bound in).
    const sealedA = rows.find((r) => r.address === a.executor.toLowerCase())!.sealed;
    await db.query("UPDATE app.executor_keys SET sealed = $1 WHERE address = $2", [sealedA, b.executor.toLowerCase()]);
    await expect(keys.attestation(b.executor)).rejects.toThrow();
    await db.close();
  });

  it("signs a refund only once the executor is closed, only to the recorded owner, as a plain transfer", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const keys = createExecutorKeys({ db, secret: "s".repeat(40), chainId: 4663, clock: Date.now, payout: null });
    const { executor } = await keys.create("ha_a", owner);
    await expect(keys.signRefund(executor, ask)).rejects.toMatchObject({ code: "REFUND_REFUSED" });
    expect(await keys.close(executor)).toBe(true);
    expect(await keys.close(executor)).toBe(false);
    await expect(keys.signRefund(executor, { ...ask, chainId: 1 })).rejects.toMatchObject({ code: "REFUND_REFUSED" });
    const raw = await keys.signRefund(executor, ask);
    const tx = parseTransaction(raw);
    expect(tx).toMatchObject({
      type: "eip1559",
      chainId: 4663,
      to: owner.toLowerCase(),
      value: 5n,
      nonce: 0,
      gas: 21_000n,
    });
    expect(tx.data).toBeUndefined();
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(executor);
    expect(await keys.state(executor)).toMatchObject({ closed: true, retired: false, agentId: "ha_a" });
    await db.close();
  });

  it(
    "signs only redeemDelegations to the DelegationManager, within the gas cap, " +
      "from an executor neither retired nor closed",
    async () => {
      const db = await openMigratedMemory();
      await migrate(db);
      const keys = createExecutorKeys({
        db,
        secret: "s".repeat(40),
        chainId: 4663,
        clock: Date.now,
        delegationManager: dm,
        payout: null,
      });
      const { executor } = await keys.create("ha_a", owner);
      const redeem = redeemOf(root(7n), [usdg], executor);
      expect(redeem.startsWith(toFunctionSelector("redeemDelegations(bytes[],bytes32[],bytes[])"))).toBe(true);
      const base = {
        to: dm,
        data: redeem,
        chainId: 4663,
        nonce: 0,
        gas: 500_000n,
        maxFeePerGas: 10n ** 9n,
        maxPriorityFeePerGas: 1n,
        feeBps: 25,
      };
      const signed = parseTransaction(await keys.signTrade(executor, base));
      expect([signed.to?.toLowerCase(), signed.value ?? 0n, signed.chainId, signed.data]).toEqual([
        dm,
        0n,
        4663,
        redeem,
      ]);
      // A transfer of the wallet's tokens, another target, another chain, a runaway gas limit: refused.
      await expect(keys.signTrade(executor, { ...base, data: "0xa9059cbb" })).rejects.toMatchObject({
        code: "TX_REFUSED",
      });
      // A redeem of a leaf delegated to another executor: not this executor's gas.
      await expect(
        keys.signTrade(executor, { ...base, data: redeemOf(root(7n), [usdg], owner) }),
      ).rejects.toMatchObject({
        code: "TX_REFUSED",
      });
      // The right selector over bytes that do not decode as a redeem: refused, not signed blind.
      await expect(
        keys.signTrade(executor, { ...base, data: `${redeem.slice(0, 10)}${"00".repeat(64)}` as Hex }),
      ).rejects.toMatchObject({ code: "TX_REFUSED" });
      await expect(keys.signTrade(executor, { ...base, to: owner })).rejects.toMatchObject({ code: "TX_REFUSED" });
      await expect(keys.signTrade(executor, { ...base, chainId: 1 })).rejects.toMatchObject({ code: "TX_REFUSED" });
      await expect(keys.signTrade(executor, { ...base, gas: 5_000_000n })).rejects.toMatchObject({
        code: "TX_REFUSED",
      });
      await keys.retire(executor);
      await expect(keys.signTrade(executor, base)).rejects.toMatchObject({ code: "EXECUTOR_CLOSED" });
      await db.close();
    },
  );

  it("signs a redeem naming a stock token only under the owner's attestation for its root, until revoked", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const wallet = privateKeyToAccount(generatePrivateKey());
    let now = Date.now();
    const keys = createExecutorKeys({
      db,
      secret: "s".repeat(40),
      chainId: 4663,
      clock: () => now,
      delegationManager: dm,
      stockTokens: [stockToken],
      payout: null,
    });
    const { executor } = await keys.create("ha_s", wallet.address);
    const r = root(9n);
    const base = {
      to: dm,
      chainId: 4663,
      nonce: 0,
      gas: 500_000n,
      maxFeePerGas: 10n ** 9n,
      maxPriorityFeePerGas: 1n,
      feeBps: 25,
    };
    const stockRedeem = { ...base, data: redeemOf(r, [usdg, stockToken], executor) };
    // Not a stock trade: no attestation needed.
    expect(
      parseTransaction(
        await keys.signTrade(executor, { ...base, data: redeemOf(r, [usdg], executor) }),
      ).to?.toLowerCase(),
    ).toBe(dm);
    await expect(keys.signTrade(executor, stockRedeem)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    const nowS = () => Math.floor(now / 1000);
    const grant = async (o: { by?: typeof wallet; root_hash?: Hex; issued?: number; expires?: number } = {}) => {
      const g = {
        session_id: "s_1",
        root_hash: o.root_hash ?? delegationHash(r),
        issued: o.issued ?? nowS(),
        expires: o.expires ?? nowS() + 1_800,
      };
      const text = stockAttestationText({ agent: "ha_s", executor, ...g });
      return keys.holdStockAttestation(executor, {
        ...g,
        signature: await (o.by ?? wallet).signMessage({ message: text }),
      });
    };
    // Someone else's signature, or one over another agent's text, is not held.
    await expect(grant({ by: privateKeyToAccount(generatePrivateKey()) })).rejects.toMatchObject({
      code: "STOCK_ATTESTATION",
    });
    await expect(grant({ expires: nowS() - 1 })).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    // An attestation for another root does not sign this root's stock redeem.
    await grant({ root_hash: delegationHash(root(10n)), issued: nowS() - 10 });
    await expect(keys.signTrade(executor, stockRedeem)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    await grant({ issued: nowS() - 5 });
    expect(parseTransaction(await keys.signTrade(executor, stockRedeem)).data).toBe(stockRedeem.data);
    // Not again with an older issue time; revoked: no stock redeem signed any more.
    await expect(grant({ issued: nowS() - 6 })).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    expect(await keys.revokeStockAttestation(executor)).toBe(true);
    expect(await keys.revokeStockAttestation(executor)).toBe(false);
    await expect(keys.signTrade(executor, stockRedeem)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    // And expired: a new one signs until its expiry passes.
    now += 2_000;
    await grant({ expires: nowS() + 600 });
    expect(await keys.signTrade(executor, stockRedeem)).toMatch(/^0x02/);
    now += 601_000;
    await expect(keys.signTrade(executor, stockRedeem)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    // A row written into the store by hand (no owner signature) signs nothing.
    await db.query(
      "INSERT INTO app.executor_stock_attestations (executor, session_id, root_hash, issued, expires, signature) " +
        "VALUES ($1, 's_1', $2, $3, $4, '0x00')",
      [executor.toLowerCase(), delegationHash(r).toLowerCase(), nowS() + 1, nowS() + 600],
    );
    await expect(keys.signTrade(executor, stockRedeem)).rejects.toMatchObject({ code: "STOCK_ATTESTATION" });
    await db.close();
  });

  it("records a revoke even when no attestation is held: one issued before it is not taken afterwards", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const now = Date.now();
    const keys = createExecutorKeys({
      db,
      secret: "s".repeat(40),
      chainId: 4663,
      clock: () => now,
      delegationManager: dm,
      stockTokens: [stockToken],
      payout: null,
    });
    const { executor } = await keys.create("ha_r", wallet.address);
    const g = {
      session_id: "s_1",
      root_hash: delegationHash(root(3n)),
      issued: Math.floor(now / 1000) - 30,
      expires: Math.floor(now / 1000) + 600,
    };
    const signature = await wallet.signMessage({ message: stockAttestationText({ agent: "ha_r", executor, ...g }) });
    expect(await keys.revokeStockAttestation(executor)).toBe(false);
    await expect(keys.holdStockAttestation(executor, { ...g, signature })).rejects.toMatchObject({
      code: "STOCK_ATTESTATION",
    });
    await db.close();
  });

  it("does not open a key whose row's owner or agent was rewritten: a refund cannot be steered elsewhere", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const keys = createExecutorKeys({ db, secret: "s".repeat(40), chainId: 4663, clock: Date.now, payout: null });
    const { executor } = await keys.create("ha_o", owner);
    expect(await keys.close(executor)).toBe(true);
    await db.query("UPDATE app.executor_keys SET owner = $2 WHERE address = $1", [
      executor.toLowerCase(),
      "0x00000000000000000000000000000000000000bb",
    ]);
    await expect(keys.signRefund(executor, ask)).rejects.toThrow();
    await db.query("UPDATE app.executor_keys SET owner = $2, agent_id = 'ha_x' WHERE address = $1", [
      executor.toLowerCase(),
      owner,
    ]);
    await expect(keys.signRefund(executor, ask)).rejects.toThrow();
    await db.close();
  });

  it("refuses a redeem whose offsets alias one blob into a huge structure, at once", async () => {
    const db = await openMigratedMemory();
    await migrate(db);
    const keys = createExecutorKeys({
      db,
      secret: "s".repeat(40),
      chainId: 4663,
      clock: Date.now,
      delegationManager: dm,
      payout: null,
    });
    const { executor } = await keys.create("ha_b", owner);
    const w = (n: number) => n.toString(16).padStart(64, "0");
    // One delegation whose 100 caveats all point at one caveat of 8 KB terms, 40 times over.
    const K = 100;
    const T = 8_000;
    const caveatSize = 3 * 32 + 32 + Math.ceil(T / 32) * 32 + 32;
    let ctx = w(0x20) + w(60);
    for (let i = 0; i < 60; i++) ctx += w(60 * 32);
    ctx += w(1) + w(2) + w(0) + w(6 * 32) + w(0) + w(6 * 32 + 32 + K * 32 + caveatSize) + w(K);
    for (let i = 0; i < K; i++) ctx += w(K * 32);
    ctx +=
      w(3) + w(96) + w(96 + 32 + Math.ceil(T / 32) * 32) + w(T) + "ab".repeat(Math.ceil(T / 32) * 32) + w(0) + w(0);
    const n = 40;
    let A = w(n);
    for (let i = 0; i < n; i++) A += w(n * 32);
    A += w(ctx.length / 2) + ctx;
    const B = w(n) + w(0).repeat(n);
    const exec = "00".repeat(64);
    let C = w(n);
    for (let i = 0; i < n; i++) C += w(n * 32);
    C += w(64) + exec;
    const heads = `${w(96)}${w(96 + A.length / 2)}${w(96 + A.length / 2 + B.length / 2)}`;
    const data = `${toFunctionSelector("redeemDelegations(bytes[],bytes32[],bytes[])")}${heads}${A}${B}${C}` as Hex;
    const t0 = performance.now();
    await expect(
      keys.signTrade(executor, {
        to: dm,
        data,
        chainId: 4663,
        nonce: 0,
        gas: 500_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        feeBps: 25,
      }),
    ).rejects.toMatchObject({ code: "TX_REFUSED" });
    expect(performance.now() - t0).toBeLessThan(5_000);
    await db.close();
  });
});
