import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openMigratedMemory } from "../ports/store/memory.js";
import {
  custom,
  decodeFunctionData,
  encodeFunctionResult,
  getAddress,
  recoverMessageAddress,
  zeroAddress,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { partnerAgentVaultAbi, sanctionsListAbi } from "../../abis/fixtures.js";
import { loadConfig } from "../../lib/config.js";
import { LEAGUE_EPOCH_S, SEASON_S } from "../../lib/league/calendar.js";
import { ELIGIBILITY_LINE, STATEMENT_TTL_S } from "../../lib/league/statement.js";
import { assertNotSanctioned } from "../auth/index.js";
import { Refusal } from "../errors/index.js";
import type { Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import {
  leagueConfirm,
  leagueEnter,
  leagueLeave,
  leagueMe,
  leagueStatement,
  leaveHosted,
  type LeagueDeps,
  type LeagueHostedAgent,
} from "./entries.js";
import { publicClient } from "../../lib/chain.js";

const config = loadConfig({});

type Agent = { token: Address; symbol: string; name: string; owner: Address; agentWallet: Address };

/**
 * The partner vault and the sanctions list as the chain answers them: a viem client whose eth_call
 * decodes the real ABIs and answers from these maps (the module reads nothing else from the chain).
 */
function fakeChain() {
  const agents: Agent[] = [];
  const sanctioned = new Set<string>();
  const state = { down: false };
  const request = async ({ method, params }: { method: string; params?: unknown }) => {
    if (method !== "eth_call") throw new Error(`unexpected ${method}`);
    if (state.down) throw new Error("node down");
    const { to, data } = (params as [{ to: Address; data: Hex }])[0];
    if (getAddress(to) === getAddress(config.contracts.partnerAgentVault)) {
      const call = decodeFunctionData({ abi: partnerAgentVaultAbi, data });
      if (call.functionName === "agentCount")
        return encodeFunctionResult({
          abi: partnerAgentVaultAbi,
          functionName: "agentCount",
          result: BigInt(agents.length),
        });
      if (call.functionName === "getAgent") {
        const a = agents[Number(call.args[0]) - 1];
        const none = { token: zeroAddress, symbol: "", name: "", owner: zeroAddress, agentWallet: zeroAddress };
        return encodeFunctionResult({ abi: partnerAgentVaultAbi, functionName: "getAgent", result: a ?? none });
      }
    }
    if (getAddress(to) === getAddress(config.contracts.sanctionsList)) {
      const call = decodeFunctionData({ abi: sanctionsListAbi, data });
      if (call.functionName === "isSanctioned")
        return encodeFunctionResult({
          abi: sanctionsListAbi,
          functionName: "isSanctioned",
          result: sanctioned.has(call.args[0].toLowerCase()),
        });
    }
    throw new Error(`no contract answers at ${to}`);
  };
  const client = publicClient({ transport: custom({ request }, { retryCount: 0 }) });
  return { client, agents, sanctioned, state };
}

/** A partner agent registered in the vault: answers its id. */
function register(chain: ReturnType<typeof fakeChain>, owner: Address, agentWallet: Address, symbol = "AGT"): number {
  chain.agents.push({
    token: `0x${"7".repeat(39)}${chain.agents.length + 1}`,
    symbol,
    name: `Agent ${symbol}`,
    owner,
    agentWallet,
  });
  return chain.agents.length;
}

const rejectsWith = async (p: Promise<unknown>, code: string) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected the refusal ${code}`).toBeInstanceOf(Refusal);
  expect((err as Refusal).code).toBe(code);
  return err as Refusal;
};

let db: Db;
let nowMs: number;
let chain: ReturnType<typeof fakeChain>;
let hosted: Map<string, LeagueHostedAgent>;
let d: LeagueDeps;
const owner = privateKeyToAccount(generatePrivateKey());
const trader = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const agentWallet = privateKeyToAccount(generatePrivateKey()).address;
const by = (a: PrivateKeyAccount) => ({ wallet: a.address, keyId: 1 });
/** Day 3 of season 4. */
const SEASON_4_DAY_3_MS = (LEAGUE_EPOCH_S + 3 * SEASON_S + 2 * 86_400) * 1000;

/**
 * One migrated store for the file (a migration takes seconds), emptied of accounts and league rows before each
 * test.
 */
beforeAll(async () => {
  db = await openMigratedMemory();
  await migrate(db);
});
afterAll(async () => {
  await db.close();
});
beforeEach(async () => {
  await db.query("DELETE FROM app.league_entries");
  await db.query("DELETE FROM app.league_statements");
  await db.query("DELETE FROM app.accounts");
  nowMs = SEASON_4_DAY_3_MS;
  chain = fakeChain();
  hosted = new Map();
  d = {
    config,
    chain: chain.client,
    db,
    clock: () => nowMs,
    assertNotSanctioned: (address, field) => assertNotSanctioned({ chain: chain.client, config }, address, field),
    hostedAgent: async (id) => hosted.get(id) ?? null,
  };
});

/** The owner's statement for `who`'s entry, signed by `signer` (EIP-191 over the served text). */
async function signedStatement(who: PrivateKeyAccount, agentId: number, signer: PrivateKeyAccount, extra = {}) {
  const st = await leagueStatement(d, { agent_id: agentId, ...extra }, by(who));
  return { st, signature: await signer.signMessage({ message: st.message }), nonce: st.nonce };
}

describe("league entries: the prize board", () => {
  it("serves a statement the owner signs for exactly this board, agent, entrant and chain", async () => {
    const id = register(chain, owner.address, agentWallet);
    const st = await leagueStatement(d, { agent_id: id }, by(trader));
    expect(st).toMatchObject({
      agent_id: id,
      board: "prize",
      owner: owner.address,
      entrant: `prize league: trading wallet ${trader.address.toLowerCase()}`,
      expires_at: Math.floor(nowMs / 1000) + STATEMENT_TTL_S,
    });
    expect(st.nonce).toMatch(/^[0-9a-f]{32}$/);
    const lines = st.message.split("\n");
    expect(lines).toContain(`Agent: ${id}`);
    expect(lines).toContain(`Owner: ${owner.address.toLowerCase()}`);
    expect(lines).toContain(`Nonce: ${st.nonce}`);
    expect(lines).toContain(ELIGIBILITY_LINE);
    expect(lines.at(-1)).toBe(`Chain: ${config.chainId}`);
    // Anyone can check the owner's signature over the served text.
    const signature = await owner.signMessage({ message: st.message });
    expect(await recoverMessageAddress({ message: st.message, signature })).toBe(owner.address);
  });

  it("enters a trading wallet with the owner's signed statement: confirmed at once, from the next season", async () => {
    const id = register(chain, owner.address, agentWallet);
    const { signature, nonce } = await signedStatement(trader, id, owner);
    const entry = await leagueEnter(d, { agent_id: id, signature, nonce }, by(trader));
    expect(entry).toMatchObject({
      board: "prize",
      agent_id: id,
      kind: "wallet",
      wallet: trader.address,
      owner: owner.address,
      agent_wallet: agentWallet,
      status: "active",
      proof: "statement",
      confirmed: true,
      confirmed_at: Math.floor(nowMs / 1000),
      from_season: 5,
      playing: false,
      season: 4,
      left_at: null,
    });
    expect(entry.entry_id).toMatch(/^le_[0-9a-f]{16}$/);
    expect(entry.note).toMatch(/^plays from Season 5 \(/);
    // The statement was used: the same signature enters nothing again, even after leaving.
    await leagueLeave(d, {}, by(trader));
    await rejectsWith(leagueEnter(d, { agent_id: id, signature, nonce }, by(trader)), "STATEMENT_EXPIRED");
    // Once season 5 begins, an entry made then plays from season 6; the first one left.
    nowMs += SEASON_S * 1000;
    expect((await leagueMe(d, by(trader))).entries).toMatchObject([{ status: "left", playing: false, season: 5 }]);
  });

  it("lets the owner enter with its own key unconfirmed, then confirm with a signed statement once", async () => {
    const id = register(chain, owner.address, agentWallet);
    const entry = await leagueEnter(d, { agent_id: id }, by(owner));
    expect(entry).toMatchObject({ proof: "owner_key", confirmed: false, confirmed_at: null });
    expect(entry.note).toContain("wins nothing until the owner confirms eligibility");
    // A wallet that is not the owner cannot enter without the owner's statement.
    const other = register(chain, owner.address, agentWallet, "OTH");
    await rejectsWith(leagueEnter(d, { agent_id: other }, by(trader)), "NOT_OWNER");

    const { signature, nonce } = await signedStatement(owner, id, owner);
    nowMs += 60_000;
    const confirmed = await leagueConfirm(d, { agent_id: id, signature, nonce }, by(owner));
    expect(confirmed).toMatchObject({
      entry_id: entry.entry_id,
      confirmed: true,
      confirmed_at: Math.floor(nowMs / 1000),
    });
    // The nonce is good once.
    await rejectsWith(leagueConfirm(d, { agent_id: id, signature, nonce }, by(owner)), "STATEMENT_EXPIRED");
    // Playing from the next season, as the entrant's list shows.
    nowMs += SEASON_S * 1000;
    const me = await leagueMe(d, by(owner));
    expect(me.entries).toMatchObject([
      { entry_id: entry.entry_id, status: "active", playing: true, season: 5, confirmed: true },
    ]);
    // The wallet in the case every other answer names it (me/portfolio, me/trades, auth/verify): lowercase.
    expect(me.wallet).toBe(owner.address.toLowerCase());
  });

  it("refuses a statement signed by anyone but the owner, and leaves it good for the owner's signature", async () => {
    const id = register(chain, owner.address, agentWallet);
    const { nonce, st } = await signedStatement(trader, id, owner);
    const forged = await stranger.signMessage({ message: st.message });
    const err = await rejectsWith(leagueEnter(d, { agent_id: id, signature: forged, nonce }, by(trader)), "NOT_OWNER");
    expect(err.extra).toEqual({ owner: owner.address });
    // A signature by the trading wallet itself proves nothing either.
    const own = await trader.signMessage({ message: st.message });
    await rejectsWith(leagueEnter(d, { agent_id: id, signature: own, nonce }, by(trader)), "NOT_OWNER");
    expect((await leagueMe(d, by(trader))).entries).toEqual([]);
    // Not a signature at all.
    await rejectsWith(
      leagueEnter(d, { agent_id: id, signature: `0x${"00".repeat(65)}`, nonce }, by(trader)),
      "BAD_SIGNATURE",
    );
    const signature = await owner.signMessage({ message: st.message });
    expect(await leagueEnter(d, { agent_id: id, signature, nonce }, by(trader))).toMatchObject({ confirmed: true });
  });

  it("refuses a statement past its 10 minutes, unknown, or issued to another wallet", async () => {
    const id = register(chain, owner.address, agentWallet);
    const late = await signedStatement(trader, id, owner);
    nowMs += STATEMENT_TTL_S * 1000;
    await rejectsWith(
      leagueEnter(d, { agent_id: id, signature: late.signature, nonce: late.nonce }, by(trader)),
      "STATEMENT_EXPIRED",
    );
    await rejectsWith(
      leagueEnter(d, { agent_id: id, signature: late.signature, nonce: "ab".repeat(16) }, by(trader)),
      "STATEMENT_EXPIRED",
    );
    // The owner's statement for the trader's wallet does not enter the stranger's.
    const theirs = await signedStatement(trader, id, owner);
    await rejectsWith(
      leagueEnter(d, { agent_id: id, signature: theirs.signature, nonce: theirs.nonce }, by(stranger)),
      "STATEMENT_MISMATCH",
    );
    // Nor another agent of the same owner.
    const second = register(chain, owner.address, agentWallet, "TWO");
    await rejectsWith(
      leagueEnter(d, { agent_id: second, signature: theirs.signature, nonce: theirs.nonce }, by(trader)),
      "STATEMENT_MISMATCH",
    );
    await rejectsWith(leagueEnter(d, { agent_id: id, nonce: theirs.nonce }, by(trader)), "BAD_REQUEST");
  });

  it("refuses a sanctioned wallet, owner or agent wallet, and writes nothing", async () => {
    const id = register(chain, owner.address, agentWallet);
    const { signature, nonce } = await signedStatement(trader, id, owner);
    for (const [address, field] of [
      [trader.address, "wallet"],
      [owner.address, "owner"],
      [agentWallet, "agent_wallet"],
    ] as const) {
      chain.sanctioned.add(address.toLowerCase());
      const err = await rejectsWith(leagueEnter(d, { agent_id: id, signature, nonce }, by(trader)), "SANCTIONED");
      expect(err.extra).toEqual({ address, field });
      await rejectsWith(leagueStatement(d, { agent_id: id }, by(trader)), "SANCTIONED");
      chain.sanctioned.clear();
    }
    expect((await leagueMe(d, by(trader))).entries).toEqual([]);
    expect(await leagueEnter(d, { agent_id: id, signature, nonce }, by(trader))).toMatchObject({ confirmed: true });
  });

  it("refuses an agent the vault does not have, and says when the vault cannot be read", async () => {
    register(chain, owner.address, agentWallet);
    await rejectsWith(leagueStatement(d, { agent_id: 2 }, by(trader)), "NOT_AN_AGENT");
    await rejectsWith(leagueEnter(d, { agent_id: 2 }, by(owner)), "NOT_AN_AGENT");
    chain.state.down = true;
    const err = await rejectsWith(leagueEnter(d, { agent_id: 1 }, by(owner)), "LEAGUE_UNAVAILABLE");
    expect(err.retryAfterS).toBe(5);
  });

  it("keeps one entry per agent and per trading wallet on the board, until it leaves", async () => {
    const id = register(chain, owner.address, agentWallet);
    const other = register(chain, owner.address, agentWallet, "OTH");
    await leagueEnter(d, { agent_id: id }, by(owner));
    await rejectsWith(leagueEnter(d, { agent_id: other }, by(owner)), "ALREADY_ENTERED");
    await rejectsWith(leagueStatement(d, { agent_id: other }, by(owner)), "ALREADY_ENTERED");
    await rejectsWith(leagueStatement(d, { agent_id: id }, by(trader)), "AGENT_ENTERED");
    // Only the entering wallet or the owner takes an entry out.
    await rejectsWith(leagueLeave(d, { agent_id: id }, by(stranger)), "FORBIDDEN");
    await rejectsWith(leagueLeave(d, {}, by(stranger)), "NOT_ENTERED");
    const left = await leagueLeave(d, { agent_id: id }, by(owner));
    expect(left).toMatchObject({ left: true, status: "left", left_at: Math.floor(nowMs / 1000) });
    const unused = { signature: `0x${"11".repeat(65)}`, nonce: "ab".repeat(16) };
    await rejectsWith(leagueConfirm(d, { agent_id: id, ...unused }, by(owner)), "NOT_ENTERED");
    // Free again: the trader enters the same agent with a new statement.
    const again = await signedStatement(trader, id, owner);
    const entry = await leagueEnter(d, { agent_id: id, signature: again.signature, nonce: again.nonce }, by(trader));
    expect(entry).toMatchObject({ status: "active", wallet: trader.address });
    // The owner's list still holds its own entry that left; the confirm is the entry's trading wallet's only.
    expect((await leagueMe(d, by(owner))).entries).toMatchObject([{ status: "left" }]);
    const st = await signedStatement(trader, id, owner);
    await rejectsWith(
      leagueConfirm(d, { agent_id: id, signature: st.signature, nonce: st.nonce }, by(owner)),
      "FORBIDDEN",
    );
  });

  it("refuses a confirmation once the vault's owner changed since entry", async () => {
    const id = register(chain, owner.address, agentWallet);
    await leagueEnter(d, { agent_id: id }, by(owner));
    const { signature, nonce } = await signedStatement(owner, id, owner);
    chain.agents[id - 1] = { ...chain.agents[id - 1]!, owner: stranger.address };
    const err = await rejectsWith(leagueConfirm(d, { agent_id: id, signature, nonce }, by(owner)), "NOT_OWNER");
    expect(err.extra).toEqual({ owner: owner.address });
    expect((await leagueMe(d, by(owner))).entries).toMatchObject([{ confirmed: false }]);
  });
});

describe("league entries: the practice board", () => {
  const paper = (over: Partial<LeagueHostedAgent> = {}): LeagueHostedAgent => ({
    id: "ha_one",
    name: "one",
    wallet: owner.address,
    mode: "paper",
    status: "running",
    pairs: ["ETH/USDG", "USDG/WBTC"],
    intervalS: 300,
    deletedAt: null,
    paperBook: null,
    brainState: null,
    ...over,
  });

  it("enters a hosted paper agent with no confirmation, and takes it out when the agent stops", async () => {
    const id = register(chain, owner.address, agentWallet);
    hosted.set("ha_one", paper());
    const entry = await leagueEnter(d, { agent_id: id, hosted_id: "ha_one" }, by(owner));
    expect(entry).toMatchObject({ board: "practice", kind: "hosted", hosted_id: "ha_one", confirmed: null });
    expect(entry.note).not.toContain("confirm");
    // The same agent may play the prize board beside it.
    expect(await leagueEnter(d, { agent_id: id }, by(owner))).toMatchObject({ board: "prize" });
    await leaveHosted(d, "ha_one");
    expect((await leagueMe(d, by(owner))).entries).toMatchObject([
      { board: "prize", status: "active" },
      { board: "practice", status: "left" },
    ]);
  });

  it("plays only paper agents of this wallet that trade the practice pairs at most every 300 s", async () => {
    const id = register(chain, owner.address, agentWallet);
    const enter = (over: Partial<LeagueHostedAgent>, body: Record<string, unknown> = {}) => {
      hosted.set("ha_one", paper(over));
      return leagueEnter(d, { agent_id: id, hosted_id: "ha_one", ...body }, by(owner));
    };
    await rejectsWith(enter({}, { board: "prize" }), "PRIZE_IS_LIVE");
    await rejectsWith(enter({ mode: "live" }), "LEAGUE_PAPER_ONLY");
    await rejectsWith(enter({ pairs: ["TSLA/USDG"] }), "LEAGUE_PAIRS");
    await rejectsWith(enter({ pairs: ["ETH/WBTC"] }), "LEAGUE_PAIRS");
    await rejectsWith(enter({ intervalS: 299 }), "LEAGUE_INTERVAL");
    await rejectsWith(enter({ status: "stopped" }), "STOPPED");
    await rejectsWith(enter({ wallet: stranger.address }), "FORBIDDEN");
    await rejectsWith(enter({ deletedAt: 1 }), "NOT_FOUND");
    expect((await leagueMe(d, by(owner))).entries).toEqual([]);
  });

  it("enters the wallet's exchange account, which needs one", async () => {
    const id = register(chain, owner.address, agentWallet);
    await rejectsWith(leagueEnter(d, { agent_id: id, board: "practice" }, by(owner)), "WALLET_NOT_BOUND");
    const [acct] = await db.query<{ id: string }>(
      "INSERT INTO app.accounts (wallet, name, created_at) VALUES ($1, 'acct', 0) RETURNING id::text AS id",
      [owner.address.toLowerCase()],
    );
    const entry = await leagueEnter(d, { agent_id: id, board: "practice" }, by(owner));
    expect(entry).toMatchObject({ board: "practice", kind: "account", confirmed: null, proof: "owner_key" });
    await rejectsWith(leagueEnter(d, { agent_id: id, board: "practice" }, by(owner)), "ALREADY_ENTERED");
    const st = await leagueStatement(d, { agent_id: id, board: "practice" }, by(owner));
    expect(st.entrant).toBe(`practice board: account ${acct!.id}`);
    expect(st.message).not.toContain(ELIGIBILITY_LINE);
    expect(await leagueLeave(d, { board: "practice" }, by(owner))).toMatchObject({ left: true, kind: "account" });
  });
});
