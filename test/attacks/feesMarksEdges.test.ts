import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { MAX_OPEN_CHALLENGES, MAX_TRIED_OTHERS } from "../../api/auth/signin.js";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi, priceFeedAbi } from "../../abis/fixtures.js";
import { MAX_SLIPPAGE_BPS, PRICE_TOLERANCE_BPS } from "../../cosigner/index.js";
import { readMarkSource } from "../../lib/markSource.js";
import { serveApi, type Api } from "../helpers/api.js";
import { executorSigns, tryGrantedSession, type Granted } from "../helpers/sessions.js";
import { freshenMarket, startStack, withTwapHistory, type Stack } from "../helpers/stack.js";

/**
 * Review of issue 25 §1, §3 and §6 with an attacker's eyes, on the devnet with the real contracts
 * over HTTP. Each `it` is one attempt; a failing one is a hole (see the report on the branch).
 */
let stack: Stack;
const apis: Api[] = [];
const launch = () => stack.dn.universe.devnet!.fixtures.launchToken as Address;
const launchOf = (a: Address) =>
  stack.dn.pub.readContract({ address: launch(), abi: erc20Abi, functionName: "balanceOf", args: [a] });

beforeAll(async () => {
  stack = await startStack({ store: "postgres", before: withTwapHistory });
}, 180_000);
afterAll(async () => {
  for (const a of apis) await a.close();
  await stack?.stop();
});

/**
 * §3: the owner-signed mark is the curve's ARITHMETIC time-weighted mean over 30 minutes, and the
 * grant only asks that the spot sit within 125 bps of it. A short spike moves an arithmetic mean a
 * lot for little cost: ×4 held 4 minutes (then sold back down) lifts the 30-minute mean ~40 %,
 * and the spot is parked at that mean for the grant. The session is then priced at a mark ~40 %
 * over the price that held for 26 of the 30 minutes; the whale unwinds, pushes to the mark, and
 * the executor's buy is co-signed at it.
 */
