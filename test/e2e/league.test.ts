import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import { calendarAt } from "../../lib/league/calendar.js";
import { ELIGIBILITY_LINE } from "../../lib/league/statement.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { serveApi } from "../helpers/api.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { registerAgent as registerPartner } from "../helpers/league.js";

/**
 * League entries (issue 18, first part) on a devnet with the real partner vault and sanctions
 * list: statements signed by the agent's owner, enter, confirm, leave, me; every refusal of the
 * entry routes; a stopped hosted agent leaves.
 */
let stack: Stack;
let offsetMs = 0;
beforeAll(async () => {
  stack = await startStack({ clock: () => Date.now() + offsetMs });
}, 180_000);
afterAll(() => stack?.stop());

type Account = ReturnType<typeof privateKeyToAccount>;
const fresh = () => privateKeyToAccount(generatePrivateKey());
const registerAgent = (owner: Address, wallet: Address, symbol = "AGT") =>
  registerPartner(stack.dn, owner, wallet, symbol);
const post = (path: string, body: unknown, key: string) => stack.agent.post(`/league/${path}`, body, key);
const codeOf = (r: { status: number; json: any }) => [r.status, r.json.error?.code];
/** The owner signs a statement the entering wallet asked for. */
async function signed(key: string, owner: Account, body: Record<string, unknown>) {
  const st = await post("statement", body, key);
  expect(st.status, st.text).toBe(200);
  return {
    st: st.json,
    signature: await owner.signMessage({ message: st.json.message }),
    nonce: st.json.nonce as string,
  };
}

