import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  erc20Abi,
  keccak256,
  maxUint256,
  parseEther,
  parseTransaction,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { payOwed, type PayDeps } from "../../api/league/pay.js";
import { localPlatformSigner } from "../../api/ports/platformSigner.js";
import { openMigratedMemory } from "../../api/ports/store/memory.js";
import type { Db } from "../../api/ports/store/db.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";

/**
 * League payouts on a real chain that reorganises: a payout is decided only on what is
 * FINALITY_BLOCKS deep. At zero confirmations, a transfer that reverted was planned again and paid
 * at a new nonce while a reorg could still mine the first one (the place paid twice), a mined
 * transfer a reorg then dropped was recorded paid (nothing arrived), and a place whose nonce another
 * transaction spent was held for the operator to pay by hand while a reorg could still mine its own.
 */
const SHARE = parseEther("500");
let dn: Devnet;
const reserve = privateKeyToAccount(generatePrivateKey());
const drainer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  dn = await startDevnet();
  for (const a of [reserve, drainer]) await dn.test.setBalance({ address: a.address, value: parseEther("10") });
  // The reserve lets another wallet move its tokens: that wallet can empty it in the block its payout mines in.
  await dn.mined(
    await dn.walletFor(reserve).writeContract({
      address: orbio(),
      abi: erc20Abi,
      functionName: "approve",
      args: [drainer.address, maxUint256],
    }),
  );
});
afterAll(async () => dn?.anvil.stop());

const orbio = (): Address => dn.token("ORBIO");
const balanceOf = (a: Address) =>
  dn.pub.readContract({ address: orbio(), abi: erc20Abi, functionName: "balanceOf", args: [a] });
