// How fast the prototype's design can be while it stores what this product stores: the throwaway
// prototype (../shared/bench/prototype) run as it is, and again carrying this product's reservation
// row and reads, in one run on one machine. It bounds what a rewrite of reserve_batch in the
// prototype's shape could reach, so a speed target relative to the prototype can be judged against
// what the product must write, not only against what the prototype skips.
//   npm run bench:bound -- [--seconds 8] [--rounds 2] [--variants "prototype,typed charges,full shape"]
// The variants, each run by the prototype's own bench (3 ceilings, 64 callers, batches of up to
// 256, 2 in flight, an idempotency key a call, 200 callers):
//   prototype        as shipped: a narrow reservation row (8 columns, its key and idempotency indexes)
//   + product row    this product's reservation row: its columns, the charges each reservation
//                    keeps for settle, release and expiry (as jsonb, built per request as
//                    reserve_batch printed them before migration 0044 made them typed values;
//                    "typed charges" below is the nearer to today's row), money and prices, and
//                    the three indexes the dashboard's histories and the sweeper read (by
//                    caller, by endpoint, held by expiry); and the reads every batch makes for
//                    its callers (blocked accounts, per-account overrides) and its input checks
//                    (control characters, lengths)
//   - indexes        the same without the three indexes
//   - charges        the same without the charges (an empty JSON array)
//   - by caller, - by endpoint, - held
//                    the same without one of the three indexes each
//   json charges     the charges as json text, kept as printed rather than parsed into jsonb
//   typed charges    the charges as three typed arrays (limit, window start, amount)
//   typed, brin      typed, with one block-range index on the creation time for both histories
//   full shape       the product row, its charges typed as the product keeps them, on the full
//                    shape's counters: two more limits on the same endpoint standing for the global
//                    and the per-account budget (five counters a request, five charges a
//                    reservation), and the plan values read with the overrides; compared, as issue
//                    34's target is, with the prototype's 3 ceilings (until 2026-12-06 its charges
//                    were jsonb, as the product's were before 0044)
// Needs the local Postgres on 127.0.0.1:5432 (user postgres, trust), as the prototype's bench does;
// creates and drops the database `proto` there. Printed only, never asserted.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { arg, whole } from "./measure";

type Variant = { name: string; schema: (s: string) => string; batch: (s: string) => string };

/** Replaces `from` in `text`, which must hold it exactly once: a prototype that changed fails loudly. */
function patch(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`the prototype changed: ${from.slice(0, 60)}… is not there once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

const narrowRow = `  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL
);`;
// How a reservation keeps its charges: as jsonb (what reserve_batch wrote before 0044), as json text
// (kept as printed, not parsed into jsonb), or as three typed arrays in charge order (limit, window
// start, amount; the scope key and measure follow from the limit), the cheapest form that still
// names every counter exactly.
type Charges = "jsonb" | "json" | "typed";
const chargeColumns: Record<Charges, string> = {
  jsonb: "charges jsonb NOT NULL",
  json: "charges json NOT NULL",
  typed: "charge_limits int[] NOT NULL, charge_windows timestamptz[] NOT NULL, charge_amounts bigint[] NOT NULL",
};
const productColumns = (kept: Charges) => `  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  destination text, destination_key text, settled_amount bigint, overrun boolean NOT NULL DEFAULT false,
  ${chargeColumns[kept]}, resolved_at timestamptz, parts jsonb, money bigint NOT NULL DEFAULT 0, prices jsonb,
  settled_parts jsonb, settled_money bigint
);
CREATE TABLE accounts (account text PRIMARY KEY, plan_id int, blocked_at timestamptz);
INSERT INTO accounts SELECT 'caller-' || g, 1, NULL FROM generate_series(0, 999) g;
CREATE TABLE limit_overrides (limit_id int, caller text, value bigint, expires_at timestamptz, PRIMARY KEY (limit_id, caller));`;
// The three indexes the dashboard's histories (by caller, by endpoint) and the sweeper (held, by
// expiry) read, one by one, so each one's cost shows; and one block-range (BRIN) index on the
// creation time in place of the histories' two, near free to keep on an append-only table.
const byCaller = `
CREATE INDEX reservations_caller_created_idx ON reservations (caller, created_at DESC, id DESC) WHERE caller <> '';`;
const byEndpoint = `
CREATE INDEX reservations_endpoint_created_idx ON reservations (endpoint, created_at);`;
const heldByExpiry = `
CREATE INDEX reservations_held_expiry_idx ON reservations (expires_at) WHERE state = 'held';`;
const productIndexes = byCaller + byEndpoint + heldByExpiry;
const historiesInBlocks =
  `