describe("prize entries", () => {
  it(
    "bind the signed-in trading wallet to a partner agent proven by its owner's signed statement, from the next " +
      "season",
    async () => {
      const owner = fresh();
      const trader = fresh();
      const id = await registerAgent(owner.address, fresh().address, "PRZ");
      const k = await stack.agent.signIn(trader);
      // Not the owner and no statement.
      const no = await post("enter", { agent_id: id }, k);
      expect(codeOf(no)).toEqual([403, "NOT_OWNER"]);
      expect(no.json.error.owner).toBe(owner.address);
      expect(codeOf(await post("enter", { agent_id: 987_654 }, k))).toEqual([404, "NOT_AN_AGENT"]);
      expect(codeOf(await post("enter", { agent_id: id, referrer: "x" }, k))).toEqual([400, "UNKNOWN_FIELD"]);
      expect(codeOf(await post("enter", { agent_id: id, signature: `0x${"11".repeat(65)}` }, k))).toEqual([
        400,
        "BAD_REQUEST",
      ]);

      const { st, signature, nonce } = await signed(k, owner, { agent_id: id });
      expect(st).toMatchObject({
        agent_id: id,
        board: "prize",
        entrant: `prize league: trading wallet ${trader.address.toLowerCase()}`,
        owner: owner.address,
      });
      const lines = st.message.split("\n");
      expect(lines.at(-2)).toBe(ELIGIBILITY_LINE);
      // Signed by someone else: NOT_OWNER; the statement is still good for the owner's own signature.
      expect(
        codeOf(
          await post(
            "enter",
            { agent_id: id, nonce, signature: await fresh().signMessage({ message: st.message }) },
            k,
          ),
        ),
      ).toEqual([403, "NOT_OWNER"]);
      const e = await post("enter", { agent_id: id, nonce, signature }, k);
      expect(e.status, e.text).toBe(201);
      const next = calendarAt(Math.floor((Date.now() + offsetMs) / 1000)).next;
      expect(e.json).toMatchObject({
        board: "prize",
        agent_id: id,
        kind: "wallet",
        wallet: trader.address,
        status: "active",
        from_season: next.number,
        playing: false,
        owner: owner.address,
        proof: "statement",
        confirmed: true,
        symbol: "PRZ",
      });
      expect(e.json.note).toContain(next.name);
      // Once: the same nonce does not enter again.
      await post("leave", {}, k);
      expect(codeOf(await post("enter", { agent_id: id, nonce, signature }, k))).toEqual([400, "STATEMENT_EXPIRED"]);
      // One entry per agent per board, one per trading wallet.
      const again = await signed(k, owner, { agent_id: id });
      expect((await post("enter", { agent_id: id, nonce: again.nonce, signature: again.signature }, k)).status).toBe(
        201,
      );
      const other = await stack.agent.signIn(fresh());
      expect(codeOf(await post("enter", { agent_id: id }, other))).toEqual([409, "AGENT_ENTERED"]);
      const owner2 = fresh();
      const id2 = await registerAgent(owner2.address, fresh().address, "TWO");
      expect(codeOf(await post("enter", { agent_id: id2 }, k))).toEqual([409, "ALREADY_ENTERED"]);
      // A statement asked by one wallet does not enter another.
      const theirs = await signed(other, owner2, { agent_id: id2 });
      const k3 = await stack.agent.signIn(fresh());
      expect(
        codeOf(await post("enter", { agent_id: id2, nonce: theirs.nonce, signature: theirs.signature }, k3)),
      ).toEqual([400, "STATEMENT_MISMATCH"]);
      // Ten minutes on, a statement is gone.
      const late = await signed(other, owner2, { agent_id: id2 });
      offsetMs += 601_000;
      expect(
        codeOf(await post("enter", { agent_id: id2, nonce: late.nonce, signature: late.signature }, other)),
      ).toEqual([400, "STATEMENT_EXPIRED"]);

      const me = await stack.agent.get("/league/me", k);
      expect(me.json.wallet).toBe(trader.address.toLowerCase());
      expect(me.json.entries.map((x: any) => x.status)).toEqual(["active", "left"]);
    },
  );

  it(
    "an owner entering its own agent with its key plays unconfirmed until it confirms with a signed " + "statement",
    async () => {
      const owner = fresh();
      const id = await registerAgent(owner.address, fresh().address, "OWN");
      const k = await stack.agent.signIn(owner);
      const e = await post("enter", { agent_id: id }, k);
      expect(e.status, e.text).toBe(201);
      expect(e.json).toMatchObject({ proof: "owner_key", confirmed: false, wallet: owner.address });
      expect(e.json.note).toContain("wins nothing until the owner confirms");
      const { signature, nonce } = await signed(k, owner, { agent_id: id });
      // Only the entry's trading wallet confirms it.
      expect(
        codeOf(await post("confirm", { agent_id: id, signature, nonce }, await stack.agent.signIn(fresh()))),
      ).toEqual([403, "FORBIDDEN"]);
      const c = await post("confirm", { agent_id: id, signature, nonce }, k);
      expect(c.status, c.text).toBe(200);
      expect(c.json).toMatchObject({ confirmed: true, entry_id: e.json.entry_id });
      expect(codeOf(await post("confirm", { agent_id: 987_654, signature, nonce }, k))).toEqual([404, "NOT_ENTERED"]);
      expect(codeOf(await post("leave", { agent_id: id }, await stack.agent.signIn(fresh())))).toEqual([
        403,
        "FORBIDDEN",
      ]);
      expect((await post("leave", { agent_id: id }, k)).json).toMatchObject({ status: "left", left: true });
      expect(codeOf(await post("leave", {}, k))).toEqual([404, "NOT_ENTERED"]);
    },
  );

  it("refuses a sanctioned owner (451 SANCTIONED): no statement, no entry", async () => {
    const { dn } = stack;
    const owner = fresh();
    const id = await registerAgent(owner.address, fresh().address, "SNC");
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[owner.address]],
      }),
    );
    const k = await stack.agent.signIn(fresh());
    const r = await post("statement", { agent_id: id }, k);
    expect(codeOf(r)).toEqual([451, "SANCTIONED"]);
    expect(r.json.error.field).toBe("owner");
    expect(codeOf(await post("enter", { agent_id: id }, k))).toEqual([451, "SANCTIONED"]);
  });

  it(
    "lets a sanctioned trading wallet leave (and nothing else); a signature that does not recover is 400 " +
      "BAD_SIGNATURE",
    async () => {
      const { dn } = stack;
      const owner = fresh();
      const trader = fresh();
      const id = await registerAgent(owner.address, fresh().address, "LVE");
      const k = await stack.agent.signIn(trader);
      const { signature, nonce } = await signed(k, owner, { agent_id: id });
      const broken = `0x${"00".repeat(64)}1b`;
      expect(codeOf(await post("enter", { agent_id: id, nonce, signature: broken }, k))).toEqual([
        400,
        "BAD_SIGNATURE",
      ]);
      expect((await post("enter", { agent_id: id, nonce, signature }, k)).status).toBe(201);
      await dn.mined(
        await dn.walletFor(dn.deployer).writeContract({
          address: dn.universe.contracts.sanctionsList,
          abi: sanctionsListAbi,
          functionName: "addToSanctionsList",
          args: [[trader.address]],
        }),
      );
      // A second instance on the same store (no verdict cached for this key): every other route is 451, leave is not.
      const other = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        clock: () => Date.now() + offsetMs,
        indexed: stack.ix.liveReads().reads,
        limiter: new RateLimiter(Date.now, 10_000, false),
      });
      try {
        const call = (method: "GET" | "POST", path: string, body?: unknown) =>
          other.call(method, `/api/v1/league/${path}`, body, { authorization: `Bearer ${k}` });
        expect((await call("GET", "me")).status).toBe(451);
        const left = await call("POST", "leave", {});
        expect(left.status, left.text).toBe(200);
        expect(left.json).toMatchObject({ status: "left" });
      } finally {
        await other.close();
      }
    },
  );
});

