import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { auditEvents, budgets, endpoints, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { FAKE_KEYS, startFakeProvider, type FakeProvider } from "./fake-provider";
import { importUsageFile, pullDueSources, pullSource, type PullOptions } from "./pull";
import { writeUsageDays } from "./write";

// Pulls and imports on a real database and a real HTTP server: a day pulled again replaces
// itself, a bad file writes nothing, two workers never pull one source twice.

const admin = { type: "staff", email: "admin@test.local" } as const;
// Yesterday and the two days before, in UTC: 2026-10-31, 2026-11-01, 2026-11-02.
const now = new Date("2026-11-03T12:00:00Z");
const secrets = (name: string) => ({ CEILINGS_SECRET_OPENAI: FAKE_KEYS.openai, CEILINGS_SECRET_TWILIO: FAKE_KEYS.twilio.authToken })[name];

describe.skipIf(skipWithoutDatabase())("pulling usage sources", () => {
  const t = useTestDatabase("usage_pull", { max: 12 });
  let fake: FakeProvider;
  let llm: number;
  let sms: number;
  let budget: number;
  const options = (): PullOptions => ({ now, secrets, egress: { allowHosts: ["127.0.0.1"] }, retryCapMs: 20 });

  beforeAll(async () => {
    fake = await startFakeProvider({ pageSize: 2 });
    const rows = await t.db
      .insert(endpoints)
      .values([
        { key: "llm.chat", name: "Chat", unit: "tokens", parts: [{ name: "input", pricePico: 2_500_000 }, { name: "output", pricePico: 10_000_000 }], perCallMax: 100_000 },
        { key: "sms.send", name: "SMS", unit: "messages", parts: [{ name: "units", pricePico: 7_900_000_000 }], perCallMax: 1 },
      ])
      .returning({ id: endpoints.id, key: endpoints.key });
    llm = rows.find((r) => r.key === "llm.chat")?.id ?? 0;
    sms = rows.find((r) => r.key === "sms.send")?.id ?? 0;
    const [b] = await t.db.insert(budgets).values({ key: "ai.month", name: "AI", scope: "global", window: "billing_month", value: 1_000_000, maxValue: 10_000_000, defaultValue: 1_000_000 }).returning({ id: budgets.id });
    budget = b?.id ?? 0;
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    fake.requests.length = 0;
    await t.db.delete(usageSources);
  });

  async function source(values: Partial<typeof usageSources.$inferInsert> & { name: string; kind: "openai" | "anthropic" | "twilio" | "file" }) {
    const [row] = await t.db.insert(usageSources).values({ createdBy: "test", location: fake.url, ...values }).returning();
    if (!row) throw new Error("no source");
    return row;
  }

  it("pulls OpenAI, maps rows by the rules (exact, prefix, budget, part), keeps the unmapped, one pull row per day even with no rows", async () => {
    const s = await source({ name: "openai", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI" });
    await t.db.insert(usageSourceRules).values([
      { sourceId: s.id, match: "gpt-4o*", endpointId: llm, createdBy: "test" },
      { sourceId: s.id, match: "gpt-4o, output", endpointId: llm, part: "output", createdBy: "test" },
      { sourceId: s.id, match: "o1*", budgetId: budget, createdBy: "test" },
    ]);
    fake.setOpenAI([
      { day: "2026-10-31", model: "gpt-4o-2024-08-06", inputTokens: 600, outputTokens: 400, costValue: 2.5, lineItem: "gpt-4o, output" },
      { day: "2026-10-31", model: "o1-preview", inputTokens: 10, outputTokens: 10, costValue: 0.75, lineItem: "o1, input" },
      { day: "2026-11-02", model: "whisper-1", inputTokens: 7, outputTokens: 0 },
    ]);
    const result = await pullSource(t.db, s.id, options());
    expect(result).toEqual({ sourceId: s.id, days: ["2026-10-31", "2026-11-01", "2026-11-02"], rows: 5, unmapped: 1 });
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id)).orderBy(usageRows.id);
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.endpointId, r.budgetId, r.part])).toEqual([
      ["2026-10-31", "gpt-4o-2024-08-06", 1000, null, llm, null, "input"],
      ["2026-10-31", "o1-preview", 20, null, null, budget, null],
      ["2026-11-02", "whisper-1", 7, null, null, null, null],
      ["2026-10-31", "gpt-4o, output", 0, 2_500_000, llm, null, "output"],
      ["2026-10-31", "o1, input", 0, 750_000, null, budget, null],
    ]);
    expect(rows[0]?.raw).toMatchObject({ api: "usage/completions", model: "gpt-4o-2024-08-06", input_tokens: 600 });
    const pulls = await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id)).orderBy(usagePulls.day);
    expect(pulls.map((p) => [p.day, p.via, p.rows, p.unmappedRows])).toEqual([
      ["2026-10-31", "api", 4, 0],
      ["2026-11-01", "api", 0, 0],
      ["2026-11-02", "api", 1, 1],
    ]);
  });

  it("re-pulling replaces the days: revised numbers win, no duplicates, days outside the pull untouched", async () => {
    const s = await source({ name: "twilio", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    await t.db.insert(usageSourceRules).values({ sourceId: s.id, match: "sms-outbound", endpointId: sms, createdBy: "test" });
    // A day older than the lookback, written earlier: a re-pull must not touch it.
    await writeUsageDays(t.db, s.id, [{ day: "2026-10-01", item: "sms-outbound", units: 5, costMicros: 1, raw: {} }], { days: ["2026-10-01"], via: "api" });
    fake.setTwilio([
      { day: "2026-11-01", category: "sms-outbound", count: 1000, price: 7.9 },
      { day: "2026-11-02", category: "sms-outbound", count: 10, price: 0.079 },
    ]);
    await pullSource(t.db, s.id, options());
    fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 1100, price: 8.69 }]);
    const again = await pullSource(t.db, s.id, options());
    expect(again.rows).toBe(1);
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id)).orderBy(usageRows.day);
    expect(rows.map((r) => [r.day, r.units, r.costMicros, r.endpointId])).toEqual([
      ["2026-10-01", 5, 1, sms],
      ["2026-11-01", 1100, 8_690_000, sms],
    ]);
    const pulls = await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id)).orderBy(usagePulls.day);
    expect(pulls.map((p) => [p.day, p.rows])).toEqual([
      ["2026-10-01", 1],
      ["2026-10-31", 0],
      ["2026-11-01", 1],
      ["2026-11-02", 0],
    ]);
  });

  it("the same day written by many pulls at once ends as one copy of one pull", async () => {
    const s = await source({ name: "race", kind: "file", location: null });
    await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        writeUsageDays(t.db, s.id, [{ day: "2026-11-01", item: "x", units: k, costMicros: null, raw: {} }, { day: "2026-11-01", item: "y", units: k, costMicros: null, raw: {} }], { days: ["2026-11-01"], via: "api" }),
      ),
    );
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id));
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.units)).size).toBe(1);
    expect(await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id))).toHaveLength(1);
  });

  it("imports a file whole, mapping endpoint keys and rules, replacing only the days it holds, audited", async () => {
    const s = await source({ name: "postmark", kind: "file", location: null, timeZone: "America/New_York" });
    await writeUsageDays(t.db, s.id, [{ day: "2026-10-30", item: "sms.send", units: 9, costMicros: null, raw: {} }], { days: ["2026-10-30"], via: "api" });
    const result = await importUsageFile(t.db, s.id, "date,item,units,cost\n2026-11-01,sms.send,900,\n2026-11-01,unknown.thing,4,0.50\n", { actor: admin, now });
    expect(result).toEqual({ sourceId: s.id, days: ["2026-11-01"], rows: 2, unmapped: 1 });
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id)).orderBy(usageRows.day, usageRows.item);
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.endpointId, r.part])).toEqual([
      // Written before the import, a day it does not hold: kept.
      ["2026-10-30", "sms.send", 9, null, sms, "units"],
      ["2026-11-01", "sms.send", 900, null, sms, "units"],
      ["2026-11-01", "unknown.thing", 4, 500_000, null, null],
    ]);
    const [pull] = await t.db.select().from(usagePulls).where(and(eq(usagePulls.sourceId, s.id), eq(usagePulls.day, "2026-11-01")));
    expect(pull?.via).toBe("file (admin@test.local)");
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "usage.import"));
    expect(event).toMatchObject({ actor: "admin@test.local", target: "postmark", details: { sourceId: s.id, source: "postmark", days: ["2026-11-01"], rows: 2, unmapped: 1 } });
  });

  it("an endpoint key in a file is not mapped when another source's rule claims that endpoint", async () => {
    const other = await source({ name: "twilio-claims", kind: "twilio", account: FAKE_KEYS.twilio.accountSid });
    await t.db.insert(usageSourceRules).values({ sourceId: other.id, match: "sms-outbound", endpointId: sms, createdBy: "test" });
    const s = await source({ name: "file2", kind: "file", location: null });
    const result = await importUsageFile(t.db, s.id, "date,item,units\n2026-11-01,sms.send,1\n", { actor: admin, now });
    expect(result.unmapped).toBe(1);
  });

  it("a file with bad lines is refused whole, every bad line named, nothing written and nothing audited", async () => {
    const s = await source({ name: "bad-file", kind: "file", location: null });
    const before = (await t.db.select().from(auditEvents)).length;
    const error: unknown = await importUsageFile(t.db, s.id, "date,item,units\n2026-11-01,a,1\n2026-11-31,b,1\n2026-11-01,c,1e9\n", { actor: admin, now }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "bad_file",
      message: "the file for 'bad-file' was not imported: 2 bad lines; nothing was written",
      lines: [
        { line: 3, reason: "date must be a real day written YYYY-MM-DD, got '2026-11-31'" },
        { line: 4, reason: "units must be a whole number 0 or more, got '1e9'" },
      ],
    });
    expect(await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id))).toEqual([]);
    expect(await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id))).toEqual([]);
    expect((await t.db.select().from(auditEvents)).length).toBe(before);
  });

  it("refuses to import into an API source, and says a pull's missing credential plainly", async () => {
    const s = await source({ name: "api", kind: "openai", credentialRef: "env:CEILINGS_SECRET_NOT_SET" });
    await expect(importUsageFile(t.db, s.id, "date,item,units\n2026-11-01,a,1\n", { actor: admin, now })).rejects.toMatchObject({ code: "wrong_kind" });
    await expect(pullSource(t.db, s.id, options())).rejects.toMatchObject({ code: "credential_missing", message: "CEILINGS_SECRET_NOT_SET is not set in the worker's environment (the key of 'api')" });
  });

  it("a file source reads its location, a URL or a local path, and replaces the days the file holds", async () => {
    fake.setFile("/usage/postmark.json", '[{"date":"2026-11-01","item":"sms.send","units":7}]');
    const byUrl = await source({ name: "by-url", kind: "file", location: `${fake.url}/usage/postmark.json` });
    expect(await pullSource(t.db, byUrl.id, options())).toMatchObject({ days: ["2026-11-01"], rows: 1, unmapped: 0 });
    const dir = await mkdtemp(path.join(tmpdir(), "usage-"));
    const file = path.join(dir, "usage.csv");
    await writeFile(file, "date,item,units\n2026-11-02,sms.send,3\n");
    const byPath = await source({ name: "by-path", kind: "file", location: file });
    expect(await pullSource(t.db, byPath.id, options())).toMatchObject({ days: ["2026-11-02"], rows: 1 });
  });

  it("pullDueSources: pulls the requested and the due, records failures (old rows kept), clears the request, never throws", async () => {
    const ok = await source({ name: "due", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    const fresh = await source({ name: "fresh", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid, lastPullAt: new Date(now.getTime() - 3_600_000) });
    const asked = await source({ name: "asked", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid, lastPullAt: new Date(now.getTime() - 3_600_000), pullRequestedAt: new Date(now.getTime() - 1000) });
    const broken = await source({ name: "broken", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI", location: `${fake.url}/nowhere` });
    await writeUsageDays(t.db, broken.id, [{ day: "2026-11-01", item: "kept", units: 1, costMicros: null, raw: {} }], { days: ["2026-11-01"], via: "api" });
    await source({ name: "paused", kind: "twilio", enabled: false });
    await source({ name: "by-hand", kind: "file", location: null });
    fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 2, price: 0.02 }]);
    const seen: number[] = [];
    const outcomes = await pullDueSources(t.db, { ...options(), afterPull: async (r) => void seen.push(r.sourceId) });
    expect(outcomes.map((o) => [o.name, o.ok])).toEqual([
      ["due", true],
      ["asked", true],
      ["broken", false],
    ]);
    expect(outcomes[2]?.error).toMatch(/^OpenAI: .*\/nowhere\/v1\/organization\/usage\/completions answered 404/);
    expect(seen).toEqual([ok.id, asked.id]);
    const after = await t.db.select().from(usageSources).orderBy(usageSources.id);
    const byName = new Map(after.map((s) => [s.name, s]));
    expect(byName.get("due")).toMatchObject({ lastPullAt: now, lastPullOk: now, lastPullError: null, pullingUntil: null });
    expect(byName.get("asked")).toMatchObject({ pullRequestedAt: null, lastPullOk: now });
    expect(byName.get("fresh")?.lastPullOk).toBeNull();
    expect(byName.get("broken")).toMatchObject({ lastPullAt: now, lastPullOk: null, lastPullError: outcomes[2]?.error, pullingUntil: null });
    expect((await t.db.select().from(usageRows).where(eq(usageRows.sourceId, broken.id))).map((r) => r.item)).toEqual(["kept"]);
    expect(fresh.id).toBeGreaterThan(0);
    // Nothing is due any more at the same instant.
    expect(await pullDueSources(t.db, options())).toEqual([]);
  });

  it("two workers running pullDueSources at once pull each source once", async () => {
    const names = ["w1", "w2", "w3", "w4"];
    for (const name of names) await source({ name, kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 2, price: 0.02 }]);
    const second = openPostgres(t.url, { max: 4 });
    try {
      const [a, b] = await Promise.all([pullDueSources(t.db, options()), pullDueSources(second.db, options())]);
      const pulled = [...a, ...b].map((o) => o.name).sort();
      expect(pulled).toEqual(names);
      expect([...a, ...b].every((o) => o.ok)).toBe(true);
      // One page per pull: four pulls, four requests.
      expect(fake.requests.filter((r) => r.path.endsWith("Daily.json"))).toHaveLength(4);
    } finally {
      await second.close();
    }
  });

  it("a claim held by another worker is skipped until it expires", async () => {
    const s = await source({ name: "claimed", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid, pullingUntil: new Date(now.getTime() + 60_000) });
    expect(await pullDueSources(t.db, options())).toEqual([]);
    await t.db.update(usageSources).set({ pullingUntil: new Date(now.getTime() - 1) }).where(eq(usageSources.id, s.id));
    expect((await pullDueSources(t.db, options())).map((o) => o.name)).toEqual(["claimed"]);
  });
});