const mint = async (to: Address, amount: bigint) => {
  const w = await dn.freshWallet(parseEther("1"), [[orbio(), amount]]);
  await dn.mined(
    await dn
      .walletFor(w)
      .writeContract({ address: orbio(), abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
  );
};
const reorg = (depth: number, raws: Hex[]) =>
  dn.pub.request({ method: "anvil_reorg" as never, params: [depth, raws.map((r) => [r, 0])] as never });
const finalize = () => dn.test.mine({ blocks: FINALITY_BLOCKS });

/** A decided season whose place 1 is owed `SHARE` ORBIO to a fresh recipient, paid through `chain`. */
async function owedSeason(chain: PublicClient = dn.pub): Promise<{ db: Db; d: PayDeps; recipient: Address }> {
  const db = await openMigratedMemory("payout-reorg");
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const book = { shares: [SHARE.toString(), "0", "0"], reserve: "0", reserve_after: "0", status: "provisional" };
  await db.query("INSERT INTO app.league_ledgers (season, ledger) VALUES (1, $1)", [JSON.stringify(book)]);
  await db.query(
    "INSERT INTO app.league_payouts (season, place, entry_id, agent_id, recipient, token, amount, status, " +
      "created_at) VALUES (1, 1, 'e1', 1, $1, $2, $3, 'planned', 0)",
    [recipient, orbio(), SHARE.toString()],
  );
  const d = {
    db,
    chain,
    signer: localPlatformSigner(reserve),
    clock: () => Date.now(),
    config: { contracts: { sanctionsList: dn.universe.contracts.sanctionsList } },
  } as unknown as PayDeps;
  return { db, d, recipient };
}

const payout = async (db: Db) =>
  (
    await db.query<{ status: string; raw_tx: Hex | null; tx_hash: Hex | null; why: string | null }>(
      "SELECT status, raw_tx, tx_hash, why FROM app.league_payouts WHERE season = 1 AND place = 1",
    )
  )[0]!;

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The payout's bytes once the pass has stored them and the node's pool holds them (automine off). */
async function untilSent(db: Db): Promise<Hex> {
  const sent = await until("the payout signed", async () => (await payout(db)).raw_tx ?? undefined);
  await until("the payout in the node's pool", () =>
    dn.pub.getTransaction({ hash: keccak256(sent) }).then(
      () => true,
      () => undefined,
    ),
  );
  return sent;
}

/**
 * Place 1's payout signed and waiting in the node's pool (automine off), `ahead` sending what mines before it
 * in the same block (it is given the payout's bytes and the fees now); then that block mined, the pass done and
 * automine back on.
 */
async function minedBehind(ahead: (sent: Hex, fees: { maxFeePerGas: bigint }) => Promise<unknown>) {
  const season = await owedSeason();
  await mint(reserve.address, SHARE);
  await dn.test.setAutomine(false);
  try {
    // The pass signs and sends place 1's transfer, then waits for its receipt.
    const pass = payOwed(season.d);
    const sent = await untilSent(season.db);
    await ahead(sent, await dn.pub.estimateFeesPerGas());
    await dn.test.mine({ blocks: 1 });
    await pass;
    return { ...season, sent };
  } finally {
    await dn.test.setAutomine(true);
  }
}

describe("league payouts across a reorg", () => {
  it(
    "never pays a place twice: a reverted transfer is not planned again until final, and a reorg that mines it " +
      "pays the place once",
    async () => {
      // Ahead of it in the same block (a higher tip): the reserve emptied, so the transfer reverts.
      const { db, d, recipient, sent } = await minedBehind((_, fees) =>
        dn.walletFor(drainer).writeContract({
          address: orbio(),
          abi: erc20Abi,
          functionName: "transferFrom",
          args: [reserve.address, drainer.address, SHARE],
          maxFeePerGas: fees.maxFeePerGas * 10n,
          maxPriorityFeePerGas: fees.maxFeePerGas * 5n,
          // Not estimated: the node estimates on its pending block, where the payout has emptied the reserve.
          gas: 100_000n,
        }),
      );
      expect((await dn.pub.getTransactionReceipt({ hash: keccak256(sent) })).status).toBe("reverted");
      // One block deep: the place stays sent, its bytes unchanged, nothing else signed.
      expect(await payout(db)).toMatchObject({ status: "sent", raw_tx: sent });

      // The reorg: the drain is gone, and the very same transfer mines in the block instead.
      await reorg(1, [sent]);
      // The reserve is topped up: a transfer signed again at a new nonce would pay the place a second time.
      await mint(reserve.address, SHARE);
      await finalize();
      await payOwed(d);
      expect(await payout(db)).toMatchObject({ status: "mined", raw_tx: sent, tx_hash: keccak256(sent) });
      await payOwed(d);
      expect(await balanceOf(recipient)).toBe(SHARE);
      expect(await balanceOf(reserve.address)).toBe(SHARE);
    },
  );

  it("records a place paid only once its transfer is final: one a reorg dropped is sent again, paid once", async () => {
    const { db, d, recipient } = await owedSeason();
    await mint(reserve.address, SHARE);
    await payOwed(d);
    const { raw_tx: sent } = await payout(db);
    expect(await balanceOf(recipient)).toBe(SHARE);
    expect((await payout(db)).status).toBe("sent");

    // A reorg drops the block that held it: nothing reached the recipient.
    await reorg(1, []);
    expect(await balanceOf(recipient)).toBe(0n);
    await finalize();
    // Its nonce is open again at a final block: the same bytes are sent again.
    await payOwed(d);
    expect(await payout(db)).toMatchObject({ status: "sent", raw_tx: sent });
    expect(await balanceOf(recipient)).toBe(SHARE);
    await finalize();
    await payOwed(d);
    expect(await payout(db)).toMatchObject({ status: "mined", raw_tx: sent });
    expect(await balanceOf(recipient)).toBe(SHARE);
    const [ledger] = await db.query<{ ledger: string }>("SELECT ledger FROM app.league_ledgers WHERE season = 1");
    expect(JSON.parse(ledger!.ledger)).toMatchObject({ status: "settled", paid: [SHARE.toString(), "0", "0"] });
  });

  it(
    "holds a place for the operator only once another spend of its nonce is final: a reorg that mines its own " +
      "transfer there instead pays it once, recorded mined",
    async () => {
      // The operator replaces it at its nonce (a self-transfer, a higher fee), mined one block deep.
      const { db, d, recipient, sent } = await minedBehind((raw, fees) =>
        dn.walletFor(reserve).sendTransaction({
          to: reserve.address,
          value: 0n,
          nonce: parseTransaction(raw).nonce!,
          maxFeePerGas: fees.maxFeePerGas * 20n,
          maxPriorityFeePerGas: fees.maxFeePerGas * 10n,
        }),
      );
      // Not held on a block one deep: "pay by hand if nothing arrived" would be true now and wrong after the reorg.
      expect(await payout(db)).toMatchObject({ status: "sent", raw_tx: sent });
      await reorg(1, [sent]);
      await finalize();
      await payOwed(d);
      expect(await payout(db)).toMatchObject({ status: "mined", raw_tx: sent });
      expect(await balanceOf(recipient)).toBe(SHARE);
    },
  );

  it("never holds a place whose own transfer a reorg dropped between two reads: sent again, paid once", async () => {
    let armed = false;
    // The devnet's chain, with a reorg that drops the head block right after the pass reads the wallet's nonce
    // there (a node may reorganise between two calls).
    const racing = new Proxy(dn.pub, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== "getTransactionCount") return value;
        return async (args: { blockNumber?: bigint }) => {
          const n = await (value as (a: unknown) => Promise<number>)(args);
          if (armed && args.blockNumber !== undefined) {
            armed = false;
            await reorg(1, []);
          }
          return n;
        };
      },
    }) as PublicClient;
    const { db, d, recipient } = await owedSeason(racing);
    await mint(reserve.address, SHARE);
    await payOwed(d);
    const { raw_tx: sent } = await payout(db);
    armed = true;
    await payOwed(d);
    expect(armed).toBe(false);
    expect(await payout(db)).toMatchObject({ status: "sent", raw_tx: sent });
    await finalize();
    await payOwed(d);
    await finalize();
    await payOwed(d);
    expect(await payout(db)).toMatchObject({ status: "mined", raw_tx: sent });
    expect(await balanceOf(recipient)).toBe(SHARE);
  });
});
