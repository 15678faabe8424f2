import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../lib/root.js";
import {
  encodeFunctionData,
  erc20Abi,
  getAddress,
  keccak256,
  parseEther,
  parseUnits,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { priceFeedAbi, sanctionsListAbi } from "../../abis/fixtures.js";
import { DEVNET_MNEMONIC } from "../../lib/config.js";
import { calendarAt, SEASON_S, type season as seasonAt } from "../../lib/league/calendar.js";
import { verifyLeague } from "../../scripts/league-verify.js";
import { freshenMarket, postAnswer, startStack, untilFinal, type Stack } from "../helpers/stack.js";
import { serveApi } from "../helpers/api.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { poolKeyOf, routerSwap } from "../helpers/trades.js";
import { registerAgent as registerPartner } from "../helpers/league.js";
import { COPY_WINDOW_S } from "../../lib/league/copy.js";
import { recordReview } from "../../api/league/index.js";
import { paperPool } from "../../lib/paperFill.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";

/**
 * A whole league season on a devnet with the clock driven (issue 18): twelve owners enter the
 * prize board, trade through the service on two days (and once outside it), two are linked by a
 * transfer, two share a configured exchange (a hub) and stay apart, three more whose wallets one
 * owner funded in plain ETH are one cluster (issue 29: links from traces), one loses its token's mark,
 * one is sanctioned, one never confirms, one is a house agent. At the end the settler decides
 * once, pays the top three eligible clusters from the reserve, the treasury shows the payouts,
 * and `league:verify` recomputes every row from the chain alone.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
const fresh = () => privateKeyToAccount(generatePrivateKey());
const exchange = fresh();
const house: number[] = [];
const RESERVE = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: 4 }).address;

let stack: Stack;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const chainNow = async () => Number((await stack.dn.pub.getBlock()).timestamp);

/** Moves the chain and the service's clock to `ts` together. */
async function warp(ts: number) {
  const { dn } = stack;
  await dn.test.setNextBlockTimestamp({ timestamp: BigInt(ts) });
  await dn.test.mine({ blocks: 1 });
  offsetMs = ts * 1000 - Date.now();
}

/** Posts every feed's answer again (fresh marks), ETH at `eth` when given, skipping `skip`; the indexer holds them. */
async function postFeeds(o: { eth?: number; skip?: string[] } = {}) {
  const { dn } = stack;
  for (const [sym, t] of Object.entries(dn.universe.tokens)) {
    if (!t.feed || sym === "WETH" || o.skip?.includes(sym)) continue;
    const [, answer] = await dn.pub.readContract({
      address: t.feed,
      abi: priceFeedAbi,
      functionName: "latestRoundData",
    });
    const next = sym === "ETH" && o.eth ? BigInt(o.eth) * 10n ** 8n : answer;
    await postAnswer(dn, t.feed, next);
  }
  // Marks are the indexer's: whatever reads them next (a hosted tick, a paper order) must see these rounds, not
  // the stale ones before them (a loaded full run once ticked first and held the practice agent's day-1 trade).
  await stack.ix.waitFor(await dn.pub.getBlockNumber());
}

const registerAgent = (owner: Address, wallet: Address, symbol: string) =>
  registerPartner(stack.dn, owner, wallet, symbol);

async function transfer(from: Account, token: Address, to: Address, amount: bigint) {
  const { dn } = stack;
  await dn.mined(
    await dn
      .walletFor(from)
      .writeContract({ address: token, abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
  );
}

/** Sells ETH for USDG through the service (prepare, sign, submit) and waits for the watcher's outcome. */
async function sell(a: Account, key: string, usd: number): Promise<Hex> {
  const { agent, dn } = stack;
  const p = await agent.post(
    "/live/prepare",
    { wallet: a.address, token_in: "ETH", token_out: "USDG", notional_usd: usd },
    key,
  );
  expect(p.status, p.text).toBe(200);
  const s = await agent.post("/live/submit", { raw_tx: await agent.sign(a, p.json.tx) }, key);
  expect(s.status, s.text).toBe(200);
  await dn.mined(s.json.tx_hash);
  for (let i = 0; i < 200; i++) {
    const t = (await agent.get("/me/trades", key)).json.trades.find(
      (x: { tx_hash: string }) => x.tx_hash === s.json.tx_hash,
    );
    if (t?.status === "mined") return s.json.tx_hash;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`trade ${s.json.tx_hash} never recorded as mined`);
}

type Player = {
  n: number;
  wallet: Account;
  owner: Account;
  agentWallet: Address;
  id: number;
  key: string;
  entry: string;
};
const players: Player[] = [];
/** Wallets that trade one after the other do so this far apart: more than the copy-trading window. */
const APART_S = COPY_WINDOW_S + 100;
const P = (n: number) => players[n - 1]!;
let season: ReturnType<typeof seasonAt>;

/** Player n enters the prize board with its owner's signed statement. */
async function enterPrize(n: number, wallet: Account, owner: Account) {
  const agentWallet = fresh().address;
  const id = await registerAgent(owner.address, agentWallet, `L${n}`);
  const key = await stack.agent.signIn(wallet);
  const st = await stack.agent.post("/league/statement", { agent_id: id }, key);
  expect(st.status, st.text).toBe(200);
  const r = await stack.agent.post(
    "/league/enter",
    { agent_id: id, nonce: st.json.nonce, signature: await owner.signMessage({ message: st.json.message }) },
    key,
  );
  expect(r.status, r.text).toBe(201);
  players.push({ n, wallet, owner, agentWallet, id, key, entry: r.json.entry_id });
}

beforeAll(async () => {
  stack = await startStack({
    clock,
    before: freshenMarket,
    config: {
      league: {
        hubs: [exchange.address],
        houseAgents: house,
        reserveWallet: RESERVE,
        signerUrl: null,
        reserveAgent: null,
        prizeCapUsd: 1_000,
        ceilingSeasons: 4,
      },
    },
    league: { settleIntervalMs: 0, cacheMs: 0 },
    hostedScheduler: { intervalMs: 0 },
  });
  const { dn } = stack;
  offsetMs = (await chainNow()) * 1000 - Date.now();
  season = calendarAt(await chainNow()).next;
  const usdg = dn.token("USDG");
  // Twelve owners, each trading with its own wallet; prizes go to each agent's own wallet.
  for (let n = 1; n <= 12; n++) {
    const wallet = await dn.freshWallet(parseEther("5"), [[usdg, parseUnits("100", 6)]]);
    if (n === 12) {
      const agentWallet = fresh().address;
      const key = await stack.agent.signIn(wallet);
      // Entered without the owner's statement (the owner's key is the wallet's only here: the wallet is the owner):
      // unconfirmed.
      const r = await stack.agent.post(
        "/league/enter",
        { agent_id: await registerAgent(wallet.address, agentWallet, "L12B") },
        key,
      );
      expect(r.status, r.text).toBe(201);
      expect(r.json.confirmed).toBe(false);
      players.push({ n, wallet, owner: wallet, agentWallet, id: r.json.agent_id, key, entry: r.json.entry_id });
      continue;
    }
    await enterPrize(n, wallet, fresh());
  }
  // Owner 13 funds its own trading wallet and those of agents 14 and 15 (other owners on paper) in
  // plain ETH: no token moves between them, only native transfers.
  const ring = fresh();
  await dn.test.setBalance({ address: ring.address, value: parseEther("20") });
  for (const n of [13, 14, 15]) {
    const wallet = fresh();
    await dn.mined(await dn.walletFor(ring).sendTransaction({ to: wallet.address, value: parseEther("5") }));
    await enterPrize(n, wallet, n === 13 ? ring : fresh());
  }
  house.push(P(11).id);
  // Owner 9 sends owner 8's trading wallet some USDG: one owner cluster.
  await dn.test.setBalance({ address: P(9).owner.address, value: parseEther("1") });
  await dn.mined(
    await dn.walletFor(dn.deployer).writeContract({
      address: usdg,
      abi: [
        {
          type: "function",
          name: "mint",
          stateMutability: "nonpayable",
          inputs: [{ type: "address" }, { type: "uint256" }],
          outputs: [],
        },
      ],
      functionName: "mint",
      args: [P(9).owner.address, parseUnits("10", 6)],
    }),
  );
  await transfer(P(9).owner, usdg, P(8).wallet.address, parseUnits("5", 6));
  // A configured exchange funds wallets 3 and 4: a hub never links them.
  await dn.test.setBalance({ address: exchange.address, value: parseEther("1") });
  await dn.mined(
    await dn.walletFor(dn.deployer).writeContract({
      address: usdg,
      abi: [
        {
          type: "function",
          name: "mint",
          stateMutability: "nonpayable",
          inputs: [{ type: "address" }, { type: "uint256" }],
          outputs: [],
        },
      ],
      functionName: "mint",
      args: [exchange.address, parseUnits("10", 6)],
    }),
  );
  await transfer(exchange, usdg, P(3).wallet.address, parseUnits("1", 6));
  await transfer(exchange, usdg, P(4).wallet.address, parseUnits("1", 6));
  // Wallet 1 also runs a hosted paper agent on the practice board (owner 1 signs its statement).
  const h = await stack.agent.post(
    "/hosted",
    {
      brain: "rule",
      params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 },
      interval_s: 300,
      pairs: ["ETH/USDG"],
      limits: { max_trade_usd: 1000, max_day_usd: 5000, max_position_usd: 8000 },
    },
    P(1).key,
  );
  expect(h.status, h.text).toBe(201);
  practiceAgent = h.json.id;
  const st = await stack.agent.post("/league/statement", { agent_id: P(1).id, hosted_id: practiceAgent }, P(1).key);
  expect(st.json.message).not.toContain("Eligibility:");
  const e = await stack.agent.post(
    "/league/enter",
    {
      agent_id: P(1).id,
      hosted_id: practiceAgent,
      nonce: st.json.nonce,
      signature: await P(1).owner.signMessage({ message: st.json.message }),
    },
    P(1).key,
  );
  expect(e.status, e.text).toBe(201);
  expect(e.json).toMatchObject({ board: "practice", kind: "hosted", confirmed: null });
  // Wallets 2 and 3 also enter their exchange accounts on the practice board (issue 29 point 5).
  expect(codeOf(await practiceOrder(2, { token_in: "USDG", token_out: "ETH", notional_usd: 100 }))).toEqual([
    404,
    "NOT_ENTERED",
  ]);
  for (const n of [2, 3]) {
    const ps = await stack.agent.post("/league/statement", { agent_id: P(n).id, board: "practice" }, P(n).key);
    expect(ps.json.entrant).toMatch(/^practice board: account \d+$/);
    const pe = await stack.agent.post(
      "/league/enter",
      {
        agent_id: P(n).id,
        board: "practice",
        nonce: ps.json.nonce,
        signature: await P(n).owner.signMessage({ message: ps.json.message }),
      },
      P(n).key,
    );
    expect(pe.status, pe.text).toBe(201);
    expect(pe.json).toMatchObject({ board: "practice", kind: "account", from_season: season.number });
    accountEntry.push(pe.json.entry_id);
  }
  // Before its first season an account's paper order is refused, with why.
  const early = await practiceOrder(2, { token_in: "USDG", token_out: "ETH", notional_usd: 100 });
  expect(codeOf(early)).toEqual([409, "SEASON_CLOSED"]);
  expect(early.json.error).toMatchObject({ why: expect.any(String), season: season.number });
}, 300_000);
let practiceAgent: string;
/** Mints ORBIO to `to` (the devnet's deployer may): answers the mined transaction's hash. */
async function mintOrbio(to: Address, amount: bigint): Promise<Hex> {
  const { dn } = stack;
  const hash = await dn.walletFor(dn.deployer).writeContract({
    address: dn.token("ORBIO"),
    abi: [
      {
        type: "function",
        name: "mint",
        stateMutability: "nonpayable",
        inputs: [{ type: "address" }, { type: "uint256" }],
        outputs: [],
      },
    ],
    functionName: "mint",
    args: [to, amount],
  });
  await dn.mined(hash);
  return hash;
}
/** The practice entries of wallets 2 and 3's exchange accounts. */
const accountEntry: string[] = [];
const codeOf = (r: { status: number; json: any }) => [r.status, r.json.error?.code];
/** A paper order of wallet n's exchange account on the practice board. */
const practiceOrder = (n: number, body: Record<string, unknown>) =>
  stack.agent.post("/league/practice/order", body, P(n).key);
const runTicks = () => stack.api.app.services.hosted.scheduler.runDue();
/** The practice agent's newest log rows. */
const practiceLogs = async () =>
  (await stack.agent.get(`/hosted/${practiceAgent}/logs`, P(1).key)).json.rows as Record<string, unknown>[];
afterAll(() => stack?.stop());

let account3Eth = "";
/**
 * Day 1's paper orders of the two accounts: account 2 buys $2,000 of ETH at the quoter's output (its answer
 * shows the fill and the book), account 3 buys $500; orders outside the practice board's division, of an
 * unknown token and beyond the book are refused.
 */
async function paperOrdersDay1() {
  const { dn } = stack;
  // The marks are the indexer's: it has the feeds' new rounds first.
  await stack.ix.waitFor(await dn.pub.getBlockNumber());
  const buy = await practiceOrder(2, { token_in: "USDG", token_out: "ETH", notional_usd: 2_000 });
  expect(buy.status, buy.text).toBe(200);
  const usdgIn = parseUnits("2000", 6);
  expect(buy.json).toMatchObject({
    entry_id: accountEntry[0],
    season: season.number,
    fill: { token_in: "USDG", token_out: "ETH", amount_in: usdgIn.toString(), fee_class: "major", fee_bps: 25 },
    book: { USDG: { atoms: parseUnits("8000", 6).toString() } },
    trades: 1,
  });
  // Filled at the V4Quoter's output at its block, after the fee a live trade pays.
  const pool = paperPool(stack.api.config, stack.api.config.tokens.USDG!, stack.api.config.tokens.ETH!)!;
  const fee = (usdgIn * 25n) / 10_000n;
  const quoted = await quoteExactInputSingle(
    dn.pub,
    dn.universe.contracts.v4Quoter,
    pool,
    pool.currency0.toLowerCase() === stack.api.config.tokens.USDG!.address.toLowerCase(),
    usdgIn - fee,
    BigInt(buy.json.fill.block),
  );
  expect(buy.json.fill).toMatchObject({ amount_out: quoted.toString(), fee: fee.toString() });
  expect(buy.json.book.ETH.atoms).toBe(quoted.toString());
  const small = await practiceOrder(3, { token_in: "USDG", token_out: "ETH", notional_usd: 500 });
  expect(small.status, small.text).toBe(200);
  account3Eth = small.json.book.ETH.atoms;
  // Another division: WETH, a pair not against USDG, an address that is no practice asset.
  for (const [token_in, token_out] of [
    ["USDG", "WETH"],
    ["ETH", "WBTC"],
    ["USDG", "0x00000000000000000000000000000000000000a1"],
  ])
    expect(codeOf(await practiceOrder(2, { token_in, token_out, notional_usd: 10 }))).toEqual([409, "LEAGUE_DIVISION"]);
  expect(codeOf(await practiceOrder(2, { token_in: "USDG", token_out: "NOPE", notional_usd: 10 }))).toEqual([
    404,
    "NOT_FOUND",
  ]);
  // Bad input: both amounts, more than the book holds, an unknown field.
  for (const body of [
    { token_in: "USDG", token_out: "ETH", notional_usd: 10, amount_in: "1000" },
    { token_in: "USDG", token_out: "ETH", amount_in: parseUnits("8001", 6).toString() },
  ])
    expect(codeOf(await practiceOrder(2, body))).toEqual([400, "BAD_REQUEST"]);
  expect(codeOf(await practiceOrder(2, { token_in: "USDG", token_out: "ETH", notional_usd: 10, x: 1 }))).toEqual([
    400,
    "UNKNOWN_FIELD",
  ]);
  // The account sees its book in league/me.
  const me = (await stack.agent.get("/league/me", P(2).key)).json;
  expect(me.entries.find((x: { entry_id: string }) => x.entry_id === accountEntry[0]).practice).toMatchObject({
    season: season.number,
    trades: 1,
    book: { USDG: { amount: "8000" }, ETH: { atoms: quoted.toString() } },
  });
}

describe("a whole prize season", () => {
  it("ranks relayed trades at independent marks, clusters owners, decides once and pays the top three eligible " +
    "clusters", async () => {
    const { dn } = stack;
    // Before its season the practice agent trades nothing: SEASON_CLOSED.
    await runTicks();
    expect((await practiceLogs())[0]).toMatchObject({ kind: "hold", code: "SEASON_CLOSED" });
    // Day 1 of the season: each wallet sells ETH for USDG through the service, more as n grows.
    await warp(season.starts + 3_600);
    await postFeeds();
    // The practice book starts at 10,000 USDG and the rule agent rebalances half into ETH.
    await runTicks();
    const day1 = await practiceLogs();
    expect(
      day1.find((l) => l.kind === "trade"),
      JSON.stringify(day1.slice(0, 3)),
    ).toMatchObject({
      token_in: "USDG",
      token_out: "ETH",
      mode: "paper",
      amount_in: parseUnits("1000", 6).toString(),
    });
    // Each wallet at its own time, further apart than the copy-trading window: nobody follows another.
    for (const p of players) {
      await warp(season.starts + 3_600 + APART_S * p.n);
      await sell(p.wallet, p.key, 60 + 20 * p.n);
      await sell(p.wallet, p.key, 20);
    }
    await paperOrdersDay1();
    // Wallet 5 also buys the BTC asset, whose feed will stop before the end: its mark is lost.
    const p5 = await stack.agent.post(
      "/live/prepare",
      { wallet: P(5).wallet.address, token_in: "ETH", token_out: "WBTC", notional_usd: 200 },
      P(5).key,
    );
    expect(p5.status, p5.text).toBe(200);
    const s5 = await stack.agent.post(
      "/live/submit",
      { raw_tx: await stack.agent.sign(P(5).wallet, p5.json.tx) },
      P(5).key,
    );
    await dn.mined(s5.json.tx_hash);
    // Wallet 1 also trades outside the service, straight through the router: not in its book.
    const key = poolKeyOf(dn, "ETH", "USDG");
    const outside = await routerSwap(dn, P(1).wallet, {
      poolKey: key,
      tokenIn: getAddress("0x0000000000000000000000000000000000000000"),
      tokenOut: dn.token("USDG"),
      amountIn: parseEther("0.2"),
      minOut: 0n,
      feeBips: 0n,
      feeRecipient: stack.api.config.feeRecipient,
    });
    // The reserve's stake gains arrive: 10,000 ORBIO (the stake's withdrawal to the reserve wallet).
    const gainTx = await mintOrbio(RESERVE, parseEther("10000"));

    // Day 2: one more sale each; then owner 10 is put on the sanctions list.
    await warp(season.starts + 86_400 + 3_600);
    await postFeeds();
    // Account 3 sells its ETH back before the fall, at the day's fresh feeds; account 2 holds $2,000 of it.
    await stack.ix.waitFor(await dn.pub.getBlockNumber());
    const back = await practiceOrder(3, { token_in: "ETH", token_out: "USDG", amount_in: account3Eth });
    expect(back.status, back.text).toBe(200);
    expect(back.json).toMatchObject({ trades: 2, book: { ETH: { atoms: "0" } } });
    for (const p of players) {
      await warp(season.starts + 86_400 + 3_600 + APART_S * p.n);
      await sell(p.wallet, p.key, 20);
    }
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[P(10).owner.address]],
      }),
    );

    // While it plays: live standings, estimates.
    const live = await stack.api.call("GET", "/api/v1/league/standings");
    expect(live.status, live.text).toBe(200);
    expect(live.json).toMatchObject({
      board: "prize",
      season: season.number,
      status: "open",
      amounts_basis: "estimate",
      decided: false,
    });
    expect(live.json.rows).toHaveLength(15);

    // The last hour: ETH's feed falls 10 % (sellers gain), the BTC asset's feed is left stale.
    await warp(season.ends - 3_600);
    await postFeeds({ eth: 2_700, skip: ["WBTC"] });
    await warp(season.ends + 60);
    await stack.ix.waitFor(await dn.pub.getBlockNumber());
    // The next season is open, but the practice book waits for this season's standings to freeze.
    await runTicks();
    expect((await practiceLogs())[0]).toMatchObject({ kind: "hold", code: "LEAGUE_BOOK_PENDING" });
    // Two instances on one store (neither holding the reserve's signer) settle at once: the season is decided once, its
    // payouts planned.
    const planner = () =>
      serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        clock,
        indexed: stack.ix.liveReads().reads,
        limiter: new RateLimiter(clock, 10_000, false),
        config: stack.api.config,
        league: { settleIntervalMs: 0, cacheMs: 0, reserveSigner: null },
        hostedScheduler: { intervalMs: 0 },
      });
    const [first, second] = [await planner(), await planner()];
    await untilFinal(stack, season.ends); // a season is decided once its end is final
    const passes = await Promise.all([
      first.app.services.league.settler.runOnce(),
      second.app.services.league.settler.runOnce(),
    ]);
    await Promise.all([first.close(), second.close()]);
    expect(
      passes.flatMap((p) => p.decided),
      JSON.stringify(passes),
    ).toEqual([season.number]);
    // Without the reserve's signer (production without LEAGUE_SIGNER_URL) nothing is signed: the places stay owed,
    // shown on the season with why.
    const unsigned = await planner();
    await unsigned.app.services.league.settler.runOnce();
    const seasonAnswer = async (n: number) => (await stack.api.call("GET", `/api/v1/league/seasons/${n}`)).json;
    const owedNow = await seasonAnswer(season.number);
    expect(owedNow.payouts.map((p: { status: string }) => p.status)).toEqual(["planned", "planned", "planned"]);
    expect(owedNow.owed.map((o: { place: number }) => o.place)).toEqual([1, 2, 3]);
    for (const o of owedNow.owed) expect(o.why).toMatch(/no reserve signer is configured \(LEAGUE_SIGNER_URL\)/);
    // The stake's withdrawal carries its transaction: the transfer that brought the gains.
    expect(owedNow.withdrawal).toMatchObject({ tx_hash: gainTx, tx_hashes: [gainTx], amount: owedNow.ledger.added });

    // The practice board froze at the end: the paper agent and two exchange accounts, each 10,000 USDG moved by its
    // paper fills. Account 3 sold its ETH before the fall and ranks first; account 2 held $2,000 of ETH, twice the
    // agent's $1,000, and ranks last.
    const practice = (await stack.api.call("GET", `/api/v1/league/standings?season=${season.number}&board=practice`))
      .json;
    expect(practice).toMatchObject({ board: "practice", decided: true, outcome: null, amounts_atoms: null });
    const none = { eligibility: null, place: null, prize_atoms: null };
    expect(practice.rows).toEqual([
      expect.objectContaining({ rank: 1, kind: "account", entry_id: accountEntry[1], trades: 2, ...none }),
      expect.objectContaining({ rank: 2, kind: "hosted", trades: 1, ...none }),
      expect.objectContaining({ rank: 3, kind: "account", entry_id: accountEntry[0], trades: 1, ...none }),
    ]);
    for (const r of practice.rows) {
      expect(r.equity).toBeLessThan(10_000);
      expect(r.profit_usd).toBeCloseTo(r.equity - 10_000, 5);
    }
    // Account 3 lost only the fees and the pool's price impact; account 2 lost with ETH's fall, drawn down.
    expect(practice.rows[0].equity).toBeGreaterThan(9_980);
    expect(practice.rows[2].profit_usd).toBeLessThan(-100);
    expect(practice.rows[2].max_dd_pct).toBeGreaterThan(0);
    // Then the agent's next tick starts the new season's book at 10,000 USDG again.
    await warp(season.ends + 600);
    await runTicks();
    const agentNow = (await stack.agent.get(`/hosted/${practiceAgent}`, P(1).key)).json;
    expect(agentNow.brain_state.league_season).toBe(season.number + 1);
    // Reset to 10,000 USDG, then the rule moved $1,000 (its max trade) into ETH.
    expect(agentNow.paper_book.USDG.atoms).toBe(parseUnits("9000", 6).toString());
    // An account's book starts the new season at 10,000 USDG too (league/me shows it).
    const me2 = (await stack.agent.get("/league/me", P(2).key)).json;
    expect(me2.entries.find((x: { entry_id: string }) => x.entry_id === accountEntry[0]).practice).toEqual({
      season: season.number + 1,
      book: { USDG: { atoms: parseUnits("10000", 6).toString(), amount: "10000" } },
      trades: 0,
    });

    // The next season ends (nobody traded in it) while this one's places are still owed: it is decided all the same,
    // from the reserve left once this season's places are taken out.
    await warp(season.ends + SEASON_S + 60);
    await stack.ix.waitFor(await dn.pub.getBlockNumber());
    await untilFinal(stack, season.ends + SEASON_S);
    expect((await unsigned.app.services.league.settler.runOnce()).decided).toEqual([season.number + 1]);
    await unsigned.close();
    const later = (await stack.api.call("GET", `/api/v1/league/standings?season=${season.number + 1}`)).json;
    expect(later).toMatchObject({ status: "closed", decided: true, amounts_basis: "decided" });
    expect(later.rows).toHaveLength(15);
    expect(later.outcome).toMatchObject({ pays: false, active_clusters: 0 });
    const laterAnswer = await seasonAnswer(season.number + 1);
    const planned = owedNow.ledger.shares.reduce((a: bigint, x: string) => a + BigInt(x), 0n);
    expect(laterAnswer.ledger.reserve_before).toBe((BigInt(owedNow.ledger.reserve) - planned).toString());
    const listed = (await stack.api.call("GET", "/api/v1/league/seasons")).json.seasons;
    const line = (n: number) => listed.find((x: { number: number }) => x.number === n);
    expect(line(season.number + 1)).toMatchObject({ decided: true, pays: false, owed: [] });
    expect(line(season.number).owed.map((o: { place: number }) => o.place)).toEqual([1, 2, 3]);
    // Decided, not yet paid: the third place's agent wallet is put on the sanctions list.
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[P(7).agentWallet]],
      }),
    );
    const orbio = (a: Address) =>
      dn.pub.readContract({ address: dn.token("ORBIO"), abi: erc20Abi, functionName: "balanceOf", args: [a] });
    const reserveHeld = await orbio(RESERVE);
    // A settler pass, the chain past its payouts' finality, and the pass that records them (nothing is recorded
    // paid or held on a receipt shallower than FINALITY_BLOCKS).
    const payPass = async () => {
      await stack.api.app.services.league.settler.runOnce();
      await dn.test.mine({ blocks: FINALITY_BLOCKS });
      await stack.api.app.services.league.settler.runOnce();
    };
    // An unreadable list (its address answering with a revert) signs and sends nothing.
    const listCode = await dn.pub.getCode({ address: dn.universe.contracts.sanctionsList });
    await dn.test.setCode({ address: dn.universe.contracts.sanctionsList, bytecode: "0x60006000fd" });
    await expect(stack.api.app.services.league.settler.runOnce()).rejects.toThrow(/sanctions list could not be read/);
    await dn.test.setCode({ address: dn.universe.contracts.sanctionsList, bytecode: listCode! });
    expect(await orbio(RESERVE)).toBe(reserveHeld);
    expect(
      (
        await stack.store.db.query("SELECT raw_tx FROM app.league_payouts WHERE season = $1 AND raw_tx IS NOT NULL", [
          season.number,
        ])
      ).length,
    ).toBe(0);
    // The instance with the signer pays in order. A short reserve first: the wallet holds places 1 and 3's amounts,
    // not place 2's. Place 1 is paid; place 2 stays owed (why names the shortfall), and place 3, smaller, waits
    // behind it: its recipient is not even read on the list yet.
    const shares = owedNow.ledger.shares.map(BigInt) as bigint[];
    const reserveKey = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: 4 });
    const sink = fresh().address;
    const drained = reserveHeld - shares[0]! - shares[2]!;
    await transfer(reserveKey as unknown as Account, dn.token("ORBIO"), sink, drained);
    await payPass();
    const short = await seasonAnswer(season.number);
    expect(short.payouts.map((p: { status: string }) => p.status)).toEqual(["mined", "planned", "planned"]);
    expect(short.owed.map((o: { place: number }) => o.place)).toEqual([2, 3]);
    expect(short.owed[0].why).toMatch(
      new RegExp(`reserve wallet has ${shares[2]} atoms left of the ${shares[1]} owed`),
    );
    expect([await orbio(P(7).agentWallet), await orbio(P(6).agentWallet)]).toEqual([0n, 0n]);
    // Topped up: place 2 is paid; place 3 is held (its recipient read on the list right before signing), never sent.
    await mintOrbio(RESERVE, drained);
    await payPass();
    // A later pass (a restart) decides and pays nothing again.
    await stack.api.app.services.league.settler.runOnce();

    const st = (await stack.api.call("GET", `/api/v1/league/standings?season=${season.number}`)).json;
    expect(st).toMatchObject({ status: "closed", decided: true, amounts_basis: "decided" });
    const row = (n: number) => st.rows.find((r: { entry_id: string }) => r.entry_id === P(n).entry)!;
    const rule = (n: number, name: string) =>
      row(n).eligibility.rules.find((r: { rule: string }) => r.rule === name).status;
    // Scores: higher n sold more ETH before it fell; wallet 5's BTC lost its mark and counts nothing.
    expect(st.rows.map((r: { score: number }) => r.score)).toEqual(
      [...st.rows.map((r: { score: number }) => r.score)].sort((a, b) => b - a),
    );
    expect(row(15).rank).toBe(1);
    expect(row(5).rank).toBe(15);
    expect(row(5).open_unpriced).toBe(1);
    // Wallet 1's outside trade is not in its book: 3 trades.
    expect(row(1).trades).toBe(3);
    expect(outside.status).toBe("success");
    expect(row(5).trades).toBe(4);
    // The unconfirmed, house and sanctioned entries rank but win nothing.
    expect([rule(12, "CONFIRMED"), rule(11, "HOUSE"), rule(10, "SANCTIONS")]).toEqual(["fail", "fail", "fail"]);
    expect(row(11).house).toBe(true);
    // Owners 8 and 9 are one cluster (by the transfer, with its hash); 3 and 4 share only a hub.
    expect(row(8).cluster).toBe(row(9).cluster);
    expect(row(9).cluster_links).toEqual([expect.objectContaining({ kind: "transfer", with: P(8).entry })]);
    expect(row(3).cluster).not.toBe(row(4).cluster);
    // 13, 14 and 15 are one cluster by their native ETH funding alone: owner 13 sent each wallet its
    // first ETH (funder) and is 13's own address (transfer); the cluster takes one paid place.
    expect([row(14).cluster, row(15).cluster]).toEqual([row(13).cluster, row(13).cluster]);
    const native = (n: number) =>
      row(n)
        .cluster_links.filter((l: { evidence: { token: string } }) => /^0x0{40}$/.test(l.evidence.token))
        .map((l: { kind: string; with: string }) => [l.kind, l.with])
        .sort();
    expect(native(15)).toEqual([
      ["funder", P(13).entry],
      ["transfer", P(13).entry],
    ]);
    expect(row(15).cluster_links[0].evidence.from).toBe(P(13).owner.address.toLowerCase());
    expect(st.outcome).toMatchObject({ pays: true, active_clusters: 12 });
    expect(
      st.rows.every((r: { eligibility: { rules: { rule: string; status: string }[] } }) =>
        r.eligibility.rules.some((x) => x.rule === "LINKS" && x.status === "pass"),
      ),
    ).toBe(true);
    // Places: 15 (best eligible; 14 and 13 are its cluster), 9 (8 is 9's cluster), 7.
    expect([13, 14, 15, 9, 8, 7, 6].map((n) => row(n).place)).toEqual([null, null, 1, 2, null, 3, null]);
    // Cap $1,000 at ORBIO's mark, within half of the 10,000 ORBIO gain: 50/30/20.
    const detail = (await stack.api.call("GET", `/api/v1/league/seasons/${season.number}`)).json;
    const { ledger } = detail;
    expect(ledger).toMatchObject({
      gain: parseEther("10000").toString(),
      half_gain: parseEther("5000").toString(),
      status: "settled",
    });
    const budget = BigInt(ledger.budget);
    expect(budget).toBe(BigInt(ledger.cap));
    expect(ledger.shares).toEqual([budget / 2n, (budget * 3n) / 10n, budget / 5n].map(String));
    expect(
      detail.payouts.map((p: { place: number; recipient: string; status: string }) => [
        p.place,
        getAddress(p.recipient),
        p.status,
      ]),
    ).toEqual([
      [1, P(15).agentWallet, "mined"],
      [2, P(9).agentWallet, "mined"],
      [3, P(7).agentWallet, "held"],
    ]);
    expect(detail.payouts[2].tx_hash).toBeNull();
    expect(detail.payouts[2].why).toMatch(
      /^held: its recipient 0x[0-9a-f]{40} is on the sanctions list \(read at block/,
    );
    expect(detail.owed).toEqual([]);
    for (const [i, n] of [15, 9].entries()) expect((await orbio(P(n).agentWallet)).toString()).toBe(ledger.shares[i]);
    expect(await orbio(P(7).agentWallet)).toBe(0n);
    // The held share stays in the reserve wallet, set aside: the reserve's book (and the next season's budget) took
    // every place out at the decision.
    expect(ledger.paid).toEqual([ledger.shares[0], ledger.shares[1], "0"]);
    expect(BigInt(ledger.reserve_after)).toBe(BigInt(ledger.reserve) - planned);
    expect(await orbio(RESERVE)).toBe(reserveHeld - BigInt(ledger.shares[0]) - BigInt(ledger.shares[1]));
    // The treasury record shows the season's payouts.
    const treasury = (await stack.api.call("GET", "/api/v1/treasury")).json;
    expect(treasury.prize_payouts[0]).toMatchObject({
      season: season.number,
      stake_withdrawal: { tx_hash: gainTx },
      symbol: "ORBIO",
      recipients: [
        expect.objectContaining({ rank: 1, share_bps: 5000, amount: ledger.shares[0] }),
        expect.anything(),
        expect.anything(),
      ],
    });
    expect(
      treasury.prize_payouts[0].recipients.map((r: { tx_hash: string | null }) =>
        /^0x[0-9a-f]{64}$/.test(r.tx_hash ?? ""),
      ),
    ).toEqual([true, true, false]);
    expect(treasury.prize_payouts[0].note).toMatch(/^held: a recipient is on the sanctions list/);
    const list = (await stack.api.call("GET", "/api/v1/league/seasons")).json.seasons.find(
      (s: { number: number }) => s.number === season.number,
    );
    expect(list).toMatchObject({ decided: true, pays: true, entrants: 15 });
    expect(list.winners.map((w: { place: number; status: string }) => [w.place, w.status])).toEqual([
      [1, "mined"],
      [2, "mined"],
      [3, "held"],
    ]);

    // Anyone recomputes every row from the chain and the published entries.
    const v = await verifyLeague(stack.api.url, dn.anvil.rpcUrl, season.number);
    expect(v.problems).toEqual([]);
    expect(v.first).toBeNull();
    expect(v.rows).toBe(15);
    const v2 = await verifyLeague(stack.api.url, dn.anvil.rpcUrl, season.number + 1);
    expect([v2.problems, v2.first, v2.rows]).toEqual([[], null, 15]);

    // A payout signed and stored, not yet sent, whose recipient is listed since: at its re-send the
    // list is read again; its nonce is cancelled, it is held, and nothing reaches the recipient.
    const resend = await reserveKey.signTransaction({
      type: "eip1559",
      chainId: 4663,
      to: dn.token("ORBIO"),
      value: 0n,
      nonce: await dn.pub.getTransactionCount({ address: RESERVE, blockTag: "pending" }),
      gas: 100_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: "transfer",
        args: [P(9).agentWallet, BigInt(ledger.shares[1])],
      }),
    });
    await stack.store.db.query(
      "UPDATE app.league_payouts SET status = 'sent', raw_tx = $2, tx_hash = $3 WHERE season = $1 AND place = 2",
      [season.number, resend, keccak256(resend)],
    );
    await stack.store.db.query("UPDATE app.league_ledgers SET settled_at = NULL WHERE season = $1", [season.number]);
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[P(9).agentWallet]],
      }),
    );
    const paidBefore = await orbio(P(9).agentWallet);
    await payPass();
    expect(await orbio(P(9).agentWallet)).toBe(paidBefore);
    expect(await dn.pub.getTransactionReceipt({ hash: keccak256(resend) }).catch(() => null)).toBeNull();
    expect(
      (await stack.api.call("GET", `/api/v1/league/seasons/${season.number}`)).json.payouts.map(
        (p: { status: string }) => p.status,
      ),
    ).toEqual(["mined", "held", "held"]);

    // A stored payout whose amount was changed is never sent again, and nothing moves.
    const before = await dn.pub.readContract({
      address: dn.token("ORBIO"),
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [RESERVE],
    });
    await stack.store.db.query(
      "UPDATE app.league_payouts SET amount = (amount::numeric + 1)::text, status = 'sent' WHERE season = $1 AND " +
        "place = 1",
      [season.number],
    );
    await stack.store.db.query("UPDATE app.league_ledgers SET settled_at = NULL WHERE season = $1", [season.number]);
    await expect(stack.api.app.services.league.settler.runOnce()).rejects.toThrow(
      /hash is not its bytes|not the decided share/,
    );
    expect(
      await dn.pub.readContract({
        address: dn.token("ORBIO"),
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [RESERVE],
      }),
    ).toBe(before);

    // A published score changed in the store: verify names that row and field, and the CLI exits 1.
    const [frozen] = await stack.store.db.query<{ answer: string }>(
      "SELECT answer FROM app.league_results WHERE season = $1 AND board = 'prize'",
      [season.number],
    );
    const answer = JSON.parse(frozen!.answer);
    answer.rows[1].profit_usd += 1;
    await stack.store.db.query("UPDATE app.league_results SET answer = $2 WHERE season = $1 AND board = 'prize'", [
      season.number,
      JSON.stringify(answer),
    ]);
    expect((await verifyLeague(stack.api.url, dn.anvil.rpcUrl, season.number)).first).toMatchObject({
      rank: 2,
      field: "profit_usd",
    });
    // Asynchronously: the API answering the script runs in this process.
    const cli = await new Promise<{ status: number | null; stdout: string }>((done) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "scripts/league-verify.ts", stack.api.url, dn.anvil.rpcUrl, String(season.number)],
        { cwd: ROOT },
      );
      let stdout = "";
      child.stdout.on("data", (b) => (stdout += String(b)));
      child.on("close", (status) => done({ status, stdout }));
    });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toMatch(/row 2 \(le_[0-9a-f]+\) differs at profit_usd/);
  }, 600_000);
});

