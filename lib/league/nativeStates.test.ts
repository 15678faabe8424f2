import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { custom, getContractAddress, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startDevnet, type Devnet } from "../../test/helpers/devnet.js";
import { publicClient } from "../chain.js";
import { statesAfter, statesAt } from "./native.js";
import { rng } from "../../test/helpers/rng.js";

/** Runtime code that creates an empty contract on every call (CREATE moves the creator's nonce, no transaction). */
const FACTORY_CODE: Hex = "0x600060006000f05000";

let dn: Devnet;
beforeAll(async () => {
  dn = await startDevnet();
});
afterAll(async () => {
  await dn?.stop();
});

/** A client counting the nonces it is asked for. */
function counting(pub: PublicClient) {
  const calls = { nonces: 0 };
  const client = new Proxy(pub, {
    get(target, key, receiver) {
      if (key === "getTransactionCount")
        return (args: Parameters<PublicClient["getTransactionCount"]>[0]) => {
          calls.nonces++;
          return target.getTransactionCount(args);
        };
      return Reflect.get(target, key, receiver);
    },
  });
  return { calls, client };
}

const ARBOS = "0x00000000000000000000000000000000000a4b05";

/** The devnet's client with each full block's raw answer passed through `edit` first, counting nonces asked for. */
function editedBlocks(edit: (block: { transactions: Record<string, unknown>[] }) => void) {
  let id = 0;
  const transport = custom({
    async request({ method, params }: { method: string; params?: unknown[] }) {
      const res = await fetch(dn.anvil.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
      });
      const body = (await res.json()) as { result?: { transactions: Record<string, unknown>[] }; error?: object };
      if (body.error) throw Object.assign(new Error("node error"), body.error);
      if (method === "eth_getBlockByNumber" && params?.[1] === true && body.result?.transactions.length)
        edit(body.result);
      return body.result;
    },
  });
  return counting(publicClient({ chain: dn.chain, transport, cacheTime: 0 }));
}