describe("practice entries", () => {
  it(
    "take a hosted paper agent on ETH, the BTC asset or the partner token against USDG, ticking at most every 300 " +
      "s; stopping it leaves",
    async () => {
      const owner = fresh();
      const id = await registerAgent(owner.address, fresh().address, "PRC");
      const trader = fresh();
      const k = await stack.agent.signIn(trader);
      const hosted = async (o: Record<string, unknown>) => {
        const r = await stack.api.call(
          "POST",
          "/api/v1/hosted",
          {
            brain: "rule",
            params: { targets: { ETH: 0.5, USDG: 0.5 } },
            interval_s: 300,
            pairs: ["ETH/USDG"],
            limits: { max_trade_usd: 10, max_day_usd: 100, max_position_usd: 100 },
            ...o,
          },
          { authorization: `Bearer ${k}` },
        );
        expect(r.status, r.text).toBe(201);
        return r.json.id as string;
      };
      const fast = await hosted({ interval_s: 60 });
      expect(codeOf(await post("statement", { agent_id: id, hosted_id: fast }, k))).toEqual([409, "LEAGUE_INTERVAL"]);
      const weth = await hosted({ pairs: ["WETH/USDG"], params: { targets: { WETH: 0.5, USDG: 0.5 } } });
      expect(codeOf(await post("statement", { agent_id: id, hosted_id: weth }, k))).toEqual([409, "LEAGUE_PAIRS"]);
      const live = await hosted({ mode: "live" });
      expect(codeOf(await post("statement", { agent_id: id, hosted_id: live }, k))).toEqual([409, "LEAGUE_PAPER_ONLY"]);
      const good = await hosted({});
      expect(codeOf(await post("enter", { agent_id: id, hosted_id: good, board: "prize" }, k))).toEqual([
        409,
        "PRIZE_IS_LIVE",
      ]);
      // Another wallet's hosted agent is not this wallet's to enter.
      expect(
        codeOf(await post("statement", { agent_id: id, hosted_id: good }, await stack.agent.signIn(fresh()))),
      ).toEqual([403, "FORBIDDEN"]);

      const { st, signature, nonce } = await signed(k, owner, { agent_id: id, hosted_id: good });
      expect(st).toMatchObject({ board: "practice", entrant: `practice board: hosted agent ${good}` });
      expect(st.message).not.toContain("Eligibility");
      const e = await post("enter", { agent_id: id, hosted_id: good, nonce, signature }, k);
      expect(e.status, e.text).toBe(201);
      expect(e.json).toMatchObject({
        board: "practice",
        kind: "hosted",
        hosted_id: good,
        confirmed: null,
        wallet: getAddress(trader.address),
      });
      // While it plays, its settings keep the practice rules.
      const upd = (body: Record<string, unknown>) =>
        stack.api.call("POST", `/api/v1/hosted/${good}/update`, body, { authorization: `Bearer ${k}` });
      expect(codeOf(await upd({ interval_s: 60 }))).toEqual([409, "LEAGUE_INTERVAL"]);
      expect(codeOf(await upd({ pairs: ["WETH/USDG"], params: { targets: { WETH: 0.5, USDG: 0.5 } } }))).toEqual([
        409,
        "LEAGUE_PAIRS",
      ]);
      expect((await upd({ interval_s: 600 })).status).toBe(200);
      expect(codeOf(await post("leave", { hosted_id: good, board: "prize" }, k))).toEqual([400, "BAD_REQUEST"]);
      // Stopping the hosted agent takes it out at once.
      await stack.api.call("POST", `/api/v1/hosted/${good}/stop`, {}, { authorization: `Bearer ${k}` });
      const me = await stack.agent.get("/league/me", k);
      expect(me.json.entries.find((x: any) => x.hosted_id === good)).toMatchObject({ status: "left", playing: false });
    },
  );
});