CREATE INDEX reservations_created_brin ON reservations USING brin (created_at);` + heldByExpiry;

const narrowInsert = `    INSERT INTO reservations (id, endpoint, caller, amount, state, idempotency_key, created_at, expires_at)
    SELECT t.id, p_endpoint, t.c, t.a, 'held', t.k, v_now, v_now + interval '15 minutes'`;
// Three charges a reservation (units and calls globally, units per caller), printed as text and
// read as JSON once, as reserve_batch did before 0044; the money of one part at 2,000 picos a unit.
const charges = `('[{"l": 1, "k": "", "m": "u", "w": ' || to_json(v_day)::text || ', "n": ' || t.a || '}, '
            || '{"l": 2, "k": "", "m": "c", "w": ' || to_json(v_day)::text || ', "n": 1}, '
            || '{"l": 3, "k": ' || to_json(t.c)::text || ', "m": "u", "w": ' || to_json(v_day)::text || ', "n": ' || t.a || '}]')::jsonb`;
// The same three charges as typed arrays.
const typedCharges = `ARRAY[1, 2, 3], ARRAY[v_day, v_day, v_day]::timestamptz[], ARRAY[t.a, 1, t.a]`;
const chargeTargets: Record<Charges, string> = { jsonb: "charges", json: "charges", typed: "charge_limits, charge_windows, charge_amounts" };
const productInsert = (
  kept: Charges,
  printed: string,
) => `    INSERT INTO reservations (id, endpoint, caller, amount, state, idempotency_key, created_at, expires_at, ${chargeTargets[kept]}, money, prices)
    SELECT t.id, p_endpoint, t.c, t.a, 'held', t.k, v_now, v_now + interval '15 minutes',
           ${printed}, div(t.a::numeric * 2000 + 999999, 1000000), '{"units": 2000}'::jsonb`;
const beforeUsageInsert = `  IF v_trace THEN ts := ts || clock_timestamp(); END IF;
  -- A3`;
const productReads = `  PERFORM 1 FROM accounts a WHERE a.account = ANY (p_callers) AND a.blocked_at IS NOT NULL;
  PERFORM 1 FROM (SELECT o.value FROM limit_overrides o WHERE o.limit_id = ANY (ce_id) AND o.caller = ANY (dc)
                  ORDER BY o.limit_id, o.caller FOR SHARE) ov;
  IF EXISTS (SELECT 1 FROM unnest(p_callers, p_keys) u(c, k)
             WHERE u.c ~ '[\\u0001-\\u001f\\u007f-\\u009f]' OR length(u.c) > 200 OR length(u.k) > 200) THEN
    RAISE EXCEPTION 'invalid input';
  END IF;
${beforeUsageInsert}`;

/** The prototype's function writing the product's row, its charges kept as `kept` and written by `printed`, after the product's reads. */
function productBatch(s: string, kept: Charges, printed: string): string {
  return patch(patch(s, narrowInsert, productInsert(kept, printed)), beforeUsageInsert, productReads);
}

function productVariant(name: string, indexes: string, kept: Charges, printed: string): Variant {
  return {
    name,
    schema: (s) => patch(s, narrowRow, productColumns(kept) + indexes),
    batch: (s) => productBatch(s, kept, printed),
  };
}

// The full shape: the budgets' two counters are two more limits of the same endpoint (money is
// units at a price, so the prototype's units arithmetic stands for it), each with its charge.
const budgetLimits = `  (3, 'llm.chat', 'units', 'caller', 9000000000000000),
  (5, 'llm.chat', 'units', 'global', 9000000000000000),
  (6, 'llm.chat', 'units', 'caller', 9000000000000000),`;
// Its five charges, typed as the product keeps them since 0044; the budgets' two carry a stand-in
// amount (twice the units), whose value does not change the row's size.
const fullCharges = `ARRAY[1, 2, 3, 5, 6], ARRAY[v_day, v_day, v_day, v_day, v_day]::timestamptz[], ARRAY[t.a, 1, t.a, t.a * 2, t.a * 2]`;
const planValues = `
CREATE TABLE plan_limit_values (plan_id int, limit_id int, value bigint, PRIMARY KEY (plan_id, limit_id));
INSERT INTO plan_limit_values VALUES (1, 3, 9000000000000000), (1, 6, 9000000000000000);`;
const readPlanValues = `  PERFORM 1 FROM accounts a JOIN plan_limit_values v ON v.plan_id = a.plan_id AND v.limit_id = ANY (ce_id)
  WHERE a.account = ANY (dc);
