import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import { createFakeProvider, type FakeProvider } from "./fake-provider";
import { handleSubscribe, type SubscribeLogEntry, UNIFORM_BODY } from "./subscribe-handler";

const MIN_MS = 150;
const DAY = { metric: "units", scope: "global", window: "utc_day", value: 2 } as const;
const COOLDOWN = { metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 86_400, value: 1 } as const;

type Answer = { status: number; body: string; headers: [string, string][]; ms: number };

describe.skipIf(skipWithoutDatabase())("demo subscribe: one reserve, then the send, and a uniform answer", () => {
  const t = useTestDatabase("demo_subscribe");

  function harness(endpoint: string, provider: FakeProvider, db = t.db) {
    const log: SubscribeLogEntry[] = [];
    const deferred: Promise<unknown>[] = [];
    const post = async (body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
      const request = new Request("http://127.0.0.1/api/demo/subscribe", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const started = performance.now();
      const response = await handleSubscribe(request, {
        db: async () => db,
        provider,
        minMs: MIN_MS,
        defer: (work) => deferred.push(work),
        log: (entry) => log.push(entry),
        endpoint,
      });
      const text = await response.text();
      return { status: response.status, body: text, headers: [...response.headers.entries()].sort(), ms: performance.now() - started };
    };
    return { post, log, settle: () => Promise.all(deferred.splice(0)) };
  }

  it("answers new, cooling down, over the ceiling, killed and unavailable with the same bytes, no sooner than the floor", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1, ceilings: [DAY, COOLDOWN] });
    const h = harness(e.key, createFakeProvider({ latencyMs: 0, failureRate: 0 }));
    const answers: Answer[] = [];
    answers.push(await h.post({ email: "Jane.Doe@example.com" })); // new
    answers.push(await h.post({ email: "jane.doe+again@example.com" })); // cooling down
    answers.push(await h.post({ email: "sam@example.com" })); // new: the day's budget is now spent
    answers.push(await h.post({ email: "noah@example.com" })); // over the ceiling
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    answers.push(await h.post({ email: "olga@example.com" })); // killed
    const dead = openPostgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connectTimeoutSeconds: 1 });
    const down = harness(e.key, createFakeProvider({ latencyMs: 0, failureRate: 0 }), dead.db);
    try {
      answers.push(await down.post({ email: "li@example.com" })); // unavailable
    } finally {
      await dead.close();
    }
    await h.settle();

    // The outcomes really differ behind the one answer.
    const outcomes = h.log.filter((l) => l.event === "subscribe").map((l) => (l.event === "subscribe" ? (l.gate ?? l.outcome) : ""));
    expect(outcomes).toEqual(["accepted", "cooldown", "accepted", "ceiling", "kill_switch"]);
    expect(down.log).toMatchObject([{ event: "subscribe", outcome: "refused", gate: "unavailable" }]);

    for (const a of answers) {
      expect(a.status).toBe(202);
      expect(a.body).toBe(UNIFORM_BODY);
      expect(a.headers).toEqual(answers[0]?.headers);
      expect(a.ms).toBeGreaterThanOrEqual(MIN_MS - 1);
    }
    expect(JSON.parse(UNIFORM_BODY)).toEqual({ status: "accepted", message: "If this address can receive mail, a confirmation is on its way." });
  });

  it("does not wait for a slow provider, settles what was sent and releases what failed", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1, ceilings: [{ ...DAY, value: 100 }, COOLDOWN] });
    let fail = true;
    const provider = createFakeProvider({ latencyMs: MIN_MS * 4, failureRate: 0.5, random: () => (fail ? 0 : 1) });
    const h = harness(e.key, provider);

    const first = await h.post({ email: "amara@example.com" });
    expect(first.ms).toBeLessThan(MIN_MS * 4);
    await h.settle();
    // The provider failed: the reservation is released, so the inbox is not cooling down.
    fail = false;
    await h.post({ email: "Amara+retry@example.com" });
    await h.settle();

    const rows = resultRows<{ state: string; destination: string }>(
      await t.db.execute(sql`select state, destination from reservations where endpoint_id = ${e.endpointId} order by created_at`),
    );
    expect(rows).toEqual([
      { state: "released", destination: "amara@example.com" },
      { state: "settled", destination: "Amara+retry@example.com" },
    ]);
    expect(provider.stats()).toMatchObject({ attempts: 2, delivered: 1, failed: 1 });
    expect(h.log.filter((l) => l.event === "delivery").map((l) => (l.event === "delivery" ? [l.outcome, l.settledOrReleased] : []))).toEqual([
      ["provider_failed", true],
      ["delivered", true],
    ]);
  });

  it.each([
    ["not JSON", "{email:", "invalid_json"],
    ["no email", {}, "invalid_input"],
    ["extra fields", { email: "a@example.com", admin: true }, "invalid_input"],
    ["a number", { email: 5 }, "invalid_input"],
    ["no domain", { email: "jane@" }, "invalid_email"],
    ["a phone number", { email: "+1 415 555 2671" }, "invalid_email"],
    ["a huge body", { email: `${"a".repeat(3000)}@example.com` }, "body_too_large"],
  ])("answers 400 for %s, before any reservation", async (_name, body, code) => {
    const e = await makeEndpoint(t.db, { perCallMax: 1, ceilings: [DAY, COOLDOWN] });
    const h = harness(e.key, createFakeProvider({ latencyMs: 0, failureRate: 0 }));
    const answer = await h.post(body);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code } });
    const [row] = resultRows<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from reservations where endpoint_id = ${e.endpointId}`));
    expect(row?.n).toBe(0);
  });

  it("answers 400 to a body that is not declared as JSON", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1, ceilings: [DAY, COOLDOWN] });
    const answer = await harness(e.key, createFakeProvider({ latencyMs: 0, failureRate: 0 })).post(
      { email: "a@example.com" },
      { "content-type": "text/plain" },
    );
    expect(answer.status).toBe(400);
  });
});