describe("copy-trading and the operator's review (issue 29)", () => {
  it("flags a copier and not two honest agents of one pair; a reviewed flag passes, SANCTIONS is refused; verify " +
    "agrees after each", async () => {
    const { dn } = stack;
    // The season playing now (after the one the first case decided with nobody trading), played by the same
    // entries: wallet 2 copies wallet 1; wallets 3 and 4 trade on their own.
    const next = calendarAt(await chainNow()).current;
    expect(next.number).toBe(season.number + 2);
    const at = async (ts: number, ...sales: Player[]) => {
      await warp(ts);
      for (const p of sales) await sell(p.wallet, p.key, 40);
    };
    // ETH's feed back at the pool's price (the first season's fall was the feed's alone), read by the indexer.
    const freshFeeds = async () => {
      await postFeeds({ eth: 3_000 });
      await stack.ix.waitFor(await dn.pub.getBlockNumber());
    };
    const day1 = next.starts + 3_600;
    await warp(day1 - 60);
    // Weeks on, their keys have expired: they sign in again.
    for (const n of [1, 2, 3, 4]) P(n).key = await stack.agent.signIn(P(n).wallet);
    await freshFeeds();
    // The copier sells seconds after the leader, every time.
    await at(day1, P(1), P(2));
    await at(day1 + 1_800, P(1), P(2));
    // The honest pair: once 3 just before 4, once 4 just before 3, the rest at their own times.
    await at(day1 + 3 * 3_600, P(3), P(4));
    await at(day1 + 4 * 3_600, P(4), P(3));
    const day2 = next.starts + 86_400 + 3_600;
    await warp(day2 - 60);
    await freshFeeds();
    await at(day2, P(1), P(2));
    await at(day2 + 3_600, P(3));
    await at(day2 + 2 * 3_600, P(4));
    await stack.ix.waitFor(await dn.pub.getBlockNumber());

    const board = async () => {
      await stack.api.app.services.league.boards.runOnce();
      const r = await stack.api.call("GET", `/api/v1/league/standings?season=${next.number}`);
      expect(r.status, r.text).toBe(200);
      const row = (n: number) => r.json.rows.find((x: { entry_id: string }) => x.entry_id === P(n).entry)!;
      const copy = (n: number) =>
        row(n).eligibility.rules.find((x: { rule: string }) => x.rule === "COPY_TRADING") as {
          status: string;
          reason: string;
          reviewed: boolean;
        };
      return { row, copy };
    };
    const verified = async () => {
      const v = await verifyLeague(stack.api.url, dn.anvil.rpcUrl, next.number);
      expect(v.problems).toEqual([]);
      expect(v.first).toBeNull();
    };
    // The window and the share are published with the league's rules.
    expect((await stack.api.call("GET", "/api/v1/league")).json.rules).toMatchObject({
      copy_trading_window_s: COPY_WINDOW_S,
      copy_trading_share_bps: 5_000,
      review: { never_reviewed: ["CONFIRMED", "SANCTIONS", "PAYABLE"] },
    });
    const flagged = await board();
    expect(flagged.copy(2)).toEqual({
      rule: "COPY_TRADING",
      name: "does not copy another cluster's trades",
      status: "flag",
      reason: expect.stringMatching(
        new RegExp(`^100\\.00 % of its season volume \\(3 of 3 trades\\) repeats entry ${P(1).entry}'s trades`),
      ),
      reviewed: false,
    });
    expect(flagged.row(2).eligibility).toMatchObject({ status: "flag", eligible: false });
    // The leader and the honest pair are not flagged; each of the pair follows the other a third of the time.
    expect([1, 3, 4].map((n) => flagged.copy(n).status)).toEqual(["pass", "pass", "pass"]);
    expect([1, 3, 4].map((n) => flagged.row(n).eligibility.eligible)).toEqual([true, true, true]);
    await verified();

    // The operator reviews the flag: pass. The next pass of the standings applies it, with who and why.
    const review = await recordReview(stack.store.db, {
      entry_id: P(2).entry,
      rule: "COPY_TRADING",
      verdict: "pass",
      reason: "both follow the same public signal; owners unrelated",
      by: "operator-ann",
      at: Math.floor(clock() / 1000),
    });
    expect(review).toMatchObject({ season: next.number, flag_reason: flagged.copy(2).reason });
    const passed = await board();
    expect(passed.copy(2)).toMatchObject({
      status: "pass",
      reviewed: true,
      reason: expect.stringMatching(/; reviewed pass by operator-ann at .*: both follow the same public signal/),
    });
    expect(passed.row(2).eligibility).toMatchObject({ status: "pass", eligible: true });
    const books = (await stack.api.call("GET", `/api/v1/league/seasons/${next.number}/books`)).json;
    expect(books.reviews).toEqual([review]);
    await verified();

    // SANCTIONS can never be reviewed away: the review is refused and nothing is recorded.
    await expect(
      recordReview(stack.store.db, {
        entry_id: P(10).entry,
        rule: "SANCTIONS",
        verdict: "pass",
        reason: "looks fine",
        by: "operator-ann",
        at: Math.floor(clock() / 1000),
      }),
    ).rejects.toThrow(/^SANCTIONS can never be reviewed away/);
    const later = await board();
    expect(later.row(10).eligibility.rules.find((x: { rule: string }) => x.rule === "SANCTIONS")).toMatchObject({
      status: "fail",
      reviewed: false,
    });
    expect(
      (await stack.store.db.query("SELECT 1 FROM app.league_reviews WHERE season = $1", [next.number])).length,
    ).toBe(1);
    await verified();
  }, 300_000);
});
