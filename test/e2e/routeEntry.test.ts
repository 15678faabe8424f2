import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { mount, route } from "../../api/http/route.js";
import { MOUNTS } from "../../api/routes.js";
import type { Services } from "../../api/services.js";
import { agentOf } from "../helpers/agent.js";
import { freshStore, serveApi, type Api } from "../helpers/api.js";
import { startDevnet, type Devnet } from "../helpers/devnet.js";

/**
 * Issue 27 point 1: a route is one entry. A fixture route declared only as an entry (its domain's
 * service picked by its mount) is served by the app, described by the OpenAPI document, limited by
 * its own buckets and offered as an MCP tool, with nothing written anywhere else.
 */
type EchoService = { greeting: string };
const echoQuery = z.object({ name: z.string().min(1).max(20) }).strict();
const echo = route<EchoService, Record<string, unknown>, z.infer<typeof echoQuery>>({
  method: "get",
  path: "/fixture/echo",
  auth: "key",
  limits: [["fixtureEcho", { burst: 3, perSecond: 0.001 }, "key"]],
  summary: "A fixture: greets the name it is given",
  query: echoQuery,
  answer: z.object({ greeting: z.string() }),
  errors: ["UNAUTHORIZED", "RATE_LIMITED"],
  mcp: {
    name: "fixture_echo",
    description: "Greets a name (a test fixture).",
    input: z.object({ name: z.string() }),
    readOnly: true,
  },
  handle: ({ query }, s) => ({ greeting: `${s.greeting}, ${query.name}` }),
});
const withFixture = [...MOUNTS, mount<Services, EchoService>([echo], () => ({ greeting: "hello" }))];

let dn: Devnet;
let store: Awaited<ReturnType<typeof freshStore>>;
let api: Api;
let key: string;
beforeAll(async () => {
  dn = await startDevnet();
  store = await freshStore();
  api = await serveApi({ rpcUrl: dn.anvil.rpcUrl, db: store.db, mounts: withFixture });
  key = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
}, 120_000);
afterAll(async () => {
  await api?.close();
  await store?.drop();
  await dn?.stop();
});

const auth = () => ({ authorization: `Bearer ${key}` });

describe("a route declared as one entry", () => {
  it(
    "is served: its query parsed at the edge (a bad one is 400 BAD_REQUEST), its answer from its own " + "service",
    async () => {
      const ok = await api.call("GET", "/api/v1/fixture/echo?name=ada", undefined, auth());
      expect([ok.status, ok.json]).toEqual([200, { greeting: "hello, ada" }]);
      const bad = await api.call("GET", "/api/v1/fixture/echo?name=ada&x=1", undefined, auth());
      expect([bad.status, bad.json?.error?.code]).toEqual([400, "BAD_REQUEST"]);
      const keyless = await api.call("GET", "/api/v1/fixture/echo?name=ada");
      expect([keyless.status, keyless.json?.error?.code]).toEqual([401, "UNAUTHORIZED"]);
    },
  );

  it("is in the OpenAPI document with its query, security, answer and codes", async () => {
    const doc = (await api.call("GET", "/api/v1/openapi.json")).json;
    const op = doc.paths["/fixture/echo"]?.get;
    expect(op).toBeDefined();
    expect(op.summary).toBe("A fixture: greets the name it is given");
    expect(op.security).toEqual([{ apiKey: [] }]);
    expect(op.parameters).toEqual([expect.objectContaining({ name: "name", in: "query", required: true })]);
    // The answer is a component, named after the operation, generated from the entry's answer schema.
    const answer = op.responses["200"].content["application/json"].schema;
    expect(answer).toEqual({ $ref: "#/components/schemas/GetFixtureEchoAnswer" });
    expect(doc.components.schemas.GetFixtureEchoAnswer.required).toEqual(["greeting"]);
    expect(op.tags).toEqual(["Other"]);
    expect(op.responses["429"].description).toContain("RATE_LIMITED");
  });

  it("is an MCP tool that calls the route as the caller", async () => {
    const client = new Client({ name: "fixture", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: auth() } }),
    );
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === "fixture_echo");
      expect(tool?.description).toContain("Greets a name");
      expect(tool?.description).toContain("Needs the API key");
      const r = (await client.callTool({ name: "fixture_echo", arguments: { name: "bob" } })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      expect(r.isError).toBe(false);
      expect(JSON.parse(r.content[0]!.text)).toEqual({ greeting: "hello, bob" });
    } finally {
      await client.close();
    }
  });

  it("spends its own bucket: past its burst, 429 RATE_LIMITED with Retry-After", async () => {
    const fresh = await agentOf(api, dn).signIn(privateKeyToAccount(generatePrivateKey()));
    const h = { authorization: `Bearer ${fresh}` };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await api.call("GET", "/api/v1/fixture/echo?name=c", undefined, h)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await api.call("GET", "/api/v1/fixture/echo?name=c", undefined, h);
    expect(refused.json?.error?.code).toBe("RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