`;

const fullShape: Variant = {
  name: "full shape",
  schema: (s) =>
    patch(
      patch(
        patch(s, "UNIQUE (endpoint, metric, scope)", "UNIQUE (id, endpoint, metric, scope)"),
        "  (3, 'llm.chat', 'units', 'caller', 9000000000000000),",
        budgetLimits,
      ),
      narrowRow,
      productColumns("typed") + productIndexes + planValues,
    ),
  batch: (s) => patch(productBatch(s, "typed", fullCharges), productReads, readPlanValues + productReads),
};

const allVariants: Variant[] = [
  { name: "prototype", schema: (s) => s, batch: (s) => s },
  productVariant("+ product row", productIndexes, "jsonb", charges),
  productVariant("  - indexes", "", "jsonb", charges),
  productVariant("  - by caller", byEndpoint + heldByExpiry, "jsonb", charges),
  productVariant("  - by endpoint", byCaller + heldByExpiry, "jsonb", charges),
  productVariant("  - held", byCaller + byEndpoint, "jsonb", charges),
  productVariant("  - charges", productIndexes, "jsonb", "'[]'::jsonb"),
  productVariant("  json charges", productIndexes, "json", patch(charges, "::jsonb", "::json")),
  productVariant("  typed charges", productIndexes, "typed", typedCharges),
  productVariant("  typed, brin", historiesInBlocks, "typed", typedCharges),
  fullShape,
];

function psql(...args: string[]): void {
  execFileSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-q", "-At", "-v", "ON_ERROR_STOP=1", ...args], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, PGOPTIONS: "-c client_min_messages=warning" },
  });
}

function main(): void {
  const seconds = whole("seconds", 8);
  const rounds = whole("rounds", 2);
  // Some of the variants (by name, comma-separated), the prototype always among them: more rounds
  // of the rows in question in the same time, on a machine whose speed moves within minutes.
  const named = arg("variants", "");
  const only =
    named === ""
      ? undefined
      : named
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name !== "");
  const unknown = only?.filter((name) => !allVariants.some((v) => v.name.trim() === name));
  if (unknown?.length) throw new Error(`--variants: no variant ${unknown.join(", ")}; the variants: ${allVariants.map((v) => v.name.trim()).join(", ")}`);
  const variants = only ? allVariants.filter((v) => v.name === "prototype" || only.includes(v.name.trim())) : allVariants;
  const source = path.resolve(process.cwd(), "..", "shared", "bench", "prototype");
  const work = mkdtempSync(path.join(tmpdir(), "ceilings-bound-"));
  try {
    cpSync(source, work, { recursive: true });
    // The prototype's one dependency (postgres) is the project's own.
    symlinkSync(path.resolve(process.cwd(), "node_modules"), path.join(work, "node_modules"));
    const schema = readFileSync(path.join(work, "schema.sql"), "utf8");
    const batch = readFileSync(path.join(work, "reserve_batch.sql"), "utf8");
    const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    console.log(`The prototype's design carrying this product's reservation row, ${seconds} s a row, ${rounds} rounds interleaved`);
    for (let round = 0; round < rounds; round++) {
      for (const v of variants) {
        writeFileSync(path.join(work, "variant-schema.sql"), v.schema(schema));
        writeFileSync(path.join(work, "variant-batch.sql"), v.batch(batch));
        psql("-d", "postgres", "-c", "drop database if exists proto with (force)", "-c", "create database proto");
        psql("-d", "proto", "-f", path.join(work, "variant-schema.sql"), "-f", path.join(work, "variant-batch.sql"));
        psql("-d", "proto", "-c", "vacuum analyze", "-c", "checkpoint");
        const out = execFileSync("node", ["bench.mjs", "rich", "64", "256", "2", String(seconds), "1", "200"], { cwd: work, encoding: "utf8" });
        const row = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { rps: number; p99_ms: number; other_cpu_us_per_req: number };
        rates.get(v.name)?.push(row.rps);
        console.log(
          `${v.name.padEnd(16)} ${String(Math.round(row.rps)).padStart(7)} per s  p99 ${row.p99_ms.toFixed(1)} ms  database ${row.other_cpu_us_per_req.toFixed(1)} µs a request`,
        );
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const base = mean(rates.get("prototype") ?? []);
    console.log("\nmean of the rounds, x prototype:");
    for (const v of variants) {
      const rate = mean(rates.get(v.name) ?? []);
      console.log(`${v.name.padEnd(16)} ${String(Math.round(rate)).padStart(7)} per s  ${(rate / base).toFixed(2)}`);
      console.log(JSON.stringify({ bench: "prototype-bound", variant: v.name.trim(), perSecond: Math.round(rate), ratio: rate / base }));
    }
  } finally {
    psql("-d", "postgres", "-c", "drop database if exists proto with (force)");
    rmSync(work, { recursive: true, force: true });
  }
}

main();
