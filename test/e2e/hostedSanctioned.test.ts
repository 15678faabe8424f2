import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, type Hex } from "viem";
import { sanctionsListAbi } from "../../abis/fixtures.js";
import { delegationManagerAbi } from "../../abis/delegation.js";
import { serveApi, type Api } from "../helpers/api.js";
import { runSetup, walletSignatures } from "../helpers/sessions.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";

/**
 * SPEC "Authentication" 10: a key whose wallet is sanctioned may still end what it started. Its
 * owner pauses, stops (the attached session revoked at the service, at the co-signer, then on
 * chain with the steps stop answers) and deletes its live hosted agent; every other hosted route
 * stays 451 SANCTIONED.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ before: freshenMarket, hostedScheduler: { intervalMs: 0 } });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

/** A fresh owner with ETH and USDG, signed in, its live rule agent active on a session granted to its executor. */
async function liveAgentOnSession() {
  const { dn, agent, api } = stack;
  const owner = await dn.freshWallet(parseEther("5"), [[dn.token("USDG"), parseUnits("500", 6)]]);
  const key = await agent.signIn(owner);
  const made = await hostedCall(api, key, "POST", "", {
    brain: "rule",
    params: { targets: { ETH: 0.5, USDG: 0.5 }, band_bps: 200 },
    interval_s: 60,
    pairs: ["ETH/USDG"],
    limits: { max_trade_usd: 20, max_day_usd: 40, max_position_usd: 1000 },
    mode: "live",
  });
  expect(made.status, made.text).toBe(201);
  const id: string = made.json.id;
  const st = await agent.post(
    "/live/session/grant",
    {
      wallet: owner.address,
      executor: made.json.executor,
      tokens: ["ETH", "USDG"],
      expires_in_s: 3_600,
      max_trade_usd: 50,
      max_day_usd: 120,
      max_trades: 5,
    },
    key,
  );
  expect(st.status, st.text).toBe(200);
  const { body, auth } = await walletSignatures(owner, st.json);
  const on = await agent.post("/live/session/grant", body, key);
  expect(on.status, on.text).toBe(200);
  await runSetup(stack, owner, st.json.setup.steps, auth);
  const sessionId: string = st.json.session_id;
  expect((await hostedCall(api, key, "POST", `/${id}/session`, { session_id: sessionId })).status).toBe(200);
  const resumed = await hostedCall(api, key, "POST", `/${id}/resume`);
  expect(resumed.json, resumed.text).toMatchObject({ status: "active", live: true });
  return { owner, key, id, sessionId, root: st.json.sign.delegation.delegation_hash as Hex };
}

const hostedCall = (api: Api, key: string, method: "GET" | "POST", path: string, body?: unknown) =>
  api.call(method, `/api/v1/hosted${path}`, method === "POST" ? (body ?? {}) : undefined, {
    authorization: `Bearer ${key}`,
  });

describe("a sanctioned owner's live hosted agent", () => {
  it("is paused, stopped (its session revoked at the service, the co-signer and on chain) and deleted; create, " +
    "resume, update and the rest stay 451 SANCTIONED", async () => {
    const { dn } = stack;
    const { owner, key, id, sessionId, root } = await liveAgentOnSession();
    const disabled = () =>
      dn.pub.readContract({
        address: dn.universe.contracts.delegationManager,
        abi: delegationManagerAbi,
        functionName: "disabledDelegations",
        args: [root],
      });
    expect(await disabled()).toBe(false);
    await dn.mined(
      await dn.walletFor(dn.deployer).writeContract({
        address: dn.universe.contracts.sanctionsList,
        abi: sanctionsListAbi,
        functionName: "addToSanctionsList",
        args: [[owner.address]],
      }),
    );
    // Another instance over the same store and signing services: the first trusts the owner's clean
    // answer for 60 s.
    const api = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: stack.ix.liveReads().reads,
      cosigner: stack.api.signers!.cosigner,
      executors: stack.api.signers!.executors,
      hostedScheduler: { intervalMs: 0 },
    });
    try {
      const call = (method: "GET" | "POST", path: string, body?: unknown) => hostedCall(api, key, method, path, body);
      const sanctioned = async (method: "GET" | "POST", path: string, body?: unknown) => {
        const r = await call(method, path, body);
        expect([r.status, r.json.error?.code, r.json.error?.field], `${method} ${path}`).toEqual([
          451,
          "SANCTIONED",
          "wallet",
        ]);
      };
      await sanctioned("POST", "", { brain: "rule", params: {}, interval_s: 60, pairs: ["ETH/USDG"] });
      await sanctioned("GET", `/${id}`);
      await sanctioned("POST", `/${id}/update`, { name: "x" });

      const paused = await call("POST", `/${id}/pause`);
      expect([paused.status, paused.json.status], paused.text).toEqual([200, "paused"]);
      await sanctioned("POST", `/${id}/resume`);
      await sanctioned("POST", `/${id}/session`, { session_id: sessionId });

      const stop = await call("POST", `/${id}/stop`);
      expect(stop.status, stop.text).toBe(200);
      expect(stop.json).toMatchObject({ status: "stopped", session_revoke: { session_id: sessionId } });
      const steps = stop.json.session_revoke.on_chain as { kind: string; tx: { to: Hex; data: Hex } }[];
      expect(steps.map((s) => s.kind).slice(0, 2)).toEqual(["disable_delegation", "increment_nonce"]);
      const [row] = await stack.store.db.query<{ status: string }>("SELECT status FROM app.sessions WHERE id = $1", [
        sessionId,
      ]);
      expect(row?.status).toBe("revoked");
      const [held] = await stack.api.signers!.cosignerDb.query<{ revoked_at: string | null }>(
        "SELECT revoked_at FROM app.cosigner_roots WHERE session_id = $1",
        [sessionId],
      );
      expect(held?.revoked_at).not.toBeNull();
      // The owner's own key sends the steps stop answered: the root is disabled on chain.
      for (const s of steps)
        expect(
          (await dn.mined(await dn.walletFor(owner).sendTransaction({ to: s.tx.to, data: s.tx.data }))).status,
          s.kind,
        ).toBe("success");
      expect(await disabled()).toBe(true);

      const deleted = await call("POST", `/${id}/delete`);
      expect([deleted.status, deleted.json.deleted], deleted.text).toEqual([200, true]);
      await sanctioned("POST", `/${id}/refund-gas`);
    } finally {
      await api.close();
    }
  }, 60_000);
});
