import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApiServer, startApiServer } from "@/app/api/v1/_lib/api-server";
import { makeKey } from "@/app/api/v1/_lib/test-support";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/catalog";
import { runTraffic } from "./run";

// The demo's llm.chat traffic goes through the OpenAI SDK wrapped by Ceilings, as a service's
// would: every chat that reached the model is settled at the usage it reported, every failed one
// released, the oversized ones refused by the per-call max before the model was called.

describe.skipIf(skipWithoutDatabase())("demo traffic drives llm.chat through the OpenAI wrapper", () => {
  const t = useTestDatabase("demo_traffic");
  let api: RunningApiServer;
  let secret: string;

  beforeAll(async () => {
    const catalog = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../lib/demo/ceilings.json"), "utf8")) as { endpoints: { key: string }[] };
    const spec = catalog.endpoints.find((e) => e.key === "llm.chat");
    await createEndpoint(t.db, { spec, actor: { type: "system", name: "test" }, reason: "the demo's llm.chat" });
    secret = (await makeKey(t.db, { endpoints: ["llm.chat"], account: "acct_demo_traffic" })).secret;
    api = await startApiServer({ deps: { db: async () => t.db }, port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("settles what the model reported, releases what failed, and counts refusals by gate", async () => {
    const tally = await runTraffic({ baseUrl: new URL(api.url), seconds: 6, rate: 1, apiKey: secret, maxRequests: 200, help: false });
    const rows = resultRows<{ state: string; n: number; mismatched: number }>(
      await t.db.execute(sql`
        select state::text, count(*)::int as n, count(*) filter (where state = 'settled' and settled_amount >= amount)::int as mismatched
        from reservations group by state order by state`),
    );
    const byState = Object.fromEntries(rows.map((r) => [r.state, r.n]));
    expect(tally.api.settled).toBeGreaterThan(0);
    expect(tally.api.released).toBeGreaterThan(0);
    expect(byState).toEqual({ released: tally.api.released, settled: tally.api.settled });
    // Settled from usage: below the worst case reserved (the fake model answers 60 % of its bound).
    expect(rows.reduce((sum, r) => sum + r.mismatched, 0)).toBe(0);
    expect(tally.api.errors).toEqual({});
  }, 60_000);
});