describe("the reading routes (no key)", () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    stack.api.call("GET", `/api/v1/league${path}`, undefined, headers);

  it(
    "answer the calendar, the reserve, the rules and each board, and refuse bad queries with clear " + "codes",
    async () => {
      const l = await get("");
      expect(l.status, l.text).toBe(200);
      expect(l.json.season).toMatchObject({ status: expect.stringMatching(/^(open|upcoming)$/), days: 14 });
      expect(l.json.next_season.number).toBe(l.json.season.number + (l.json.season.status === "open" ? 1 : 0));
      expect(l.json.reserve).toMatchObject({
        on: true,
        reserve_atoms: "0",
        cap_usd: 1_000,
        estimate: { status: expect.stringMatching(/^(estimate|pending|incomplete)$/) },
      });
      expect(l.json.rules).toMatchObject({
        split: { bps: [5000, 3000, 2000] },
        minimum_field: { clusters: 10 },
        practice_starting_book: { USDG: 10_000 },
        prize_cap_usd: 1_000,
      });
      expect(
        l.json.rules.valuation.tokens.map((t: { symbol: string; basis: string }) => `${t.symbol}:${t.basis}`),
      ).toEqual(expect.arrayContaining(["USDG:fixed", "ETH:oracle", "ORBIO:twap"]));
      const st = await get("/standings");
      expect(st.status, st.text).toBe(200);
      expect(st.json).toMatchObject({
        board: "prize",
        season: l.json.season.number,
        decided: false,
        amounts_basis: "estimate",
      });
      const pr = await get(`/standings?board=practice&season=${l.json.next_season.number}`);
      expect(pr.json).toMatchObject({
        board: "practice",
        rows: [],
        outcome: null,
        amounts_atoms: null,
        amounts_basis: null,
      });
      expect(pr.json.entrants_next).toBeGreaterThanOrEqual(0);
      expect(codeOf(await get("/standings?board=gold"))).toEqual([400, "BAD_REQUEST"]);
      expect(codeOf(await get("/standings?season=-1"))).toEqual([400, "BAD_REQUEST"]);
      expect(codeOf(await get("/standings?sort=score"))).toEqual([400, "BAD_REQUEST"]);
      // SPEC's standings row answers 400 BAD_REQUEST (NO_SEASON is the seasons/<n> path's).
      expect(codeOf(await get(`/standings?season=${l.json.next_season.number + 1}`))).toEqual([400, "BAD_REQUEST"]);
      expect((await get(`/standings?season=${l.json.next_season.number}`)).status).toBe(200);
      expect(codeOf(await get("/seasons/abc"))).toEqual([404, "NO_SEASON"]);
      expect(codeOf(await get("/seasons/0"))).toEqual([404, "NO_SEASON"]);
      expect(codeOf(await get("/seasons/99999"))).toEqual([404, "NO_SEASON"]);
      const seasons = await get("/seasons");
      expect(seasons.json.seasons[0]).toMatchObject({
        number: l.json.next_season.number,
        status: "upcoming",
        decided: false,
        winners: [],
      });
      expect(seasons.json.seasons.at(-1).number).toBe(1);
      const one = await get(`/seasons/${l.json.season.number}`);
      expect(one.status, one.text).toBe(200);
      expect(one.json).toMatchObject({ season: l.json.season.number, payouts: [], winners: [], settled_at: null });
      const reserve = await get("/reserve");
      expect(reserve.json).toMatchObject({ on: true, rows: [], rules: { split_bps: [5000, 3000, 2000] } });
    },
  );

  it("are limited per client address (60, then 2 per second): 429 RATE_LIMITED with Retry-After", async () => {
    const limited = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: stack.store.db,
      clock: () => Date.now() + offsetMs,
      limiter: new RateLimiter(() => Date.now() + offsetMs),
      league: { settleIntervalMs: 0 },
    });
    try {
      let ok = 0;
      let last: Awaited<ReturnType<typeof limited.call>> | null = null;
      for (let i = 0; i < 200; i++) {
        last = await limited.call("GET", i % 2 ? "/api/v1/league/seasons" : "/api/v1/league/reserve");
        if (last.status !== 200) break;
        ok++;
      }
      // The burst of 60 (and what refilled meanwhile), then a refusal.
      expect(ok).toBeGreaterThanOrEqual(60);
      expect(codeOf(last!)).toEqual([429, "RATE_LIMITED"]);
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