describe("the native scan's states from the new blocks (issue 29 point 6)", () => {
  it("equal every nonce and balance probed, through sends, contract creations and EIP-7702 delegations", async () => {
    const r = rng(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
    const eoas = Array.from({ length: 5 }, () => privateKeyToAccount(generatePrivateKey()));
    // Wallets that traded before (their nonce moved), and one that never sent anything (nonce 0: probed each time).
    for (const [i, a] of eoas.entries()) {
      await dn.test.setBalance({ address: a.address, value: 10n ** 20n });
      if (i > 0) await dn.test.setNonce({ address: a.address, nonce: 40 + i });
    }
    // A factory in the league's set (its nonce moves with no transaction of its own) and an account it creates (with
    // empty code: nonce 0, then 1, and no code either time).
    const factory: Address = "0x00000000000000000000000000000000000fac70";
    await dn.test.setCode({ address: factory, bytecode: FACTORY_CODE });
    const child = getContractAddress({ from: factory, nonce: 1n });
    // An account delegated to the factory's code by EIP-7702: calls to it create contracts from it.
    const delegated = eoas[4]!;
    const sponsor = dn.walletFor(dn.deployer);
    const addresses = [...eoas.map((a) => a.address), factory, child].map((a) => a.toLowerCase());
    let from = (await dn.pub.getBlockNumber()) + 1n;
    let quiet = 0;
    await dn.test.setAutomine(false);
    try {
      for (let round = 0; round < 20; round++) {
        const hashes: Hex[] = [];
        for (let i = Math.floor(r() * 4); i > 0; i--) {
          const kind = pick(["send", "fund", "create", "delegate", "undelegate", "call-delegated"] as const);
          const someone = pick(eoas.slice(0, 4));
          if (kind === "send")
            hashes.push(await dn.walletFor(someone).sendTransaction({ to: pick(eoas).address, value: 1_000n }));
          if (kind === "fund") hashes.push(await sponsor.sendTransaction({ to: pick(eoas).address, value: 7n }));
          if (kind === "create") hashes.push(await sponsor.sendTransaction({ to: factory, data: "0x" }));
          if (kind === "delegate" || kind === "undelegate") {
            // Signed by the authority, carried by the sponsor: the authority's nonce moves, it sends nothing. Undone
            // (delegated to the zero address), the account has no code: only the authorization says its nonce moved.
            const nonce = await dn.pub.getTransactionCount({ address: delegated.address, blockTag: "pending" });
            const contractAddress = kind === "delegate" ? factory : zeroAddress;
            const authorization = await dn.walletFor(delegated).signAuthorization({ contractAddress, nonce });
            hashes.push(
              await sponsor.sendTransaction({ authorizationList: [authorization], to: sponsor.account.address }),
            );
          }
          if (kind === "call-delegated")
            hashes.push(await sponsor.sendTransaction({ to: delegated.address, data: "0x" }));
        }
        await dn.test.mine({ blocks: 1 + Math.floor(r() * 2) });
        for (const hash of hashes) await dn.mined(hash);
        const to = await dn.pub.getBlockNumber();
        const before = await statesAt(dn.pub, addresses, from - 1n);
        const probed = counting(dn.pub);
        const got = await statesAfter(probed.client, addresses, from, to, before);
        expect(got, `round ${round}: blocks ${from}-${to}`).toEqual(await statesAt(dn.pub, addresses, to));
        // Not every nonce was probed: only senders, authorities, accounts with code and those at nonce 0.
        expect(probed.calls.nonces).toBeLessThan(addresses.length);
        if (probed.calls.nonces <= 3) quiet++;
        from = to + 1n;
      }
    } finally {
      await dn.test.setAutomine(true);
    }
    expect(quiet).toBeGreaterThan(0);
  });

  it("take Nitro's internal transaction as plain; probe every nonce where authorizations are left out", async () => {
    const x = privateKeyToAccount(generatePrivateKey());
    const others = Array.from({ length: 4 }, () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase());
    for (const a of [x.address, ...others]) await dn.test.setNonce({ address: a as Address, nonce: 44 });
    const addresses = [x.address.toLowerCase(), ...others];
    const sponsor = dn.walletFor(dn.deployer);
    const from = (await dn.pub.getBlockNumber()) + 1n;
    // x delegates and undelegates in the range: only its authorizations say that its nonce moved.
    for (const contractAddress of ["0x00000000000000000000000000000000000fac70", zeroAddress] as const) {
      const nonce = await dn.pub.getTransactionCount({ address: x.address });
      const authorization = await dn.walletFor(x).signAuthorization({ contractAddress, nonce });
      await dn.mined(
        await sponsor.sendTransaction({ authorizationList: [authorization], to: sponsor.account.address }),
      );
    }
    const to = await dn.pub.getBlockNumber();
    const before = await statesAt(dn.pub, addresses, from - 1n);
    const truth = await statesAt(dn.pub, addresses, to);
    // Every block of chain 4663 starts with ArbOS's internal transaction (type 0x6a, which viem does not name).
    const nitro = editedBlocks((b) => b.transactions.unshift({ ...b.transactions[0], type: "0x6a", from: ARBOS }));
    expect(await statesAfter(nitro.client, addresses, from, to, before)).toEqual(truth);
    expect(nitro.calls.nonces).toBe(1);
    // A node that leaves out the authorizations: every nonce is probed, never x's kept.
    const stripped = editedBlocks((b) => {
      for (const t of b.transactions) delete t.authorizationList;
    });
    expect(await statesAfter(stripped.client, addresses, from, to, before)).toEqual(truth);
    expect(stripped.calls.nonces).toBe(addresses.length);
  });

  it("probe every nonce where the node takes no state override, with the same answer", async () => {
    const eoas = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase());
    for (const a of eoas) await dn.test.setNonce({ address: a as Address, nonce: 9 });
    const from = (await dn.pub.getBlockNumber()) + 1n;
    await dn.test.mine({ blocks: 2 });
    const to = await dn.pub.getBlockNumber();
    const before = await statesAt(dn.pub, eoas, from - 1n);
    const refusing = counting(dn.pub);
    const node = new Proxy(refusing.client, {
      get: (target, key, receiver) =>
        key === "call"
          ? async () => {
              throw new Error("state override is not supported");
            }
          : Reflect.get(target, key, receiver),
    });
    expect(await statesAfter(node, eoas, from, to, before)).toEqual(await statesAt(dn.pub, eoas, to));
    expect(refusing.calls.nonces).toBe(eoas.length);
  });
});
