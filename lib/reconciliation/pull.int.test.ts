import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { mkdtemp, open, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { auditEvents, budgetMembers, budgets, endpoints, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { FAKE_KEYS, startFakeProvider, type FakeProvider } from "./fake-provider";
import { importUsageFile, pullDueSources, pullSource, resolveCredential, type PullOptions } from "./pull";
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
  // The clock stands still at `now` unless a test moves it (claims read it afresh).
  const options = (): PullOptions => ({ now, secrets, egress: { allowHosts: ["127.0.0.1"] }, retryCapMs: 20, clock: () => now });

  beforeAll(async () => {
    fake = await startFakeProvider({ pageSize: 2 });
    const rows = await t.db
      .insert(endpoints)
      .values([
        {
          key: "llm.chat",
          name: "Chat",
          unit: "tokens",
          parts: [
            { name: "input", pricePico: 2_500_000 },
            { name: "output", pricePico: 10_000_000 },
          ],
          perCallMax: 100_000,
        },
        { key: "sms.send", name: "SMS", unit: "messages", parts: [{ name: "units", pricePico: 7_900_000_000 }], perCallMax: 1 },
      ])
      .returning({ id: endpoints.id, key: endpoints.key });
    llm = rows.find((r) => r.key === "llm.chat")?.id ?? 0;
    sms = rows.find((r) => r.key === "sms.send")?.id ?? 0;
    const [b] = await t.db
      .insert(budgets)
      .values({ key: "ai.month", name: "AI", scope: "global", window: "billing_month", value: 1_000_000, maxValue: 10_000_000, defaultValue: 1_000_000 })
      .returning({ id: budgets.id });
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
    const [row] = await t.db
      .insert(usageSources)
      .values({ createdBy: "test", location: fake.url, ...values })
      .returning();
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
    expect(result).toEqual({ sourceId: s.id, days: ["2026-10-31", "2026-11-01", "2026-11-02"], rows: 7, unmapped: 1 });
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id)).orderBy(usageRows.id);
    // A model's tokens come per usage field, each priced at the endpoint's part of its name.
    expect(rows.map((r) => [r.day, r.item, r.field, r.units, r.costMicros, r.endpointId, r.budgetId, r.part])).toEqual([
      ["2026-10-31", "gpt-4o-2024-08-06", "input", 600, null, llm, null, "input"],
      ["2026-10-31", "gpt-4o-2024-08-06", "output", 400, null, llm, null, "output"],
      ["2026-10-31", "o1-preview", "input", 10, null, null, budget, null],
      ["2026-10-31", "o1-preview", "output", 10, null, null, budget, null],
      ["2026-11-02", "whisper-1", "input", 7, null, null, null, null],
      ["2026-10-31", "gpt-4o, output", null, 0, 2_500_000, llm, null, "output"],
      ["2026-10-31", "o1, input", null, 0, 750_000, null, budget, null],
    ]);
    expect(rows[0]?.raw).toMatchObject({ api: "usage/completions", model: "gpt-4o-2024-08-06", input_tokens: 600 });
    const pulls = await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id)).orderBy(usagePulls.day);
    expect(pulls.map((p) => [p.day, p.via, p.rows, p.unmappedRows])).toEqual([
      ["2026-10-31", "api", 6, 0],
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
        writeUsageDays(
          t.db,
          s.id,
          [
            { day: "2026-11-01", item: "x", units: k, costMicros: null, raw: {} },
            { day: "2026-11-01", item: "y", units: k, costMicros: null, raw: {} },
          ],
          { days: ["2026-11-01"], via: "api" },
        ),
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
    const result = await importUsageFile(t.db, s.id, "date,item,units,cost\n2026-11-01,sms.send,900,\n2026-11-01,unknown.thing,4,0.50\n", {
      actor: admin,
      now,
    });
    expect(result).toEqual({ sourceId: s.id, days: ["2026-11-01"], rows: 2, unmapped: 1 });
    const rows = await t.db.select().from(usageRows).where(eq(usageRows.sourceId, s.id)).orderBy(usageRows.day, usageRows.item);
    expect(rows.map((r) => [r.day, r.item, r.units, r.costMicros, r.endpointId, r.part])).toEqual([
      // Written before the import, a day it does not hold: kept.
      ["2026-10-30", "sms.send", 9, null, sms, "units"],
      ["2026-11-01", "sms.send", 900, null, sms, "units"],
      ["2026-11-01", "unknown.thing", 4, 500_000, null, null],
    ]);
    const [pull] = await t.db
      .select()
      .from(usagePulls)
      .where(and(eq(usagePulls.sourceId, s.id), eq(usagePulls.day, "2026-11-01")));
    expect(pull?.via).toBe("file (admin@test.local)");
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "usage.import"));
    expect(event).toMatchObject({
      actor: "admin@test.local",
      target: "postmark",
      details: { sourceId: s.id, source: "postmark", days: ["2026-11-01"], rows: 2, unmapped: 1 },
    });
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
    const error: unknown = await importUsageFile(t.db, s.id, "date,item,units\n2026-11-01,a,1\n2026-11-31,b,1\n2026-11-01,c,1e9\n", {
      actor: admin,
      now,
    }).catch((e: unknown) => e);
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
    const s = await source({ name: "api", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI_NOT_SET" });
    await expect(importUsageFile(t.db, s.id, "date,item,units\n2026-11-01,a,1\n", { actor: admin, now })).rejects.toMatchObject({ code: "wrong_kind" });
    await expect(pullSource(t.db, s.id, options())).rejects.toMatchObject({
      code: "credential_missing",
      message: "CEILINGS_SECRET_OPENAI_NOT_SET is not set in the worker's environment (the key of 'api')",
    });
  });

  it("an API source reads only its kind's secrets: never another feature's (the SMTP password), whatever its row says", async () => {
    const lookup = (name: string) => ({ CEILINGS_SECRET_SMTP_PASSWORD: "smtp-password-of-the-alerts", CEILINGS_SECRET_TWILIO_MAIN: "tw" })[name];
    const exfil = { name: "exfil", kind: "openai", credentialRef: "env:CEILINGS_SECRET_SMTP_PASSWORD" } as const;
    expect(() => resolveCredential(exfil, lookup)).toThrow(
      "the openai source 'exfil' must name its key as env:CEILINGS_SECRET_OPENAI or env:CEILINGS_SECRET_OPENAI_..., got 'env:CEILINGS_SECRET_SMTP_PASSWORD'",
    );
    expect(() => resolveCredential({ name: "x", kind: "anthropic", credentialRef: "env:CEILINGS_SECRET_TWILIO_MAIN" }, lookup)).toThrow(
      /CEILINGS_SECRET_ANTHROPIC/,
    );
    expect(resolveCredential({ name: "x", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO_MAIN" }, lookup)).toBe("tw");
    // Its row pointed at another host, a pull refuses before any request (the key stays home).
    const s = await source({ name: "elsewhere", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI" });
    await expect(pullSource(t.db, s.id, { ...options(), egress: { allowHosts: [] } })).rejects.toMatchObject({
      code: "host_refused",
      message: expect.stringContaining("sent only to api.openai.com"),
    });
    expect(fake.requests).toHaveLength(0);
  });

  it("a provider item holding a NUL fails the pull with a sentence naming provider, day and code point, not a database error", async () => {
    const s = await source({ name: "openai-nul", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI" });
    fake.setOpenAI([{ day: "2026-11-02", model: "gpt-4o\u0000evil", inputTokens: 10, outputTokens: 5 }]);
    const outcomes = await pullDueSources(t.db, options());
    fake.setOpenAI([]);
    expect(outcomes.map((o) => o.ok)).toEqual([false]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(after?.lastPullError).toBe(
      "OpenAI reported an item on 2026-11-02 holding a control character (U+0000): 'gpt-4o<U+0000>evil'; nothing was written for 'openai-nul'",
    );
  });

  it("a file source reads its location, a URL or a local path, and replaces the days the file holds", async () => {
    fake.setFile("/usage/postmark.json", '[{"date":"2026-11-01","item":"sms.send","units":7}]');
    const byUrl = await source({ name: "by-url", kind: "file", location: `${fake.url}/usage/postmark.json` });
    expect(await pullSource(t.db, byUrl.id, options())).toMatchObject({ days: ["2026-11-01"], rows: 1, unmapped: 0 });
    const dir = await mkdtemp(path.join(tmpdir(), "usage-"));
    const file = path.join(dir, "usage.csv");
    await writeFile(file, "date,item,units\n2026-11-02,sms.send,3\n");
    const byPath = await source({ name: "by-path", kind: "file", location: file });
    expect(await pullSource(t.db, byPath.id, { ...options(), fileDir: dir })).toMatchObject({ days: ["2026-11-02"], rows: 1 });
    // Without USAGE_FILE_DIR no local path is read.
    await expect(pullSource(t.db, byPath.id, { ...options(), fileDir: null })).rejects.toMatchObject({
      code: "no_location",
      message: expect.stringContaining("USAGE_FILE_DIR, which is not set"),
    });
  });

  it("a local file location: only a regular file inside USAGE_FILE_DIR, no symlink or .. escape, and a FIFO never hangs the pull", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "usage-dir-"));
    const outside = await mkdtemp(path.join(tmpdir(), "usage-outside-"));
    await writeFile(path.join(outside, "secret.csv"), "date,item,units\n2026-11-02,sms.send,3\n");
    await symlink(path.join(outside, "secret.csv"), path.join(dir, "link.csv"));
    const fifo = path.join(dir, "usage.csv");
    execFileSync("mkfifo", [fifo]);
    const refused = async (name: string, location: string, why: RegExp) => {
      const s = await source({ name, kind: "file", location });
      await expect(pullSource(t.db, s.id, { ...options(), fileDir: dir })).rejects.toMatchObject({ code: "no_location", message: expect.stringMatching(why) });
    };
    await refused("dotdot", `${dir}/../${path.basename(outside)}/secret.csv`, /inside USAGE_FILE_DIR/);
    await refused("symlink", path.join(dir, "link.csv"), /outside USAGE_FILE_DIR/);
    await refused("zero", "/dev/zero", /inside USAGE_FILE_DIR/);
    const started = Date.now();
    await refused("fifo", fifo, /not a regular file/);
    expect(Date.now() - started).toBeLessThan(2_000);
    // No reader ever opened the FIFO: a writer opening it without blocking finds none.
    await expect(open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).rejects.toMatchObject({ code: "ENXIO" });
  });

  it("pullDueSources: pulls the requested and the due, records failures (old rows kept), clears the request, never throws", async () => {
    const ok = await source({ name: "due", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    const fresh = await source({
      name: "fresh",
      kind: "twilio",
      credentialRef: "env:CEILINGS_SECRET_TWILIO",
      account: FAKE_KEYS.twilio.accountSid,
      lastPullAt: new Date(now.getTime() - 3_600_000),
    });
    const asked = await source({
      name: "asked",
      kind: "twilio",
      credentialRef: "env:CEILINGS_SECRET_TWILIO",
      account: FAKE_KEYS.twilio.accountSid,
      lastPullAt: new Date(now.getTime() - 3_600_000),
      pullRequestedAt: new Date(now.getTime() - 1000),
    });
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

  it("a failed pull is tried again after 15 minutes, then 30, 60, ... at most every 6 hours; a good one next day", async () => {
    const s = await source({ name: "down", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI", createdAt: now });
    const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
    let down = true;
    const fetchImpl: typeof fetch = async (url, init) => (down ? new Response("<html>down</html>", { status: 500 }) : fetch(url, init));
    const pullAt = async (minutes: number) =>
      (await pullDueSources(t.db, { ...options(), fetchImpl, now: at(minutes), clock: () => at(minutes) })).map((o) => o.ok);
    expect(await pullAt(0)).toEqual([false]);
    expect(await pullAt(14)).toEqual([]);
    expect(await pullAt(15)).toEqual([false]); // 15 min after the first failure
    expect(await pullAt(44)).toEqual([]);
    expect(await pullAt(45)).toEqual([false]); // 30 min later
    expect(await pullAt(104)).toEqual([]);
    expect(await pullAt(105)).toEqual([false]); // 60 min later
    expect(await pullAt(225)).toEqual([false]); // 120
    expect(await pullAt(465)).toEqual([false]); // 240
    expect(await pullAt(465 + 359)).toEqual([]);
    expect(await pullAt(465 + 360)).toEqual([false]); // capped at 6 h
    expect(await pullAt(465 + 720)).toEqual([false]);
    down = false;
    expect(await pullAt(465 + 1080)).toEqual([true]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(after).toMatchObject({ lastPullError: null, lastPullOk: at(465 + 1080) });
    // Good again: the next pull is a day later, not 15 minutes.
    expect(await pullAt(465 + 1080 + 60)).toEqual([]);
  });

  it("a pull whose comparison failed is not retried early (the pull itself was good)", async () => {
    await source({ name: "cmp", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI" });
    const outcomes = await pullDueSources(t.db, {
      ...options(),
      afterPull: async () => {
        throw new Error("comparison broke");
      },
    });
    expect(outcomes.map((o) => o.ok)).toEqual([false]);
    const later = new Date(now.getTime() + 60 * 60_000);
    expect(await pullDueSources(t.db, { ...options(), now: later, clock: () => later })).toEqual([]);
  });

  it("Pull now pressed while a pull runs is kept: the source is pulled again next round", async () => {
    const s = await source({
      name: "again",
      kind: "twilio",
      credentialRef: "env:CEILINGS_SECRET_TWILIO",
      account: FAKE_KEYS.twilio.accountSid,
      lastPullAt: now,
      lastPullOk: now,
      pullRequestedAt: new Date(now.getTime() - 60_000),
    });
    const { requestPull } = await import("./source-write");
    let pressed = false;
    const first = await pullDueSources(t.db, {
      ...options(),
      // Pressed again while this pull runs (after its claim, before it is recorded).
      fetchImpl: async (url, init) => {
        if (!pressed) await requestPull(t.db, { sourceId: s.id, actor: admin });
        pressed = true;
        return fetch(url, init);
      },
    });
    expect(first.map((o) => o.ok)).toEqual([true]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(after?.pullRequestedAt).not.toBeNull();
    expect((await pullDueSources(t.db, options())).map((o) => o.name)).toEqual(["again"]);
    const [served] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(served?.pullRequestedAt).toBeNull();
  });

  it("each claim is taken at the time it is taken, not when the round began", async () => {
    const a = await source({ name: "first", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    const b = await source({ name: "second", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    let clockNow = now;
    const claims: (Date | null)[] = [];
    await pullDueSources(t.db, {
      ...options(),
      clock: () => clockNow,
      // Each pull takes 4 minutes (its request); each claim must run 5 minutes from when it was taken.
      fetchImpl: async (url, init) => {
        const held = await t.db.select({ until: usageSources.pullingUntil }).from(usageSources).where(isNotNull(usageSources.pullingUntil));
        claims.push(...held.map((h) => h.until));
        clockNow = new Date(clockNow.getTime() + 4 * 60_000);
        return fetch(url, init);
      },
    });
    expect(claims).toEqual([new Date(now.getTime() + 5 * 60_000), new Date(now.getTime() + 9 * 60_000)]);
    expect([a.id, b.id].length).toBe(2);
  });

  it("one pull has a deadline below the claim: a provider asking to wait an hour does not hold the claim past it", async () => {
    await source({ name: "slow", kind: "openai", credentialRef: "env:CEILINGS_SECRET_OPENAI" });
    const tooMany: typeof fetch = async () => new Response("slow down", { status: 429, headers: { "retry-after": "3600" } });
    const started = Date.now();
    const outcomes = await pullDueSources(t.db, { ...options(), fetchImpl: tooMany, retryCapMs: 3_600_000, deadlineMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcomes[0]?.error).toMatch(/ran out of time/);
  });

  it("a file's item naming an endpoint key maps it by a rule of its own, and a second file source naming it is left unmapped, saying so", async () => {
    const a = await source({ name: "file-a", kind: "file", location: null });
    const b = await source({ name: "file-b", kind: "file", location: null });
    const csv = "date,item,units\n2026-11-02,sms.send,100\n";
    const first = await importUsageFile(t.db, a.id, csv, { actor: admin, now });
    expect(first).toMatchObject({ rows: 1, unmapped: 0 });
    expect(first.notes).toBeUndefined();
    const rules = await t.db.select().from(usageSourceRules).where(eq(usageSourceRules.sourceId, a.id));
    expect(rules).toMatchObject([{ match: "sms.send", endpointId: sms, createdBy: admin.email }]);
    const audit = (await t.db.select().from(auditEvents)).filter((e) => e.action === "usage_rule.add" && e.target === `usage_source:${a.id}`);
    expect(audit).toHaveLength(1);
    const second = await importUsageFile(t.db, b.id, csv, { actor: admin, now });
    expect(second).toMatchObject({
      rows: 1,
      unmapped: 1,
      notes: ["'sms.send' names an endpoint the source 'file-a' maps (rule 'sms.send'): its rows are left unmapped (one source per endpoint)"],
    });
    const mapped = await t.db.select({ sourceId: usageRows.sourceId }).from(usageRows).where(eq(usageRows.endpointId, sms));
    expect(new Set(mapped.map((m) => m.sourceId))).toEqual(new Set([a.id]));
  });

  it("a file's item naming an endpoint in a budget another source maps is left unmapped, saying so", async () => {
    const [e] = await t.db
      .insert(endpoints)
      .values({ key: "mail.send", name: "Mail", unit: "emails", parts: [{ name: "units", pricePico: 1_000_000_000 }], perCallMax: 1 })
      .returning({ id: endpoints.id });
    const [b] = await t.db
      .insert(budgets)
      .values({ key: "mail.month", name: "Mail", scope: "global", window: "billing_month", value: 1_000_000, maxValue: 10_000_000, defaultValue: 1_000_000 })
      .returning({ id: budgets.id });
    if (!e || !b) throw new Error("not inserted");
    await t.db.insert(budgetMembers).values({ budgetId: b.id, endpointId: e.id });
    const other = await source({ name: "mail-budget", kind: "file", location: null });
    await t.db.insert(usageSourceRules).values({ sourceId: other.id, match: "all*", budgetId: b.id, createdBy: "test" });
    const s = await source({ name: "mail-file", kind: "file", location: null });
    const result = await importUsageFile(t.db, s.id, "date,item,units\n2026-11-02,mail.send,5\n", { actor: admin, now });
    expect(result).toMatchObject({
      rows: 1,
      unmapped: 1,
      notes: [
        "'mail.send' names an endpoint in the budget 'mail.month', which the source 'mail-budget' maps (rule 'all*'): its rows are left unmapped (a budget's members are billed by its source)",
      ],
    });
    expect(await t.db.select().from(usageSourceRules).where(eq(usageSourceRules.sourceId, s.id))).toEqual([]);
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

  it("a pull whose claim expired and was taken by another worker neither records its outcome nor clears that worker's claim", async () => {
    const s = await source({ name: "overtaken", kind: "twilio", credentialRef: "env:CEILINGS_SECRET_TWILIO", account: FAKE_KEYS.twilio.accountSid });
    const theirs = new Date(now.getTime() + 7 * 60_000);
    const outcomes = await pullDueSources(t.db, {
      ...options(),
      // While this pull runs, its claim lapses and another worker claims the source.
      fetchImpl: async (url, init) => {
        await t.db.update(usageSources).set({ pullingUntil: theirs }).where(eq(usageSources.id, s.id));
        return fetch(url, init);
      },
    });
    expect(outcomes).toMatchObject([
      {
        name: "overtaken",
        ok: false,
        error: "the claim on 'overtaken' expired before this pull ended and another worker holds the source: this pull's outcome was not recorded on it",
      },
    ]);
    const [after] = await t.db.select().from(usageSources).where(eq(usageSources.id, s.id));
    expect(after).toMatchObject({ pullingUntil: theirs, lastPullAt: null, lastPullOk: null, lastPullError: null });
  });

  it("a claim held by another worker is skipped until it expires", async () => {
    const s = await source({
      name: "claimed",
      kind: "twilio",
      credentialRef: "env:CEILINGS_SECRET_TWILIO",
      account: FAKE_KEYS.twilio.accountSid,
      pullingUntil: new Date(now.getTime() + 60_000),
    });
    expect(await pullDueSources(t.db, options())).toEqual([]);
    await t.db
      .update(usageSources)
      .set({ pullingUntil: new Date(now.getTime() - 1) })
      .where(eq(usageSources.id, s.id));
    expect((await pullDueSources(t.db, options())).map((o) => o.name)).toEqual(["claimed"]);
  });
});