describe("§3 an owner-signed curve mark lifted by a short spike", () => {
  const curve = async () => {
    const [, , , , virtualEth, virtualToken] = await stack.dn.pub.readContract({
      address: stack.dn.universe.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "curves",
      args: [launch()],
    });
    return { virtualEth, virtualToken };
  };
  const ethUsd = async () =>
    Number(
      (
        await stack.dn.pub.readContract({
          address: stack.dn.universe.tokens.ETH!.feed!,
          abi: priceFeedAbi,
          functionName: "latestRoundData",
        })
      )[1],
    ) / 1e8;
  const sqrt = (x: bigint) => BigInt(Math.floor(Math.sqrt(Number(x))));

  it("spike ×4 for 4 minutes, park the spot at the mean, grant, unwind, push to the mark, trade: the owner's loss " +
    "stays in the co-signer's bound or nothing is granted or traded", async () => {
    const { dn, agent } = stack;
    const lp = dn.universe.contracts.launchpad;
    const whale = await dn.freshWallet(parseEther("500"));
    const w = dn.walletFor(whale);
    const buy = async (wei: bigint) =>
      expect(
        (
          await dn.mined(
            await w.writeContract({
              address: lp,
              abi: launchpadAbi,
              functionName: "buy",
              args: [launch(), 0n, whale.address],
              value: wei,
            }),
          )
        ).status,
      ).toBe("success");
    const sell = async (amount: bigint) => {
      await dn.mined(
        await w.writeContract({ address: launch(), abi: erc20Abi, functionName: "approve", args: [lp, amount] }),
      );
      expect(
        (
          await dn.mined(
            await w.writeContract({
              address: lp,
              abi: launchpadAbi,
              functionName: "sell",
              args: [launch(), amount, 0n, whale.address],
            }),
          )
        ).status,
      ).toBe("success");
    };
    // Sell tokens until the curve's virtual ETH is `targetEth` (constant product: vE·vT holds).
    const sellTo = async (targetEth: bigint) => {
      const s = await curve();
      const vT = (s.virtualEth * s.virtualToken) / targetEth;
      await sell(vT - s.virtualToken);
    };
    const before = await curve();
    const fairEth = Number(before.virtualEth) / Number(before.virtualToken);
    const fairUsd = fairEth * (await ethUsd());

    // The spike: virtual ETH doubled (price ×4, the curve's 1.5 % fee off the buy), held 4 minutes.
    await buy((before.virtualEth * 1000n) / 985n);
    await freshenMarket(dn);
    await freshenMarket(dn);
    const src = { kind: "curve" as const, launchpad: lp.toLowerCase() as Address };
    const read = await readMarkSource(
      dn.pub,
      src,
      { address: launch(), decimals: 18 },
      { poolManager: dn.universe.contracts.poolManager, launchpad: lp, againstDecimals: () => 18 },
      125,
    );
    // The window's arithmetic time-weighted mean, from the steps the reader saw (what the grant signed before the fix).
    const { first, steps, from, to } = read!.steps;
    const inside = steps.filter((x) => x.ts > from && x.ts < to);
    const mean =
      [{ ts: from, price: first }, ...inside].reduce(
        (sum, x, i, all) => sum + x.price * ((all[i + 1]?.ts ?? to) - x.ts),
        0,
      ) /
      (to - from);
    expect(mean / fairEth).toBeGreaterThan(1.3);
    // Park the spot at the (now lifted) mean: spot and mean agree within the band.
    const now = await curve();
    await sellTo(sqrt((now.virtualEth * now.virtualEth * BigInt(Math.round((mean / read!.spot) * 1e6))) / 1_000_000n));

    const terms = {
      tokens: ["ETH", launch()],
      accept_risks: ["NO_INDEPENDENT_MARK"],
      expires_in_s: 7_200,
      max_trade_usd: 50,
      max_day_usd: 120,
    };
    // NO_MARK for a price not read yet (the indexer trails the whale's last trade) is asked again; NO_MARK for what
    // the price did (the mark's guard) is an answer.
    const unread = (x: Awaited<ReturnType<typeof tryGrantedSession>>) =>
      "refused" in x &&
      x.refused.code === "NO_MARK" &&
      /no fresh price|no spot price/.test(x.refused.json.error.message);
    let g = await tryGrantedSession(stack, terms);
    for (const deadline = Date.now() + 30_000; unread(g) && Date.now() < deadline; ) {
      await new Promise((ok) => setTimeout(ok, 1_000));
      g = await tryGrantedSession(stack, terms);
    }
    // Unwind everything the whale holds: the curve is back at the fair price.
    await sell(await launchOf(whale.address));
    if ("refused" in g) {
      // Refused for what the price did: nothing granted, nothing to trade. The hole is closed today by the mark's
      // guard (the spike kept the price off its 30-minute median for too much of the window): any other refusal
      // (still unread, a shallow source, a changed field) is not that, and a pass would say nothing.
      expect({ status: g.refused.status, code: g.refused.code }).toEqual({ status: 503, code: "NO_MARK" });
      expect(g.refused.json.error.message).toMatch(/^no mark for .* to sign: .*its 30-minute median/);
      return;
    }
    const granted = g as Granted;
    const mark = granted.start.sign.delegation.binding.marks[launch().toLowerCase()].usd as number;

    // Push to the signed mark (the whale's own ETH, sold back after), and let the executor buy.
    const s = await curve();
    const markEth = mark / (await ethUsd());
    await buy(
      ((sqrt(
        (s.virtualEth *
          s.virtualEth *
          BigInt(Math.round((markEth / (Number(s.virtualEth) / Number(s.virtualToken))) * 1e6))) /
          1_000_000n,
      ) -
        s.virtualEth) *
        1000n) /
        985n,
    );
    const tokens0 = await launchOf(granted.wallet.address);
    const eth0 = await dn.pub.getBalance({ address: granted.wallet.address });
    const trade = await agent.post(
      "/live/session/trade",
      { session_id: granted.sessionId, token_in: "ETH", token_out: launch(), notional_usd: 50 },
      granted.executorKey,
    );
    let lossBps = 0;
    let bound = 0;
    if (trade.status === 200) {
      bound = trade.json.fee_bps + MAX_SLIPPAGE_BPS + PRICE_TOLERANCE_BPS;
      const sent = await agent.post(
        "/live/submit",
        { raw_tx: await executorSigns(stack, granted.executor, trade.json.tx) },
        granted.executorKey,
      );
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      expect((await dn.mined(sent.json.tx_hash)).status).toBe("success");
      const paidUsd =
        (Number(eth0 - (await dn.pub.getBalance({ address: granted.wallet.address }))) / 1e18) * (await ethUsd());
      const gotUsd = (Number((await launchOf(granted.wallet.address)) - tokens0) / 1e18) * fairUsd;
      lossBps = Math.round((1 - gotUsd / paidUsd) * 10_000);
    }
    await sell(await launchOf(whale.address));
    expect(
      trade.status === 200 ? lossBps : "refused",
      `mark $${mark} vs fair $${fairUsd.toPrecision(6)}; loss ${lossBps} bps, bound ${bound} bps; ` +
        `${JSON.stringify(trade.json.error ?? {})}`,
    ).toSatisfy((x: number | string) => x === "refused" || (x as number) <= bound);
  }, 120_000);
});

/**
 * §6: per-client limits behind a configured proxy (X-Forwarded-For), each attempt on its own API
 * instance (its own in-memory buckets) over the stack's store and chain.
 */
