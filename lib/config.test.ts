import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getAddress } from "viem";
import { ConfigError, loadConfig } from "./config.js";
import { UNIVERSE_FILE } from "../devnet/snapshot.js";

const load = (env: Record<string, string>) => loadConfig(env);
const failsOn = (env: Record<string, string>, variable: string) => {
  try {
    load(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as Error).message).toContain(variable);
    return;
  }
  throw new Error(`expected a ConfigError for ${variable}`);
};

function universeWithout(edit: (u: Record<string, any>) => void): string {
  const u = JSON.parse(readFileSync(UNIVERSE_FILE, "utf8"));
  edit(u);
  const file = join(mkdtempSync(join(tmpdir(), "pit-universe-")), "universe.json");
  writeFileSync(file, JSON.stringify(u));
  return file;
}

describe("loadConfig", () => {
  it("gives the devnet defaults from the universe file", () => {
    const c = load({});
    expect(c.chainId).toBe(4663);
    expect(c.devnet).toBe(true);
    expect(c.port).toBe(42069);
    expect(c.rpcUrl).toBe("http://127.0.0.1:8545");
    expect(c.sequencerUrl).toBe(c.rpcUrl);
    expect(c.authDomain).toBe("localhost:42069");
    expect(c.allowedHosts).toContain("localhost:42069");
    expect(c.tokens.USDG).toMatchObject({ decimals: 6, kind: "stable", native: false });
    expect(c.tokens.ETH).toMatchObject({ address: "0x0000000000000000000000000000000000000000", native: true });
    expect(c.tokens.WBTC?.decimals).toBe(8);
    expect(c.feeRecipient).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(c.contracts.permit2).toBe("0x000000000022D473030F116dDEE9F6B43aC78BA3");
  });

  it("follows the environment", () => {
    const c = load({
      PORT: "8080",
      ANVIL_PORT: "9545",
      SEQUENCER_URL: "http://127.0.0.1:9999",
      AUTH_DOMAIN: "api.example.com",
      ALLOWED_HOSTS: "api.example.com, Internal:8080",
      PLATFORM_FEE_RECIPIENT: "0x00000000000000000000000000000000000000aa",
      REQUIRE_PARTNER_AGENT: "true",
    });
    expect(c.port).toBe(8080);
    expect(c.rpcUrl).toBe("http://127.0.0.1:9545");
    expect(c.sequencerUrl).toBe("http://127.0.0.1:9999");
    expect(c.authDomain).toBe("api.example.com");
    expect(c.allowedHosts).toEqual(["api.example.com", "internal:8080"]);
    expect(c.feeRecipient).toBe(getAddress("0x00000000000000000000000000000000000000aa"));
    expect(c.requirePartnerAgent).toBe(true);
  });

  it(
    "uses the real chain without a devnet when CHAIN_RPC_URL is set, and has no sign-in domain unless " + "configured",
    () => {
      const c = load({
        CHAIN_RPC_URL: "https://rpc.example.org",
        PLATFORM_FEE_RECIPIENT: "0x00000000000000000000000000000000000000aa",
      });
      expect(c.devnet).toBe(false);
      expect(c.rpcUrl).toBe("https://rpc.example.org");
      expect(c.authDomain).toBeNull();
    },
  );

  it(
    "trusts the proxy header from loopback only unless told, keeps Ponder's routes on the next port, and has no " +
      "Redis by default",
    () => {
      const c = load({ PORT: "5000" });
      expect(c.trustedProxies).toEqual(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);
      expect(c.opsPort).toBe(5001);
      expect(c.redisUrl).toBeNull();
      const d = load({
        TRUSTED_PROXIES: "10.0.0.0/8, 192.168.1.7",
        OPS_PORT: "9100",
        REDIS_URL: "redis://127.0.0.1:6379",
      });
      expect(d.trustedProxies).toEqual(["10.0.0.0/8", "192.168.1.7"]);
      expect(d.opsPort).toBe(9100);
      expect(d.redisUrl).toBe("redis://127.0.0.1:6379");
    },
  );

  it("serves the API's metrics on a port of their own: PORT + 2 unless told, never PORT or OPS_PORT", () => {
    const c = load({ PORT: "5000" });
    expect([c.metricsPort, c.cosignerMetricsPort, c.executorsMetricsPort]).toEqual([5002, 42092, 42093]);
    expect(load({ PORT: "65535" }).metricsPort).toBe(65533);
    expect(load({ PORT: "5000", METRICS_PORT: "9200", COSIGNER_METRICS_PORT: "9201" })).toMatchObject({
      metricsPort: 9200,
      cosignerMetricsPort: 9201,
    });
    failsOn({ PORT: "5000", METRICS_PORT: "5000" }, "METRICS_PORT");
    failsOn({ PORT: "5000", OPS_PORT: "5002" }, "METRICS_PORT");
    failsOn({ METRICS_PORT: "0" }, "METRICS_PORT");
  });

  it("names the variable when one is bad", () => {
    failsOn({ PORT: "eighty" }, "PORT");
    failsOn({ PORT: "70000" }, "PORT");
    failsOn({ ANVIL_PORT: "-1" }, "ANVIL_PORT");
    failsOn({ CHAIN_RPC_URL: "not a url" }, "CHAIN_RPC_URL");
    failsOn({ SEQUENCER_URL: "ftp://x" }, "SEQUENCER_URL");
    failsOn({ TRUSTED_PROXIES: "10.0.0.1,proxy.example" }, "TRUSTED_PROXIES");
    failsOn({ REDIS_URL: "http://127.0.0.1:6379" }, "REDIS_URL");
    failsOn({ OPS_PORT: "0" }, "OPS_PORT");
    failsOn({ DATABASE_URL: "mysql://x" }, "DATABASE_URL");
    failsOn({ PLATFORM_FEE_RECIPIENT: "0x123" }, "PLATFORM_FEE_RECIPIENT");
    failsOn({ AUTH_DOMAIN: "https://evil/" }, "AUTH_DOMAIN");
    failsOn({ REQUIRE_PARTNER_AGENT: "maybe" }, "REQUIRE_PARTNER_AGENT");
    failsOn({ ALLOWED_HOSTS: "a b" }, "ALLOWED_HOSTS");
    failsOn({ UNIVERSE_FILE: "/nonexistent/universe.json" }, "UNIVERSE_FILE");
    failsOn({ COSIGNER_URL: "http://127.0.0.1:42090" }, "COSIGNER_TOKEN");
    failsOn({ COSIGNER_URL: "http://127.0.0.1:42090", COSIGNER_TOKEN: "short" }, "COSIGNER_TOKEN");
    failsOn({ COSIGNER_PORT: "0" }, "COSIGNER_PORT");
    // Read at import by lib/secp.ts and lib/keccak.ts: a misspelt choice must not silently mean native.
    failsOn({ KECCAK_BACKEND: "js" }, "KECCAK_BACKEND");
    failsOn({ SECP256K1_BACKEND: "VIEM" }, "SECP256K1_BACKEND");
    expect(() => load({ KECCAK_BACKEND: "viem", SECP256K1_BACKEND: "native" })).not.toThrow();
  });

  it("runs separate API processes (npm run stack) only on PostgreSQL, at most 32", () => {
    expect(load({}).apiProcesses).toBe(0);
    expect(load({ API_PROCESSES: "3", DATABASE_URL: "postgresql://x@127.0.0.1/pit" }).apiProcesses).toBe(3);
    failsOn({ API_PROCESSES: "2" }, "API_PROCESSES");
    failsOn({ API_PROCESSES: "33", DATABASE_URL: "postgresql://x@127.0.0.1/pit" }, "API_PROCESSES");
    failsOn({ API_PROCESSES: "1.5", DATABASE_URL: "postgresql://x@127.0.0.1/pit" }, "API_PROCESSES");
  });

  it(
    "off the devnet, refuses one process or one store holding both halves of a session's 2-of-2, naming what to " +
      "fix",
    () => {
      const off = { CHAIN_RPC_URL: "https://rpc.example.org" };
      const key = "0x" + "11".repeat(32);
      const secret = "s".repeat(40);
      expect(() => loadConfig({ ...off, COSIGNER_KEY: key, EXECUTOR_KEYS_SECRET: secret })).toThrow(
        /EXECUTOR_KEYS_SECRET: set beside COSIGNER_KEY: one process would hold both halves.*npm run executors/,
      );
      expect(() => loadConfig({ ...off, COSIGNER_TOKEN: "t".repeat(40), EXECUTORS_TOKEN: "t".repeat(40) })).toThrow(
        /EXECUTORS_TOKEN: the same secret as COSIGNER_TOKEN/,
      );
      expect(() =>
        loadConfig({
          ...off,
          COSIGNER_DATABASE_URL: "postgres://a:x@db:5432/signers",
          EXECUTORS_DATABASE_URL: "postgresql://b:y@DB/signers",
        }),
      ).toThrow(/COSIGNER_DATABASE_URL: names the same database as EXECUTORS_DATABASE_URL/);
      expect(() =>
        loadConfig({ ...off, EXECUTORS_DATABASE_URL: "postgres://b@db/app", DATABASE_URL: "postgres://a@db:5432/app" }),
      ).toThrow(/EXECUTORS_DATABASE_URL: names the same database as DATABASE_URL/);
      failsOn({ EXECUTORS_URL: "http://127.0.0.1:42091" }, "EXECUTORS_TOKEN");
      // Apart, each is fine; the devnet (its public development keys) runs both under npm start.
      expect(
        loadConfig({
          ...off,
          COSIGNER_KEY: key,
          COSIGNER_DATABASE_URL: "postgres://c@db/cosigner",
          DATABASE_URL: "postgres://a@db/app",
        }).cosignerDatabaseUrl,
      ).toBe("postgres://c@db/cosigner");
      expect(
        loadConfig({ ...off, EXECUTOR_KEYS_SECRET: secret, EXECUTORS_DATABASE_URL: "postgres://e@db/executors" })
          .executorKeysSecret,
      ).toBe(secret);
      expect(loadConfig({ COSIGNER_KEY: key }).executorKeysSecret).not.toBeNull();
    },
  );

  it("marks the devnet's stand-in AI gateway as such, and never a gateway off the devnet", () => {
    const gw = {
      AI_GATEWAY_URL: "http://127.0.0.1:9/v1",
      AI_GATEWAY_KEY: "k".repeat(16),
      AI_MODELS: JSON.stringify([{ id: "m", input: 1, output: 2 }]),
    };
    expect(load(gw).ai.standIn).toBe(false);
    expect(load({ ...gw, AI_GATEWAY_STAND_IN: "true" }).ai.standIn).toBe(true);
    failsOn({ ...gw, AI_GATEWAY_STAND_IN: "true", CHAIN_RPC_URL: "https://rpc.example.org" }, "AI_GATEWAY_STAND_IN");
    failsOn({ AI_GATEWAY_STAND_IN: "true" }, "AI_GATEWAY_STAND_IN");
  });

  it("refuses a universe for another chain, a broken one, and a missing fee recipient outside the devnet", () => {
    failsOn({ UNIVERSE_FILE: universeWithout((u) => (u.chainId = 1)) }, "UNIVERSE_FILE");
    failsOn({ UNIVERSE_FILE: universeWithout((u) => (u.contracts.poolManager = "0xnope")) }, "UNIVERSE_FILE");
    failsOn({ UNIVERSE_FILE: universeWithout((u) => delete u.tokens.USDG) }, "UNIVERSE_FILE");
    failsOn(
      { CHAIN_RPC_URL: "https://rpc.example.org", UNIVERSE_FILE: universeWithout((u) => delete u.devnet) },
      "PLATFORM_FEE_RECIPIENT",
    );
  });
});
