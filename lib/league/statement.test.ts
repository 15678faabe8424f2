import { describe, expect, it } from "vitest";
import { ELIGIBILITY_LINE, leagueStatementText } from "./statement.js";

const base = {
  agent_id: 7,
  owner: "0x00000000000000000000000000000000000000AA",
  nonce: "n1",
  issued_at: 1_800_000_000,
  expires_at: 1_800_000_600,
  chain_id: 4663,
};

describe("league statements", () => {
  it(
    "a prize statement names the trading wallet and carries the eligibility line on its own line before the " + "last",
    () => {
      const lines = leagueStatementText({
        ...base,
        board: "prize",
        entrant: { kind: "wallet", wallet: "0x00000000000000000000000000000000000000BB" },
      }).split("\n");
      expect(lines).toContain("Entrant: prize league: trading wallet 0x00000000000000000000000000000000000000bb");
      expect(lines.at(-2)).toBe(ELIGIBILITY_LINE);
      expect(lines.at(-1)).toBe("Chain: 4663");
      expect(lines).toContain("Owner: 0x00000000000000000000000000000000000000aa");
    },
  );
  it("a practice statement names the account or hosted agent and has no eligibility line", () => {
    const account = leagueStatementText({ ...base, board: "practice", entrant: { kind: "account", account: 12 } });
    const hosted = leagueStatementText({ ...base, board: "practice", entrant: { kind: "hosted", hosted_id: "ha_x" } });
    expect(account).toContain("Entrant: practice board: account 12");
    expect(hosted).toContain("Entrant: practice board: hosted agent ha_x");
    expect(account).not.toContain("Eligibility");
    expect(hosted.split("\n").at(-1)).toBe("Chain: 4663");
  });
});