describe("§6 client keying and sign-in", () => {
  const proxied = async (clock?: () => number) => {
    const api = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: stack.store.db,
      clock,
      limiter: new RateLimiter(clock),
      config: { trustedProxyHeader: "x-forwarded-for", trustedProxies: ["127.0.0.1", "::1", "::ffff:127.0.0.1"] },
    });
    apis.push(api);
    return (method: string, path: string, from: string, body?: unknown, headers: Record<string, string> = {}) =>
      api.call(method, `/api/v1${path}`, body, { "x-forwarded-for": from, ...headers });
  };

  it(
    "a 6to4 host (one IPv4 address, 2002:a.b.c.d::/48) rotating its subnet hextet is one client: the " +
      "failed-authentication lockout holds",
    async () => {
      const call = await proxied();
      const codes: number[] = [];
      // 203.0.113.77 is 2002:cb00:714d::/48 in 6to4: 65,536 /64s from one IPv4 address.
      for (let i = 0; i < 22; i++)
        codes.push(
          (
            await call("GET", "/auth/me", `2002:cb00:714d:${(i + 1).toString(16)}::1`, undefined, {
              authorization: "Bearer pit_w_nope",
            })
          ).status,
        );
      expect(codes.slice(20)).toEqual([429, 429]);
    },
  );

  it(
    "a verify without a nonce that leaves by another address (dual stack: IPv4 ask, IPv6 verify) finds the wallet's " +
      "own challenge among others' up to the bound; past it, the refusal says to send the nonce",
    async () => {
      // SPEC makes the nonce optional; each candidate costs a signature recovery, so only the
      // MAX_TRIED_OTHERS newest of other clients' challenges are tried (api/auth/signin.ts).
      let t = Date.now();
      const call = await proxied(() => t);
      const w = privateKeyToAccount(generatePrivateKey());
      const ask = async (from: string) => {
        const r = await call("POST", "/auth/challenge", from, { address: w.address });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        t += 1_000; // issued_at is in seconds: each newer than the last
        return r.json;
      };
      const older = await ask("198.51.100.10");
      const own = await ask("198.51.100.10");
      // Others crowd in, five per client (each client's cap): with `own` they fill the bound exactly.
      for (let i = 0; i < MAX_TRIED_OTHERS - 1; i++) await ask(`203.0.113.${10 + Math.floor(i / MAX_OPEN_CHALLENGES)}`);
      const verify = (ch: { message: string; nonce: string }, withNonce: boolean) =>
        w.signMessage({ message: ch.message }).then((signature) =>
          call("POST", "/auth/verify", "2001:db8:5:5::1", {
            address: w.address,
            signature,
            ...(withNonce ? { nonce: ch.nonce } : {}),
          }),
        );
      const within = await verify(own, false);
      expect(within.status, JSON.stringify(within.json)).toBe(200);
      // One more from yet another client: `older` is now past the bound.
      await ask("203.0.113.99");
      const past = await verify(older, false);
      expect(past.status).toBe(401);
      expect(past.json.error.code).toBe("BAD_SIGNATURE");
      expect(past.json.error.message).toContain("nonce");
      // The careful user's way (the SDK's): the nonce names it, however many are open.
      const named = await verify(older, true);
      expect(named.status, JSON.stringify(named.json)).toBe(200);
    },
  );

  it(
    "with the nonce (as @pit/sdk's signIn sends it), the same crowding changes nothing: the wallet's own challenge " +
      "is used",
    async () => {
      const call = await proxied();
      const w = privateKeyToAccount(generatePrivateKey());
      const ch = await call("POST", "/auth/challenge", "198.51.100.11", { address: w.address });
      await new Promise((ok) => setTimeout(ok, 1_100));
      for (let i = 0; i < 5; i++)
        expect((await call("POST", "/auth/challenge", "203.0.113.9", { address: w.address })).status).toBe(200);
      const v = await call("POST", "/auth/verify", "2001:db8:5:6::1", {
        address: w.address,
        signature: await w.signMessage({ message: ch.json.message }),
        nonce: ch.json.nonce,
      });
      expect(v.status, JSON.stringify(v.json)).toBe(200);
    },
  );

  it("one subscriber's /56 (256 /64s, a home line) cannot spend the instance-wide sign-in bucket and shut sign-in " +
    "for everyone", async () => {
    // The clock stands still: the attacker's 100 /64s at 0.1/s each (10/s) match the overall refill, so what
    // one instant shows (the bucket empty) holds for as long as the attacker keeps sending.
    const t = Date.now();
    const call = await proxied(() => t);
    // 101 /64s of 2001:db8:77::/56, ten bad verify bodies each (each /64's own burst), in parallel batches.
    const jobs: (() => Promise<unknown>)[] = [];
    for (let n = 0; n < 101; n++)
      for (let i = 0; i < 10; i++)
        jobs.push(() => call("POST", "/auth/verify", `2001:db8:77:${n.toString(16)}::1`, {}));
    for (let i = 0; i < jobs.length; i += 50) await Promise.all(jobs.slice(i, i + 50).map((j) => j()));
    const w = privateKeyToAccount(generatePrivateKey());
    const other = await call("POST", "/auth/challenge", "198.51.100.99", { address: w.address });
    expect(other.status, JSON.stringify(other.json)).toBe(200);
  }, 60_000);
});
