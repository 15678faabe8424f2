import type { Db } from "./db.js";

/**
 * Versioned migrations of the app store (schema `app`). Append only: a shipped step never
 * changes; each runs once, in order, inside one transaction holding an advisory lock so that
 * API instances starting together migrate once.
 */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "accounts, keys, challenges",
    sql: `
      CREATE TABLE app.accounts (
        id bigserial PRIMARY KEY,
        wallet text NOT NULL UNIQUE,
        name text NOT NULL,
        client_addr text,
        created_at bigint NOT NULL
      );
      CREATE INDEX accounts_client_created ON app.accounts (client_addr, created_at);
      CREATE INDEX accounts_created ON app.accounts (created_at);
      CREATE TABLE app.api_keys (
        id bigserial PRIMARY KEY,
        key_hash text NOT NULL UNIQUE,
        wallet text NOT NULL,
        account_id bigint NOT NULL REFERENCES app.accounts (id),
        client_addr text,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX api_keys_wallet ON app.api_keys (wallet);
      CREATE INDEX api_keys_client_created ON app.api_keys (client_addr, created_at);
      CREATE INDEX api_keys_created ON app.api_keys (created_at);
      CREATE TABLE app.challenges (
        nonce text PRIMARY KEY,
        wallet text NOT NULL,
        purpose text NOT NULL,
        message text NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX challenges_wallet ON app.challenges (wallet, issued_at);
    `,
  },
  {
    version: 2,
    name: "token registry",
    sql: `
      CREATE TABLE app.tokens (
        address text PRIMARY KEY,
        symbol text NOT NULL,
        name text NOT NULL,
        kind text NOT NULL,
        tier text NOT NULL,
        tradable boolean NOT NULL,
        blocked_reason text,
        risk_codes text[] NOT NULL DEFAULT '{}',
        implementation text,
        record text NOT NULL,
        screened_at bigint NOT NULL
      );
      CREATE INDEX tokens_symbol ON app.tokens (lower(symbol));
      CREATE INDEX tokens_name ON app.tokens (lower(name));
      CREATE INDEX tokens_tier_kind ON app.tokens (tier, kind);
    `,
  },
  {
    version: 3,
    name: "plans and trades",
    sql: `
      CREATE TABLE app.plans (
        id bigserial PRIMARY KEY,
        key_id bigint NOT NULL,
        wallet text NOT NULL,
        kind text NOT NULL,
        execution text NOT NULL,
        token_in text NOT NULL,
        token_out text NOT NULL,
        amount_in text NOT NULL,
        amount_out_min text NOT NULL,
        fee_bps int NOT NULL,
        deadline bigint NOT NULL,
        txs text NOT NULL,
        summary text NOT NULL,
        created_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX plans_key_created ON app.plans (key_id, created_at DESC);
      CREATE TABLE app.plan_txs (
        fingerprint text NOT NULL,
        plan_id bigint NOT NULL REFERENCES app.plans (id),
        idx int NOT NULL,
        kind text NOT NULL,
        PRIMARY KEY (fingerprint, plan_id)
      );
      CREATE TABLE app.trades (
        id bigserial PRIMARY KEY,
        wallet text NOT NULL,
        key_id bigint,
        plan_id bigint,
        path text NOT NULL,
        status text NOT NULL,
        token_in text,
        token_out text,
        amount_in text,
        amount_out_min text,
        tx_hash text UNIQUE,
        fee_tx_hash text,
        code text,
        session_id text,
        created_at bigint NOT NULL
      );
      CREATE INDEX trades_wallet_id ON app.trades (wallet, id DESC);
    `,
  },
  {
    version: 4,
    name: "challenges remember the issuing host",
    // SPEC "Authentication" 4: a revoke-all challenge is good only on the host that issued it.
    // Challenges issued before this step have no host: they cannot revoke-all (they lapse in 5 minutes).
    sql: `ALTER TABLE app.challenges ADD COLUMN host text;`,
  },
  {
    version: 5,
    name: "trade outcomes from the relay watcher",
    // The relay watcher (api/trading/watcher.ts) reads each relayed hash's receipt and records
    // mined/reverted here with the block and the outcome (lib/tradeOutcome relayedOutcome, JSON);
    // an outcome stays re-checked until its block is final. Rows relayed before this step are
    // pending and never checked: the watcher looks each up once.
    sql: `
      ALTER TABLE app.trades
        ADD COLUMN block_number bigint,
        ADD COLUMN block_hash text,
        ADD COLUMN block_time bigint,
        ADD COLUMN outcome text,
        ADD COLUMN final boolean NOT NULL DEFAULT false,
        ADD COLUMN checked_at bigint;
      CREATE INDEX trades_watch ON app.trades (id)
        WHERE tx_hash IS NOT NULL AND NOT final AND status IN ('pending', 'mined', 'reverted');
      CREATE INDEX trades_wallet_mined ON app.trades (wallet, created_at) WHERE status = 'mined';
    `,
  },
  {
    version: 6,
    name: "relayed bytes kept before sending; leases for once-per-store workers",
    // A relayed trade is written with its signed bytes before they go to the sequencer (relay
    // state: sending, sent, lost, refused), so an answer lost, a crash between write and send, or
    // a node that forgot the transaction can be healed by sending the same bytes again.
    // app.leases: a named worker (the relay watcher) runs in one instance per store at a time.
    sql: `
      ALTER TABLE app.trades
        ADD COLUMN raw_tx text,
        ADD COLUMN relay text,
        ADD COLUMN sent_at bigint,
        ADD COLUMN sends int NOT NULL DEFAULT 0;
      CREATE TABLE app.leases (name text PRIMARY KEY, holder text NOT NULL, until_ms bigint NOT NULL);
    `,
  },
  {
    version: 7,
    name: "sessions and the co-signer's roots, leaves and per-wallet lock rows",
    // app.sessions: what the service granted (binding as canonical JSON, the unsigned root, then
    // the wallet's signatures). app.cosigner_*: the co-signer's own state: roots it holds, every
    // leaf it signed with its USD notional (24 h sums per wallet), and one row per wallet that
    // co-signing locks so two instances cannot spend the same day's dollars.
    sql: `
      CREATE TABLE app.sessions (
        id text PRIMARY KEY,
        wallet text NOT NULL,
        executor text NOT NULL,
        cosigner text NOT NULL,
        key_id bigint NOT NULL,
        status text NOT NULL,
        created_at bigint NOT NULL,
        expires bigint NOT NULL,
        wallet_code text NOT NULL,
        tokens text NOT NULL,
        binding text NOT NULL,
        root text NOT NULL,
        delegation_hash text NOT NULL UNIQUE,
        start text NOT NULL,
        delegation_signature text,
        authorization_json text,
        activated_at bigint,
        revoked_at bigint
      );
      CREATE INDEX sessions_wallet ON app.sessions (wallet, created_at);
      CREATE INDEX sessions_executor ON app.sessions (executor);
      CREATE TABLE app.cosigner_roots (
        delegation_hash text PRIMARY KEY,
        session_id text NOT NULL,
        wallet text NOT NULL,
        executor text NOT NULL,
        binding text NOT NULL,
        root text NOT NULL,
        registered_at bigint NOT NULL,
        revoked_at bigint,
        trades_used int NOT NULL DEFAULT 0
      );
      CREATE TABLE app.cosigner_wallets (wallet text PRIMARY KEY);
      CREATE TABLE app.cosigner_leaves (
        id bigserial PRIMARY KEY,
        wallet text NOT NULL,
        delegation_hash text NOT NULL,
        leaf_hash text NOT NULL UNIQUE,
        notional_usd double precision NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX cosigner_leaves_wallet ON app.cosigner_leaves (wallet, created_at);
    `,
  },
  {
    version: 8,
    name: "sessions' curve roots",
    // A curve session's second root (wallet -> co-signer for the launchpad curve), signed at
    // switch-on: the service's copy and the co-signer's own. Leaves name the root they redeem.
    sql: `
      ALTER TABLE app.sessions ADD COLUMN curve_roots text;
      ALTER TABLE app.cosigner_roots ADD COLUMN curve_roots text;
    `,
  },
  {
    version: 9,
    name: "treasury week rows (append-only) and split drafts",
    // app.treasury_rows: the public record, one row per closed week, chained by SHA-256. `body` is
    // the row's JSON as served; nothing may change or remove a row (a trigger refuses UPDATE and
    // DELETE; whoever disables it still breaks the hash chain that GET treasury recomputes).
    // app.treasury_drafts: a week being closed, with the split transfers signed before any is
    // sent, so a closer that dies mid-way sends the same bytes again (same nonces), never twice.
    sql: `
      CREATE TABLE app.treasury_rows (
        seq int PRIMARY KEY,
        week_start bigint NOT NULL UNIQUE,
        body text NOT NULL,
        hash text NOT NULL UNIQUE,
        prev_hash text NOT NULL UNIQUE,
        recorded_at bigint NOT NULL
      );
      CREATE FUNCTION app.treasury_rows_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'app.treasury_rows is append-only'; END $$;
      CREATE TRIGGER treasury_rows_append_only BEFORE UPDATE OR DELETE ON app.treasury_rows
        FOR EACH ROW EXECUTE FUNCTION app.treasury_rows_append_only();
      CREATE TABLE app.treasury_drafts (
        week_start bigint PRIMARY KEY,
        draft text NOT NULL,
        sends text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX trades_mined_time ON app.trades (block_time) WHERE status = 'mined';
    `,
  },
  {
    version: 10,
    name: "hosted agents, their schedule, logs, executors and gas refunds",
    // app.hosted_agents: what the owner configured and the agent's running state (JSON columns).
    // app.hosted_schedule: one row per agent, claimed with FOR UPDATE SKIP LOCKED and a lease by
    // whichever instance is free; tick_seq is the fencing token. app.hosted_ticks: a tick's
    // effects commit with its row, unique per (agent, seq) and per (agent, due slot), so a slot
    // run twice (a lease that lapsed under a slow or killed instance) commits once. app.hosted_logs: why the agent did
    // or did not trade.
    sql: `
      CREATE TABLE app.hosted_agents (
        id text PRIMARY KEY,
        wallet text NOT NULL,
        key_id bigint NOT NULL,
        name text NOT NULL,
        brain text NOT NULL,
        params text NOT NULL,
        interval_s int NOT NULL,
        pairs text NOT NULL,
        limits text NOT NULL,
        mode text NOT NULL,
        status text NOT NULL,
        pause_reason text,
        terms text NOT NULL,
        webhook_secret text,
        paper_book text,
        brain_state text,
        last_decision text,
        last_trade text,
        session_id text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        deleted_at bigint
      );
      CREATE INDEX hosted_agents_wallet ON app.hosted_agents (wallet, created_at);
      CREATE TABLE app.hosted_schedule (
        agent_id text PRIMARY KEY,
        next_tick_ms bigint NOT NULL,
        tick_seq bigint NOT NULL DEFAULT 0,
        lease_owner text,
        lease_until_ms bigint
      );
      CREATE INDEX hosted_schedule_due ON app.hosted_schedule (next_tick_ms);
      CREATE TABLE app.hosted_ticks (
        agent_id text NOT NULL,
        tick_seq bigint NOT NULL,
        due_ms bigint NOT NULL,
        ran_at_ms bigint NOT NULL,
        instance text NOT NULL,
        PRIMARY KEY (agent_id, tick_seq),
        UNIQUE (agent_id, due_ms)
      );
      CREATE TABLE app.hosted_logs (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        tick_seq bigint,
        kind text NOT NULL,
        code text,
        body text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX hosted_logs_agent ON app.hosted_logs (agent_id, id DESC);
      CREATE TABLE app.executor_keys (
        address text PRIMARY KEY,
        agent_id text NOT NULL,
        owner text NOT NULL,
        sealed text NOT NULL,
        created_at bigint NOT NULL,
        retired_at bigint,
        closed_at bigint
      );
      CREATE TABLE app.hosted_executors (
        agent_id text NOT NULL,
        executor text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        retired_at bigint
      );
      CREATE INDEX hosted_executors_agent ON app.hosted_executors (agent_id, created_at DESC);
      CREATE UNIQUE INDEX hosted_executors_current ON app.hosted_executors (agent_id) WHERE retired_at IS NULL;
      CREATE TABLE app.hosted_attestations (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        session_id text NOT NULL,
        issued bigint NOT NULL,
        expires bigint NOT NULL,
        signature text NOT NULL,
        signed_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX hosted_attestations_agent ON app.hosted_attestations (agent_id, id DESC);
      CREATE TABLE app.executor_refunds (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        executor text NOT NULL,
        owner text NOT NULL,
        nonce int NOT NULL,
        value text NOT NULL,
        balance text NOT NULL,
        gas text NOT NULL,
        max_fee_per_gas text NOT NULL,
        raw text NOT NULL,
        tx_hash text NOT NULL UNIQUE,
        status text NOT NULL,
        block bigint,
        relay_error text,
        created_at bigint NOT NULL,
        UNIQUE (executor, nonce)
      );
    `,
  },
  {
    version: 11,
    name: "stock attestations held by the executor signing service",
    sql: `
      CREATE TABLE app.executor_stock_attestations (
        id bigserial PRIMARY KEY,
        executor text NOT NULL,
        session_id text NOT NULL,
        root_hash text NOT NULL,
        issued bigint NOT NULL,
        expires bigint NOT NULL,
        signature text NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX executor_stock_attestations_executor ON app.executor_stock_attestations (executor, id);
    `,
  },
  {
    version: 12,
    name: "AI brain: spend rows (nano-USD, worst case held while a call runs) and owners' own gateway keys",
    sql: `
      CREATE TABLE app.ai_spend (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        wallet text NOT NULL,
        day int NOT NULL,
        ts bigint NOT NULL,
        tick_seq bigint,
        source text,
        model text NOT NULL,
        status text NOT NULL,
        code text,
        prompt_tokens int NOT NULL DEFAULT 0,
        completion_tokens int NOT NULL DEFAULT 0,
        cost_nusd bigint NOT NULL DEFAULT 0,
        cost_source text,
        pool_hold text,
        pool_kind text,
        ms int
      );
      CREATE INDEX ai_spend_agent ON app.ai_spend (agent_id, id);
      CREATE INDEX ai_spend_wallet_day ON app.ai_spend (wallet, day);
      CREATE INDEX ai_spend_day_source ON app.ai_spend (day, source);
      -- Running day totals per scope (pool, svc:<wallet>, own:<wallet>, agent:<id>, svcagent:<id>):
      -- a reservation reads four rows, not the day's spend rows.
      CREATE TABLE app.ai_totals (
        day int NOT NULL,
        scope text NOT NULL,
        nusd bigint NOT NULL,
        PRIMARY KEY (day, scope)
      );
      CREATE TABLE app.ai_own (
        wallet text PRIMARY KEY,
        sealed_key text,
        sub_hint text,
        day_cap_usd double precision NOT NULL,
        connected_at bigint,
        disconnected_at bigint
      );
    `,
  },
  {
    version: 13,
    name: "league statements and entries",
    sql: `
      CREATE TABLE app.league_statements (
        nonce text PRIMARY KEY,
        wallet text NOT NULL,
        agent_id bigint NOT NULL,
        board text NOT NULL,
        entrant text NOT NULL,
        owner text NOT NULL,
        message text NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE TABLE app.league_entries (
        entry_id text PRIMARY KEY,
        seq bigserial NOT NULL,
        board text NOT NULL,
        agent_id bigint NOT NULL,
        kind text NOT NULL,
        wallet text NOT NULL,
        account_id bigint,
        hosted_id text,
        entrant text NOT NULL,
        owner text NOT NULL,
        agent_wallet text NOT NULL,
        token text NOT NULL,
        symbol text NOT NULL,
        name text NOT NULL,
        proof text NOT NULL,
        statement_nonce text,
        signature text,
        confirmed boolean,
        confirmed_at bigint,
        from_season int NOT NULL,
        entered_at bigint NOT NULL,
        left_at bigint
      );
      -- One active entry per partner agent per board, and one per entrant (trading wallet, account,
      -- hosted agent) per board.
      CREATE UNIQUE INDEX league_entries_agent ON app.league_entries (board, agent_id) WHERE left_at IS NULL;
      CREATE UNIQUE INDEX league_entries_entrant ON app.league_entries (board, entrant) WHERE left_at IS NULL;
      CREATE INDEX league_entries_wallet ON app.league_entries (wallet);
    `,
  },
  {
    version: 14,
    name: "league seasons decided, the reserve ledger and prize payouts",
    // app.league_results: a board's standings frozen when its season was decided (with the books
    // league:verify checks). app.league_ledgers: one season's reserve ledger. app.league_payouts:
    // one paid place, its signed bytes stored before they are sent (sending them again pays once).
    sql: `
      CREATE TABLE app.league_results (
        season int NOT NULL,
        board text NOT NULL,
        decided_at bigint NOT NULL,
        valued_at bigint NOT NULL,
        block bigint NOT NULL,
        answer text NOT NULL,
        books text,
        PRIMARY KEY (season, board)
      );
      CREATE TABLE app.league_ledgers (
        season int PRIMARY KEY,
        ledger text NOT NULL,
        settled_at bigint
      );
      CREATE TABLE app.league_payouts (
        season int NOT NULL,
        place int NOT NULL,
        entry_id text NOT NULL,
        agent_id bigint NOT NULL,
        recipient text NOT NULL,
        token text NOT NULL,
        amount text NOT NULL,
        status text NOT NULL,
        raw_tx text,
        tx_hash text,
        block bigint,
        created_at bigint NOT NULL,
        PRIMARY KEY (season, place)
      );
    `,
  },
  {
    version: 15,
    name: "challenges remember the client that asked",
    // Issue 25 section 6: the five-open cap counts per wallet and client, so one client asking
    // challenges for a wallet cannot retire the wallet's own. Older rows have none (they lapse in 5 minutes).
    sql: `
      ALTER TABLE app.challenges ADD COLUMN client_addr text;
      CREATE INDEX challenges_wallet_client ON app.challenges (wallet, client_addr, issued_at);
    `,
  },
  {
    version: 16,
    name: "a two_step fee pays for one trade; trades whose fee never landed are marked",
    // Issue 25 §1: a curve plan's fee transaction pays for exactly one trade (the unique index makes
    // the relay's claim atomic across instances). Rows written before this step that reuse an
    // earlier row's fee paid nothing of their own: their hash moves to reused_fee_tx_hash and they
    // are marked fee_unpaid, as the relay watcher marks a trade whose fee has no successful receipt.
    // A fee_unpaid trade counts nowhere: volume, league books, the treasury's ledger side.
    sql: `
      ALTER TABLE app.trades
        ADD COLUMN fee_unpaid boolean NOT NULL DEFAULT false,
        ADD COLUMN reused_fee_tx_hash text;
      UPDATE app.trades t SET fee_unpaid = true, reused_fee_tx_hash = t.fee_tx_hash, fee_tx_hash = NULL
        WHERE t.fee_tx_hash IS NOT NULL
          AND EXISTS (SELECT 1 FROM app.trades o WHERE o.fee_tx_hash = t.fee_tx_hash AND o.id < t.id);
      CREATE UNIQUE INDEX trades_fee_tx ON app.trades (fee_tx_hash) WHERE fee_tx_hash IS NOT NULL;
    `,
  },
  {
    version: 17,
    name: "league standings answers shared by the instances",
    // Issue 26 point 4: the instance holding the "league-standings" lease computes each board key
    // not yet decided and writes its last answer here (the body as served, JSON text); the other
    // instances read it each pass and serve it. computed_at is the service clock's ms; block is
    // the chain block the answer was read at (prize boards), null when it has none.
    sql: `
      CREATE TABLE app.league_board_answers (
        key text PRIMARY KEY,
        answer text NOT NULL,
        computed_at bigint NOT NULL,
        block bigint
      );
    `,
  },
  {
    version: 18,
    name: "league payouts say why they are owed or held",
    // Issue 29 point 4: a place not paid yet (no reserve signer, a short reserve) stays owed and a
    // listed recipient is held; `why` is the settler's last reason, served on the season's payouts.
    sql: "ALTER TABLE app.league_payouts ADD COLUMN why text;",
  },
  {
    version: 19,
    name: "league reviews of flags (append-only)",
    // Issue 29 point 3: `npm run league:review` records the operator's verdict on one entry's
    // flagged rule in one season, with the flag's reason as reviewed, why, who and when. The boards
    // apply the latest review of each flag and publish them all. Nothing changes or removes a row
    // (a correction is a later review); CONFIRMED, SANCTIONS and PAYABLE are never reviewed.
    sql: `
      CREATE TABLE app.league_reviews (
        id bigserial PRIMARY KEY,
        season int NOT NULL,
        entry_id text NOT NULL,
        rule text NOT NULL CHECK (rule NOT IN ('CONFIRMED', 'SANCTIONS', 'PAYABLE')),
        verdict text NOT NULL CHECK (verdict IN ('pass', 'fail')),
        flag_reason text NOT NULL,
        reason text NOT NULL CHECK (length(btrim(reason)) > 0),
        by_name text NOT NULL CHECK (length(btrim(by_name)) > 0),
        at bigint NOT NULL
      );
      CREATE INDEX league_reviews_season ON app.league_reviews (season, id);
      CREATE FUNCTION app.league_reviews_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'app.league_reviews is append-only'; END $$;
      CREATE TRIGGER league_reviews_append_only BEFORE UPDATE OR DELETE ON app.league_reviews
        FOR EACH ROW EXECUTE FUNCTION app.league_reviews_append_only();
    `,
  },
  {
    version: 20,
    name: "practice board paper fills of exchange accounts",
    // Issue 29 point 5: an account's paper orders on the practice board (POST league/practice/order),
    // filled at the V4Quoter's output at `block`. The account's book for a season is 10,000 USDG
    // moved by its fills of that season in id order; value_usd is the book at the independent marks
    // right after the fill (the practice row's drawdown). created_at is the service clock's ms.
    sql: `
      CREATE TABLE app.league_practice_fills (
        id bigserial PRIMARY KEY,
        entry_id text NOT NULL REFERENCES app.league_entries (entry_id),
        season int NOT NULL,
        token_in text NOT NULL,
        token_out text NOT NULL,
        amount_in text NOT NULL,
        amount_out text NOT NULL,
        fee text NOT NULL,
        fee_bps int NOT NULL,
        fee_class text NOT NULL,
        fee_tier int NOT NULL,
        amount_usd double precision NOT NULL,
        value_usd double precision NOT NULL,
        block bigint NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX league_practice_fills_entry ON app.league_practice_fills (entry_id, season, id);
    `,
  },
  {
    version: 21,
    name: "league payouts keep the cancel they sent",
    // Issue 29 review, finding 1: a payout cancelled at its nonce (its recipient listed since it was
    // signed) stores the cancel's bytes and hash before sending them, as the payout's own are: a
    // later pass finds the cancel mined after its wait (the place is held) and re-sends the same
    // bytes, never a second cancel at the nonce.
    sql: "ALTER TABLE app.league_payouts ADD COLUMN cancel_raw text, ADD COLUMN cancel_hash text;",
  },
  {
    version: 22,
    name: "a hosted agent's fills of the last day by index",
    // Every tick with orders sums the agent's trade entries of the last 24 h (MAX_DAY). With only
    // (agent_id, id) indexed that was a scan of the whole log table: 60 days of two agents' ticks
    // (345,600 rows) took 50 ms a tick, and it grows with every agent's history; 3 ms with this.
    sql: "CREATE INDEX hosted_logs_agent_trades ON app.hosted_logs (agent_id, created_at) WHERE kind = 'trade';",
  },
  {
    version: 23,
    name: "the standings answers stored uncompressed",
    // The standings worker writes a season's answer on every pass: 4 MB of JSON for 1,000 entrants. PostgreSQL
    // compressed it (pglz) on every write, about a third of the write's time (46 -> 33 ms for 2.9 MB measured on
    // PostgreSQL 15); a few MB per live season are not worth that CPU. Rows already stored keep their form.
    sql: "ALTER TABLE app.league_board_answers ALTER COLUMN answer SET STORAGE EXTERNAL;",
  },
  {
    version: 24,
    name: "relayed trades by the time they were written",
    // The standings worker reads again the ids of the rows written in the last few minutes (api/league/kept.ts
    // SETTLE_S): a row that committed after a higher id of its wallet was read is found there, not lost.
    // IF NOT EXISTS: on a large table an operator may build it beforehand with CONCURRENTLY (a plain build holds off
    // the table's writes while it runs: about 2 s for a million rows).
    sql: "CREATE INDEX IF NOT EXISTS trades_written ON app.trades (created_at) WHERE plan_id IS NOT NULL;",
  },
  {
    version: 25,
    name: "the standings answers stored deflated",
    // Issue 29 point 6: a live season's answer is about 4 MB of JSON, written on every standings pass. As text the
    // write took 110-320 ms of a pass (the table grew 4 MB a write until vacuumed); deflated in the writer's thread
    // pool (lib/packedJson.ts, a tenth of the size), 60-100 ms with its JSON. STORAGE EXTERNAL: already compressed.
    // A new table, not a new column: an instance of the code before it, during a rolling deploy, keeps reading and
    // writing the old one (its answers stale, never unreadable), and a rollback finds it; a later release drops it.
    sql: `
      CREATE TABLE app.league_board_packed (
        key text PRIMARY KEY,
        answer bytea NOT NULL,
        computed_at bigint NOT NULL,
        block bigint
      );
      ALTER TABLE app.league_board_packed ALTER COLUMN answer SET STORAGE EXTERNAL;
    `,
  },
];

export async function migrate(db: Db, now = () => Math.floor(Date.now() / 1000)): Promise<number[]> {
  return db.tx(async (tx) => {
    // Lock first: two instances racing on CREATE SCHEMA IF NOT EXISTS can both try to create it.
    await tx.query("SELECT pg_advisory_xact_lock(4663001)");
    await tx.query("CREATE SCHEMA IF NOT EXISTS app");
    await tx.query(
      "CREATE TABLE IF NOT EXISTS app.schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at " +
        "bigint NOT NULL)",
    );
    const done = new Set(
      (await tx.query<{ version: number }>("SELECT version FROM app.schema_migrations")).map((r) => Number(r.version)),
    );
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query("INSERT INTO app.schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        m.version,
        m.name,
        now(),
      ]);
      applied.push(m.version);
    }
    return applied;
  });
}
