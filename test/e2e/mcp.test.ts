import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";
import { walletSignatures } from "../helpers/sessions.js";
import { httpRequestDuration } from "../../lib/metrics.js";

/**
 * The MCP server at /mcp (issue 19 part 3) through the SDK's own client over Streamable HTTP:
 * the tools answer what REST answers for the same key, prepare_trade hands back an unsigned plan,
 * and the agent signs it itself and relays it through REST: nothing asks for a private key.
 */
type Account = ReturnType<typeof privateKeyToAccount>;
type ToolResult = { content: { type: string; text: string }[]; isError?: boolean; structuredContent?: unknown };
const TOOLS = [
  "config",
  "tokens",
  "quote",
  "portfolio",
  "trades",
  "league",
  "fast_terms",
  "prepare_trade",
  "prepare_session",
  "prepare_league_statement",
  "token",
  "follow_trade",
];

let stack: Stack;
let account: Account;
let key: string;
let keyed: Client;
let keyless: Client;

async function connect(headers: Record<string, string>, path = "/mcp"): Promise<Client> {
  const client = new Client({ name: "mcp-e2e", version: "0.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), { requestInit: { headers } }),
  );
  return client;
}

/** A tool's answer: isError and the JSON of its first text block (the REST answer), also its structured content. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const json = JSON.parse(r.content[0]!.text);
  // A success is structured too (the client has held it to the tool's output schema); a refusal is text alone.
  expect(r.structuredContent, name).toEqual(r.isError ? undefined : json);
  return { isError: r.isError === true, json, texts: r.content.map((c) => c.text) };
}

const tradeArgs = () => ({ token_in: "ETH", token_out: "USDG", notional_usd: 25 });

beforeAll(async () => {
  stack = await startStack({ before: freshenMarket });
  account = await stack.dn.freshWallet(parseEther("10"));
  key = await stack.agent.signIn(account);
  keyed = await connect({ authorization: `Bearer ${key}` });
  keyless = await connect({});
}, 180_000);
afterAll(async () => {
  await keyed?.close();
  await keyless?.close();
  await stack?.stop();
});

describe("MCP at /mcp", () => {
  it("lists every tool with a JSON object input schema, none asking for a key, secret or mnemonic", async () => {
    const { tools } = await keyed.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.description, t.name).toBeTruthy();
      const names = Object.keys(t.inputSchema.properties ?? {});
      expect(
        names.filter((n) => /key|secret|private|mnemonic/i.test(n)),
        t.name,
      ).toEqual([]);
    }
    expect(tools.find((t) => t.name === "prepare_trade")!.inputSchema.required).toEqual(
      expect.arrayContaining(["wallet", "token_in", "token_out"]),
    );
    // Every argument says what it is; the list never changes, so no change is announced.
    const undescribed = tools.flatMap((t) =>
      Object.entries((t.inputSchema.properties ?? {}) as Record<string, { description?: string }>)
        .filter(([, p]) => !p.description)
        .map(([n]) => `${t.name}.${n}`),
    );
    expect(undescribed).toEqual([]);
    expect(keyed.getServerCapabilities()?.tools?.listChanged ?? false).toBe(false);
    // Every tool declares its answer as its output schema: a route's answer, or (league, follow_trade) its parts'.
    const outputs = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema]));
    for (const name of TOOLS) {
      expect(outputs[name]?.type, name).toBe("object");
      expect(Object.keys(outputs[name]?.properties ?? {}).length, name).toBeGreaterThanOrEqual(2);
    }
    // prepare_trade answers a plan, or with action revoke the revocation's plan: one object holding both, the
    // fields both carry required (the official client holds every structured answer to it, as below).
    const prepare = outputs.prepare_trade as { properties: Record<string, unknown>; required?: string[] };
    expect(prepare.properties).toHaveProperty("amount_out_min");
    expect(prepare.properties).toHaveProperty("nothing_to_revoke");
    expect(prepare.required).toEqual(expect.arrayContaining(["steps", "ready"]));
    expect(prepare.required).not.toContain("amount_out_min");
    expect(Object.keys(outputs.league?.properties ?? {})).toEqual(["league", "standings"]);
    expect(Object.keys(outputs.follow_trade?.properties ?? {})).toEqual(["wallet", "trade"]);
  });

  it("refuses an argument REST does not know as REST refuses it, never dropping it on the way", async () => {
    const rest = await stack.agent.get("/tokens?lim=1", key);
    expect(rest.status).toBe(400);
    const tool = await call(keyed, "tokens", { lim: 1 });
    expect(tool.isError).toBe(true);
    expect(tool.json.error.code).toBe(rest.json.error.code);
    const trades = await call(keyed, "trades", { limit: 5, colour: "red" });
    expect(trades.isError).toBe(true);
    expect(trades.json.error.code).toBe((await stack.agent.get("/me/trades?limit=5&colour=red", key)).json.error.code);
  });

  it("looks up one token as GET tokens/<address> answers it, and asks for the address", async () => {
    const usdg = stack.dn.token("USDG");
    const tool = await call(keyed, "token", { address: usdg });
    expect(tool.isError, JSON.stringify(tool.json)).toBe(false);
    const rest = await stack.agent.get(`/tokens/${usdg}`, key);
    expect(tool.json.address).toBe(rest.json.address);
    expect(tool.json.tradable).toBe(rest.json.tradable);
    const missing = await call(keyed, "token", {});
    expect(missing.isError).toBe(true);
    expect(missing.json.error.code).toBe("BAD_REQUEST");
    // A dot segment never walks the path to another route; a slash stays inside the one segment.
    for (const address of ["..", "."])
      expect((await call(keyed, "token", { address })).json.error.code).toBe("BAD_REQUEST");
    const slash = await call(keyed, "token", { address: "../../me/trades" });
    expect(slash.isError).toBe(true);
    expect(slash.json.trades).toBeUndefined();
  });

  it("counts a tool call once in the request metrics: its /mcp request, not the REST call made inside", async () => {
    /** Requests counted for `route` in this process's pit_http_request_duration_seconds, any method and status. */
    const counted = async (route: string) =>
      (await httpRequestDuration.get()).values
        .filter((v) => v.metricName === "pit_http_request_duration_seconds_count" && v.labels.route === route)
        .reduce((a, v) => a + v.value, 0);
    const [mcp, tokens] = [await counted("/mcp"), await counted("/api/v1/tokens/:address")];
    expect((await call(keyed, "token", { address: stack.dn.token("USDG") })).isError).toBe(false);
    expect(await counted("/mcp")).toBe(mcp + 1);
    expect(await counted("/api/v1/tokens/:address")).toBe(tokens);
    // A REST call of its own is counted as before.
    await stack.agent.get(`/tokens/${stack.dn.token("USDG")}`, key);
    expect(await counted("/api/v1/tokens/:address")).toBe(tokens + 1);
  });

  it("takes the key from the URL for a client that cannot set headers", async () => {
    const headerless = await connect({}, `/mcp?key=${key}`);
    try {
      const portfolio = await call(headerless, "portfolio");
      expect(portfolio.isError, JSON.stringify(portfolio.json)).toBe(false);
      expect(portfolio.json.wallet).toBe(account.address.toLowerCase());
    } finally {
      await headerless.close();
    }
  });

  it("answers config, quote, portfolio and league as REST does", async () => {
    const config = await call(keyed, "config");
    expect(config.isError).toBe(false);
    expect(config.json).toEqual((await stack.api.call("GET", "/api/v1/config")).json);
    expect(config.json.chain_id).toBe(4663);

    const quote = await call(keyed, "quote", tradeArgs());
    expect(quote.isError, JSON.stringify(quote.json)).toBe(false);
    expect(quote.json.best).toBeTruthy();

    const portfolio = await call(keyed, "portfolio");
    expect(portfolio.isError, JSON.stringify(portfolio.json)).toBe(false);
    expect(portfolio.json.wallet).toBe(account.address.toLowerCase());

    const league = await call(keyless, "league");
    expect(league.isError, JSON.stringify(league.json)).toBe(false);
    expect(league.json.league.season).toBeTruthy();
    expect(league.json.standings.board).toBe("prize");

    const tokens = await call(keyed, "tokens", { q: "USDG", limit: 5 });
    expect(tokens.isError, JSON.stringify(tokens.json)).toBe(false);
    expect(tokens.json.tokens.some((t: { symbol: string }) => t.symbol === "USDG")).toBe(true);
  });

  it("answers a keyed tool without the key as REST does (UNAUTHORIZED), and REST refusals as tool errors", async () => {
    const rest = await stack.api.call("GET", "/api/v1/me/portfolio");
    for (const name of ["portfolio", "trades", "tokens"]) {
      const r = await call(keyless, name);
      expect(r.isError, name).toBe(true);
      expect(r.json.error.code, name).toBe(rest.json.error.code);
    }
    expect(rest.json.error.code).toBe("UNAUTHORIZED");
    const other = await stack.dn.freshWallet(parseEther("1"));
    const mismatch = await call(keyed, "prepare_trade", { wallet: other.address, ...tradeArgs() });
    expect(mismatch.isError).toBe(true);
    expect(mismatch.json.error.code).toBe("WALLET_MISMATCH");
  });

  it("prepares an unsigned plan the agent signs itself and relays through REST", async () => {
    const config = (await call(keyed, "config")).json;
    const plan = await call(keyed, "prepare_trade", { wallet: account.address, ...tradeArgs() });
    expect(plan.isError, JSON.stringify(plan.json)).toBe(false);
    expect(plan.json.ready).toBe(true);
    expect(plan.json.tx.to.toLowerCase()).toBe(config.router.toLowerCase());
    expect(plan.texts[1]).toMatch(/never holds or asks for a private key/);

    const raw = await stack.agent.sign(account, plan.json.tx);
    const submitted = await stack.agent.post("/live/submit", { raw_tx: raw }, key);
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(200);
    const receipt = await stack.dn.mined(submitted.json.tx_hash as Hex);
    expect(receipt.status).toBe("success");
    expect(receipt.from.toLowerCase()).toBe(account.address.toLowerCase());

    const trades = await call(keyed, "trades", { limit: 5 });
    expect(trades.json.trades.map((t: { tx_hash: string }) => t.tx_hash)).toContain(submitted.json.tx_hash);

    // Followed by its hash (any case) until the relay watcher has it mined.
    const hash = String(submitted.json.tx_hash);
    let followed = await call(keyed, "follow_trade", { tx_hash: hash.toUpperCase().replace("0X", "0x") });
    for (let i = 0; i < 50 && followed.json.trade?.status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      followed = await call(keyed, "follow_trade", { tx_hash: hash });
    }
    expect(followed.isError, JSON.stringify(followed.json)).toBe(false);
    expect(followed.json.trade).toMatchObject({ tx_hash: hash, status: "mined" });
    const unknown = await call(keyed, "follow_trade", { tx_hash: `0x${"ab".repeat(32)}` });
    expect(unknown.isError).toBe(true);
    expect(unknown.json.error.code).toBe("NOT_FOUND");
  });

  it("prepares a session grant the wallet signs itself and switches on through REST", async () => {
    const executor = privateKeyToAccount(generatePrivateKey()).address;
    const started = await call(keyed, "prepare_session", {
      wallet: account.address,
      executor,
      max_trade_usd: 20,
      max_trades: 3,
      expires_in_s: 3_600,
    });
    expect(started.isError, JSON.stringify(started.json)).toBe(false);
    expect(started.json).toMatchObject({ status: "pending", executor });
    expect(started.texts[1]).toMatch(/never holds or asks for a private key/);
    const { body } = await walletSignatures(account, started.json);
    const on = await stack.agent.post("/live/session/grant", body, key);
    expect(on.status, JSON.stringify(on.json)).toBe(200);
    expect(on.json.status).toBe("active");
  });

  it("reads fast terms and league statements as REST answers them", async () => {
    const terms = await call(keyed, "fast_terms");
    const rest = await stack.agent.get("/live/fast/terms", key);
    expect(terms.json.routes.sha256).toBe(rest.json.routes.sha256);
    const statement = await call(keyed, "prepare_league_statement", { agent_id: 987654 });
    const restStatement = await stack.agent.post("/league/statement", { agent_id: 987654 }, key);
    expect(statement.isError).toBe(true);
    expect(statement.json.error.code).toBe(restStatement.json.error.code);
  });

  it("is stateless: GET and DELETE on /mcp are 405 with Allow POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await stack.api.call(method, "/mcp");
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
      expect(r.json.error.code).toBe("METHOD_NOT_ALLOWED");
    }
  });
});
