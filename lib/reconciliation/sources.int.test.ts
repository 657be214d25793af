import { asc, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { auditEvents, budgetMembers, budgets, endpoints } from "@/db/schema";
import { reconciliationDays, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema/reconciliation";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { InputError } from "@/lib/limits/errors";
import {
  addUsageRule,
  createUsageSource,
  deleteUsageSource,
  getUsageSourceDetail,
  listUsageSources,
  RAW_PAGE,
  removeUsageRule,
  requestPull,
  setUsageSourceEnabled,
  sourceVersion,
  updateUsageSource,
} from "./sources";

// Usage sources as staff manage them, on a real database: every bad input refused with its field
// named and nothing written, one source per target (also when two admins race), the version check
// on edits, the cascade of a delete, and an audit row for each change.

const actor = { type: "staff", email: "admin@example.com" } as const;
const SID = `AC${"0123456789abcdef".repeat(2)}`;
let n = 0;

const openai = (over: Record<string, string> = {}) => ({
  name: `OpenAI ${(n += 1)}`,
  kind: "openai",
  location: "",
  credentialRef: "env:CEILINGS_SECRET_OPENAI_ADMIN",
  account: "",
  timeZone: "UTC",
  currency: "USD",
  lookbackDays: "3",
  thresholdPercent: "2",
  thresholdMoney: "1",
  ...over,
});

async function fieldErrors(p: Promise<unknown>): Promise<Record<string, string>> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  const out: Record<string, string> = {};
  for (const { path, message } of (error as InputError).problems) out[path] ??= message;
  return out;
}

describe.skipIf(skipWithoutDatabase())("usage sources", () => {
  const t = useTestDatabase("usage_sources");

  async function endpoint(currency = "USD") {
    n += 1;
    const [row] = await t.db
      .insert(endpoints)
      .values({
        key: `llm.s${n}`,
        name: "m",
        unit: "tokens",
        perCallMax: 100,
        currency,
        parts: [
          { name: "input", pricePico: 1 },
          { name: "output", pricePico: 2 },
        ],
      })
      .returning();
    if (!row) throw new Error("no endpoint");
    return row;
  }

  async function budget() {
    n += 1;
    const [row] = await t.db
      .insert(budgets)
      .values({ key: `llm.b${n}`, name: "b", scope: "global", window: "utc_day", value: 1, minValue: 0, maxValue: 10, defaultValue: 1 })
      .returning();
    if (!row) throw new Error("no budget");
    return row;
  }

  const audits = async (action: string) => t.db.select().from(auditEvents).where(eq(auditEvents.action, action)).orderBy(asc(auditEvents.id));

  it("creates an API source with the provider's default URL and audits the settings", async () => {
    const s = await createUsageSource(t.db, { input: openai({ name: "  OpenAI prod  ", thresholdPercent: "2.5", thresholdMoney: "0.50" }), actor });
    expect(s).toMatchObject({
      name: "OpenAI prod",
      location: "https://api.openai.com",
      credentialRef: "env:CEILINGS_SECRET_OPENAI_ADMIN",
      account: null,
      thresholdBasisPoints: 250,
      thresholdMicros: 500_000,
      lookbackDays: 3,
      enabled: true,
      createdBy: actor.email,
    });
    const [a] = (await audits("usage_source.create")).filter((e) => e.target === `usage_source:${s.id}`);
    expect(a).toMatchObject({
      actor: actor.email,
      details: { source: "OpenAI prod", after: { credentialRef: "env:CEILINGS_SECRET_OPENAI_ADMIN", thresholdBasisPoints: 250 } },
    });
  });

  const withEnv = async (name: string, value: string | undefined, run: () => Promise<void>) => {
    vi.stubEnv(name, value);
    try {
      await run();
    } finally {
      vi.unstubAllEnvs();
    }
  };

  it("creates a file source with no location (imported by hand) and one reading a path inside USAGE_FILE_DIR", async () => {
    const a = await createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "", timeZone: "America/New_York" }), actor });
    expect(a).toMatchObject({ kind: "file", location: null, credentialRef: null, timeZone: "America/New_York" });
    await withEnv("USAGE_FILE_DIR", "/var/usage", async () => {
      const b = await createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "", location: "/var/usage/postmark.csv" }), actor });
      expect(b.location).toBe("/var/usage/postmark.csv");
      expect(
        (
          await fieldErrors(
            createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "", location: "/var/usage/../../proc/self/environ" }), actor }),
          )
        ).location,
      ).toMatch(/inside USAGE_FILE_DIR/);
      expect(
        (await fieldErrors(createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "", location: "/dev/zero" }), actor }))).location,
      ).toMatch(/inside USAGE_FILE_DIR/);
    });
    await withEnv("USAGE_FILE_DIR", undefined, async () => {
      expect(
        (await fieldErrors(createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "", location: "/var/usage/postmark.csv" }), actor })))
          .location,
      ).toMatch(/set it/);
    });
  });

  it("creates a Twilio source with its Account SID and a trailing slash trimmed from its URL (an http host only when allow-listed)", async () => {
    const input = openai({ kind: "twilio", account: SID, location: "http://127.0.0.1:4010/", credentialRef: "env:CEILINGS_SECRET_TWILIO" });
    await withEnv("USAGE_SOURCE_ALLOW_HOSTS", undefined, async () => {
      expect((await fieldErrors(createUsageSource(t.db, { input, actor }))).location).toMatch(
        /only to api\.twilio\.com or a host named in USAGE_SOURCE_ALLOW_HOSTS/,
      );
    });
    await withEnv("USAGE_SOURCE_ALLOW_HOSTS", "127.0.0.1", async () => {
      const s = await createUsageSource(t.db, { input, actor });
      expect(s).toMatchObject({ kind: "twilio", account: SID, location: "http://127.0.0.1:4010" });
    });
  });

  it("an API source's key goes only to its provider's host, named by its kind's own prefix", async () => {
    await withEnv("USAGE_SOURCE_ALLOW_HOSTS", undefined, async () => {
      const exfil = await fieldErrors(
        createUsageSource(t.db, { input: openai({ location: "https://collector.example", credentialRef: "env:CEILINGS_SECRET_SMTP_PASSWORD" }), actor }),
      );
      expect(exfil.location).toMatch(/sent only to api\.openai\.com or a host named in USAGE_SOURCE_ALLOW_HOSTS, not to collector\.example/);
      expect(exfil.credentialRef).toMatch(/env:CEILINGS_SECRET_OPENAI or env:CEILINGS_SECRET_OPENAI_/);
      expect((await fieldErrors(createUsageSource(t.db, { input: openai({ location: "http://api.openai.com" }), actor }))).location).toMatch(
        /not sent over plain http/,
      );
      expect((await fieldErrors(createUsageSource(t.db, { input: openai({ kind: "anthropic" }), actor }))).credentialRef).toMatch(/CEILINGS_SECRET_ANTHROPIC/);
    });
  });

  const bad: [string, Record<string, string>, string, RegExp][] = [
    ["empty name", { name: "   " }, "name", /name is required/],
    ["long name", { name: "x".repeat(81) }, "name", /at most 80/],
    ["NUL in the name", { name: "a\u0000b" }, "name", /control characters/],
    ["unknown kind", { kind: "mailgun" }, "kind", /kind must be one of/],
    ["an ftp location", { location: "ftp://example.com" }, "location", /http or https URL/],
    ["a URL with a password", { location: "https://u:p@api.openai.com" }, "location", /user or password/],
    ["a relative path for an API", { location: "usage.csv" }, "location", /http or https URL/],
    ["no credential for an API", { credentialRef: "" }, "credentialRef", /required/],
    ["a raw key as credential", { credentialRef: "sk-admin-123" }, "credentialRef", /env:CEILINGS_SECRET_/],
    ["another env variable", { credentialRef: "env:DATABASE_URL" }, "credentialRef", /env:CEILINGS_SECRET_/],
    ["a credential on a file source", { kind: "file", credentialRef: "env:CEILINGS_SECRET_X" }, "credentialRef", /takes no credential/],
    ["a relative path on a file source", { kind: "file", credentialRef: "", location: "usage.csv" }, "location", /absolute path/],
    ["Twilio without SID", { kind: "twilio" }, "account", /Account SID/],
    ["Twilio with a bad SID", { kind: "twilio", account: "AC123" }, "account", /AC followed by 32 hex/],
    ["unknown time zone", { timeZone: "Mars/Olympus" }, "timeZone", /IANA/],
    ["lower-case currency", { currency: "usd" }, "currency", /three capital letters/],
    ["lookback 0", { lookbackDays: "0" }, "lookbackDays", /1 to 35/],
    ["lookback 36", { lookbackDays: "36" }, "lookbackDays", /1 to 35/],
    ["lookback 1e1", { lookbackDays: "1e1" }, "lookbackDays", /whole number/],
    ["percent 101", { thresholdPercent: "101" }, "thresholdPercent", /at most 100/],
    ["percent with 3 decimals", { thresholdPercent: "2.555" }, "thresholdPercent", /two decimals/],
    ["percent -1", { thresholdPercent: "-1" }, "thresholdPercent", /0 to 100/],
    ["money 1e9", { thresholdMoney: "1e9" }, "thresholdMoney", /amount such as/],
    ["money 500abc", { thresholdMoney: "500abc" }, "thresholdMoney", /amount such as/],
    ["money -5", { thresholdMoney: "-5" }, "thresholdMoney", /0 or more/],
    ["money empty", { thresholdMoney: "" }, "thresholdMoney", /required/],
    ["unmapped 1e9", { unmappedMoney: "1e9" }, "unmappedMoney", /amount such as/],
    ["unmapped 500abc", { unmappedMoney: "500abc" }, "unmappedMoney", /amount such as/],
    ["unmapped -5", { unmappedMoney: "-5" }, "unmappedMoney", /0 or more/],
    ["unmapped empty", { unmappedMoney: "" }, "unmappedMoney", /required/],
    ["pull time 24:00", { pullAt: "24:00" }, "pullAt", /HH:MM from 00:00 to 23:59/],
    ["pull time 6:00", { pullAt: "6:00" }, "pullAt", /HH:MM/],
    ["pull time 06:00:00", { pullAt: "06:00:00" }, "pullAt", /HH:MM/],
    ["pull time empty", { pullAt: "" }, "pullAt", /HH:MM/],
  ];
  for (const [name, over, field, message] of bad) {
    it(`refuses ${name}, naming ${field}, and writes nothing`, async () => {
      const before = await t.db.select().from(usageSources);
      const errors = await fieldErrors(createUsageSource(t.db, { input: openai(over), actor }));
      expect(errors[field]).toMatch(message);
      expect(await t.db.select().from(usageSources)).toEqual(before);
    });
  }

  it("keeps the unmapped threshold and the pull time, $1 and 06:00 unless set; a change to either is saved and listed", async () => {
    const s = await createUsageSource(t.db, { input: openai({ name: "Morning" }), actor });
    expect(s).toMatchObject({ unmappedThresholdMicros: 1_000_000, pullAt: "06:00:00" });
    const { source, changes } = await updateUsageSource(t.db, {
      sourceId: s.id,
      expectedVersion: sourceVersion(s),
      input: openai({ name: "Morning", unmappedMoney: "0.25", pullAt: "07:30" }),
      actor,
    });
    expect(source).toMatchObject({ unmappedThresholdMicros: 250_000, pullAt: "07:30:00" });
    expect(changes).toEqual([
      { field: "unmappedThresholdMicros", before: 1_000_000, after: 250_000 },
      { field: "pullAt", before: "06:00:00", after: "07:30:00" },
    ]);
  });

  it("refuses a second source of the same name", async () => {
    await createUsageSource(t.db, { input: openai({ name: "Twin" }), actor });
    await expect(createUsageSource(t.db, { input: openai({ name: "Twin" }), actor })).rejects.toMatchObject({
      code: "duplicate_key",
      message: "a usage source named 'Twin' already exists",
    });
  });

  it("updates against the version shown: a stale version is a conflict; the kind is fixed", async () => {
    const s = await createUsageSource(t.db, { input: openai(), actor });
    const version = sourceVersion(s);
    const { source, changes } = await updateUsageSource(t.db, {
      sourceId: s.id,
      expectedVersion: version,
      input: openai({ name: s.name, lookbackDays: "7" }),
      actor,
    });
    expect(changes).toEqual([{ field: "lookbackDays", before: 3, after: 7 }]);
    expect(sourceVersion(source)).not.toBe(version);
    await expect(
      updateUsageSource(t.db, { sourceId: s.id, expectedVersion: version, input: openai({ name: s.name, lookbackDays: "9" }), actor }),
    ).rejects.toMatchObject({ code: "conflict" });
    const errors = await fieldErrors(
      updateUsageSource(t.db, {
        sourceId: s.id,
        expectedVersion: sourceVersion(source),
        input: openai({ name: s.name, kind: "anthropic", credentialRef: "env:CEILINGS_SECRET_ANTHROPIC" }),
        actor,
      }),
    );
    expect(errors.kind).toMatch(/fixed/);
    await expect(
      updateUsageSource(t.db, { sourceId: s.id, expectedVersion: sourceVersion(source), input: openai({ name: s.name, lookbackDays: "7" }), actor }),
    ).rejects.toMatchObject({ code: "unchanged" });
    const [a] = (await audits("usage_source.update")).filter((e) => e.target === `usage_source:${s.id}`);
    expect(a?.details).toMatchObject({ changes: [{ field: "lookbackDays", before: 3, after: 7 }] });
  });

  it("refuses to change the currency away from the currency of the targets its rules map, as adding a rule would", async () => {
    const input = openai({ kind: "file", credentialRef: "" });
    const s = await createUsageSource(t.db, { input, actor });
    const e = await endpoint("USD");
    const rule = await addUsageRule(t.db, { sourceId: s.id, match: "x", endpointKey: e.key, actor });
    // EUR bills would be compared with USD charges, micros for micros.
    const errors = await fieldErrors(
      updateUsageSource(t.db, { sourceId: s.id, expectedVersion: sourceVersion(s), input: { ...input, currency: "EUR" }, actor }),
    );
    expect(errors.currency).toContain(`endpoint '${e.key}' (USD)`);
    expect((await t.db.select().from(usageSources).where(eq(usageSources.id, s.id)))[0]?.currency).toBe("USD");
    // Without the rule, the currency is the source's to change.
    await removeUsageRule(t.db, { sourceId: s.id, ruleId: rule.id, actor });
    const { source } = await updateUsageSource(t.db, { sourceId: s.id, expectedVersion: sourceVersion(s), input: { ...input, currency: "EUR" }, actor });
    expect(source.currency).toBe("EUR");
  });

  it("pauses and resumes; a paused source is not pulled on demand", async () => {
    const s = await createUsageSource(t.db, { input: openai(), actor });
    await setUsageSourceEnabled(t.db, { sourceId: s.id, enabled: false, actor });
    await expect(requestPull(t.db, { sourceId: s.id, actor })).rejects.toMatchObject({ message: expect.stringMatching(/is paused/) });
    await expect(setUsageSourceEnabled(t.db, { sourceId: s.id, enabled: false, actor })).rejects.toMatchObject({ code: "unchanged" });
    await setUsageSourceEnabled(t.db, { sourceId: s.id, enabled: true, actor });
    const now = new Date("2026-12-02T06:00:00Z");
    const first = await requestPull(t.db, { sourceId: s.id, actor, now });
    // Asked again: the time moves on (a pull claimed between the two serves only the first, so the
    // second is not lost); before the worker came, both are served by one pull.
    const second = await requestPull(t.db, { sourceId: s.id, actor, now: new Date("2026-12-02T06:00:05Z") });
    expect(first.requestedAt).toEqual(now);
    expect(second.requestedAt).toEqual(new Date("2026-12-02T06:00:05Z"));
    expect((await audits("usage_source.pause")).some((e) => e.target === `usage_source:${s.id}`)).toBe(true);
    expect((await audits("usage_source.resume")).some((e) => e.target === `usage_source:${s.id}`)).toBe(true);
    expect((await audits("usage_source.pull_requested")).filter((e) => e.target === `usage_source:${s.id}`)).toHaveLength(2);
  });

  it("refuses Pull now for a file source with nothing to read", async () => {
    const s = await createUsageSource(t.db, { input: openai({ kind: "file", credentialRef: "" }), actor });
    await expect(requestPull(t.db, { sourceId: s.id, actor })).rejects.toMatchObject({ message: expect.stringMatching(/import its file by hand/) });
  });

  describe("rules", () => {
    it("maps an item to an endpoint part, and a prefix to a budget; audits both", async () => {
      const s = await createUsageSource(t.db, { input: openai(), actor });
      const e = await endpoint();
      const b = await budget();
      const r1 = await addUsageRule(t.db, { sourceId: s.id, match: " gpt-4o ", endpointKey: e.key, part: "output", actor });
      const r2 = await addUsageRule(t.db, { sourceId: s.id, match: "embed*", budgetKey: b.key, actor });
      expect(r1).toMatchObject({ match: "gpt-4o", endpointId: e.id, part: "output", targetKey: e.key });
      expect(r2).toMatchObject({ match: "embed*", budgetId: b.id, part: null });
      // The same source may map several items to one target.
      await addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o-2024*", endpointKey: e.key, actor });
      const adds = (await audits("usage_rule.add")).filter((a) => a.target === `usage_source:${s.id}`);
      expect(adds[0]).toMatchObject({ endpointKey: e.key, details: { match: "gpt-4o", endpoint: e.key, part: "output" } });
      expect(adds[1]).toMatchObject({ endpointKey: null, details: { match: "embed*", budget: b.key } });
      await removeUsageRule(t.db, { sourceId: s.id, ruleId: r1.id, actor });
      expect((await audits("usage_rule.remove")).at(-1)).toMatchObject({ endpointKey: e.key, details: { match: "gpt-4o" } });
      await expect(removeUsageRule(t.db, { sourceId: s.id, ruleId: r1.id, actor })).rejects.toMatchObject({ code: "not_found" });
    });

    it("refuses every bad rule, naming its field, and writes nothing", async () => {
      const s = await createUsageSource(t.db, { input: openai(), actor });
      const e = await endpoint();
      const eur = await endpoint("EUR");
      const b = await budget();
      await addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o", endpointKey: e.key, actor });
      const cases: [Parameters<typeof addUsageRule>[1], string, RegExp][] = [
        [{ sourceId: s.id, match: "", endpointKey: e.key, actor }, "match", /match is required/],
        [{ sourceId: s.id, match: "gpt\u0000", endpointKey: e.key, actor }, "match", /control characters/],
        [{ sourceId: s.id, match: "gpt*4o", endpointKey: e.key, actor }, "match", /not a wildcard/],
        [{ sourceId: s.id, match: "x".repeat(201), endpointKey: e.key, actor }, "match", /at most 200/],
        [{ sourceId: s.id, match: "gpt-4o ", endpointKey: e.key, actor }, "match", /already has a rule for 'gpt-4o'/],
        [{ sourceId: s.id, match: "m", endpointKey: "llm.nope", actor }, "endpointKey", /no endpoint 'llm.nope'/],
        [{ sourceId: s.id, match: "m", budgetKey: "llm.nope", actor }, "budgetKey", /no budget 'llm.nope'/],
        [{ sourceId: s.id, match: "m", endpointKey: e.key, part: "cached", actor }, "part", /has no part 'cached' \(its parts: input, output\)/],
        [{ sourceId: s.id, match: "m", budgetKey: b.key, part: "input", actor }, "part", /a budget has no parts/],
        [{ sourceId: s.id, match: "m", endpointKey: eur.key, actor }, "endpointKey", /priced in EUR, the source reports USD/],
        [{ sourceId: s.id, match: "m", endpointKey: e.key, budgetKey: b.key, actor }, "target", /not both/],
        [{ sourceId: s.id, match: "m", actor }, "target", /not neither/],
      ];
      const before = await t.db.select().from(usageSourceRules).orderBy(asc(usageSourceRules.id));
      for (const [params, field, message] of cases) {
        const errors = await fieldErrors(addUsageRule(t.db, params));
        expect(errors[field], JSON.stringify(params)).toMatch(message);
      }
      expect(await t.db.select().from(usageSourceRules).orderBy(asc(usageSourceRules.id))).toEqual(before);
    });

    it("refuses a target another source maps, naming that source", async () => {
      const a = await createUsageSource(t.db, { input: openai({ name: "First" }), actor });
      const b = await createUsageSource(t.db, { input: openai({ name: "Second" }), actor });
      const e = await endpoint();
      const bu = await budget();
      await addUsageRule(t.db, { sourceId: a.id, match: "gpt-4o*", endpointKey: e.key, actor });
      await addUsageRule(t.db, { sourceId: a.id, match: "all", budgetKey: bu.key, actor });
      expect((await fieldErrors(addUsageRule(t.db, { sourceId: b.id, match: "x", endpointKey: e.key, actor }))).endpointKey).toBe(
        `endpoint '${e.key}' is already mapped by the source 'First' (rule 'gpt-4o*'): one source per endpoint, or its usage would be counted twice`,
      );
      expect((await fieldErrors(addUsageRule(t.db, { sourceId: b.id, match: "x", budgetKey: bu.key, actor }))).budgetKey).toMatch(
        /already mapped by the source 'First'/,
      );
    });

    it("refuses a budget whose member another source maps, and an endpoint whose budget another source maps, naming that source", async () => {
      const a = await createUsageSource(t.db, { input: openai({ name: "Budget side" }), actor });
      const b = await createUsageSource(t.db, { input: openai({ name: "Member side" }), actor });
      const member = await endpoint();
      const loose = await endpoint();
      const bu = await budget();
      await t.db.insert(budgetMembers).values([
        { budgetId: bu.id, endpointId: member.id },
        { budgetId: bu.id, endpointId: loose.id },
      ]);
      await addUsageRule(t.db, { sourceId: b.id, match: "gpt-4o", endpointKey: member.key, actor });
      // The budget on source a would be charged its member's usage but billed none of it.
      expect((await fieldErrors(addUsageRule(t.db, { sourceId: a.id, match: "all", budgetKey: bu.key, actor }))).budgetKey).toBe(
        `budget '${bu.key}' has the member '${member.key}', which the source 'Member side' maps (rule 'gpt-4o'): the budget would be billed without that member's usage; map the budget on 'Member side', or remove that rule first`,
      );
      // The same source may map the budget and its member.
      await addUsageRule(t.db, { sourceId: b.id, match: "all", budgetKey: bu.key, actor });
      // Now the other member: source a may not map it, the budget is source b's.
      expect((await fieldErrors(addUsageRule(t.db, { sourceId: a.id, match: "x", endpointKey: loose.key, actor }))).endpointKey).toBe(
        `endpoint '${loose.key}' is a member of the budget '${bu.key}', which the source 'Member side' maps (rule 'all'): that budget would be billed without this endpoint's usage; map it on 'Member side', or remove that rule first`,
      );
      expect(await t.db.select().from(usageSourceRules).where(eq(usageSourceRules.sourceId, a.id))).toEqual([]);
    });

    it("two admins mapping one endpoint to two sources at once: exactly one wins", async () => {
      const e = await endpoint();
      const sources = await Promise.all([1, 2, 3, 4].map((i) => createUsageSource(t.db, { input: openai({ name: `Race ${n}-${i}` }), actor })));
      const results = await Promise.allSettled(sources.map((s) => addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o", endpointKey: e.key, actor })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await t.db.select().from(usageSourceRules).where(eq(usageSourceRules.endpointId, e.id))).toHaveLength(1);
    });
  });

  it("lists sources with their rules and days; the detail shows unmapped items and pages raw rows", async () => {
    const s = await createUsageSource(t.db, { input: openai({ name: "Detail" }), actor });
    const e = await endpoint();
    await addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o", endpointKey: e.key, actor });
    const day = "2026-12-01";
    await t.db.insert(usagePulls).values([
      { sourceId: s.id, day, via: "api", rows: RAW_PAGE + 3, unmappedRows: 3 },
      { sourceId: s.id, day: "2026-11-30", via: "api", rows: 0 },
    ]);
    await t.db
      .insert(usageRows)
      .values([
        ...Array.from({ length: RAW_PAGE }, (_, i) => ({ sourceId: s.id, day, item: `gpt-4o#${i}`, units: 10, costMicros: 5, endpointId: e.id, raw: { i } })),
        { sourceId: s.id, day, item: "o3", units: 7, costMicros: null, raw: {} },
        { sourceId: s.id, day, item: "o3-mini", units: 1, costMicros: 2_000_000, raw: {} },
        { sourceId: s.id, day: "2026-11-30", item: "o3", units: 5, costMicros: null, raw: {} },
      ]);
    const listed = (await listUsageSources(t.db)).find((x) => x.id === s.id);
    expect(listed).toMatchObject({ rules: 1, days: 2, lastDay: day });
    const d = await getUsageSourceDetail(t.db, s.id, { now: new Date("2026-12-02T06:00:00Z") });
    expect(d?.rules).toEqual([expect.objectContaining({ match: "gpt-4o", endpointKey: e.key, budgetKey: null })]);
    expect(d?.pulls.map((p) => p.day)).toEqual([day, "2026-11-30"]);
    expect(d?.unmapped).toEqual([
      { item: "o3", rows: 2, units: 12, unit: null, costMicros: null, lastDay: day },
      { item: "o3-mini", rows: 1, units: 1, unit: null, costMicros: 2_000_000, lastDay: day },
    ]);
    expect(d?.raw.day).toBe(day);
    expect(d?.raw.rows).toHaveLength(RAW_PAGE);
    const next = await getUsageSourceDetail(t.db, s.id, { day, after: d?.raw.next ?? 0 });
    expect(next?.raw.rows.map((r) => r.item)).toEqual(["o3", "o3-mini"]);
    expect(next?.raw.next).toBeNull();
    expect(await getUsageSourceDetail(t.db, 999_999)).toBeNull();
  });

  it("delete cascades to rules, pulls, rows and comparisons, and says what went", async () => {
    const s = await createUsageSource(t.db, { input: openai(), actor });
    const e = await endpoint();
    await addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o", endpointKey: e.key, actor });
    await t.db.insert(usagePulls).values({ sourceId: s.id, day: "2026-12-01", via: "api", rows: 1 });
    await t.db.insert(usageRows).values({ sourceId: s.id, day: "2026-12-01", item: "gpt-4o", units: 1, endpointId: e.id, raw: {} });
    await t.db.insert(reconciliationDays).values({
      sourceId: s.id,
      endpointId: e.id,
      day: "2026-12-01",
      dayStart: new Date("2026-12-01T00:00:00Z"),
      dayEnd: new Date("2026-12-02T00:00:00Z"),
      billedUnits: 1,
      billedMicros: 0,
      billedMoney: "priced",
      chargedUnits: 0,
      chargedMicros: 0,
    });
    expect(await deleteUsageSource(t.db, { sourceId: s.id, actor, reason: "moved to a proxy" })).toEqual({ name: s.name, days: 1 });
    for (const table of [usageSourceRules, usagePulls, usageRows, reconciliationDays])
      expect(await t.db.select().from(table).where(eq(table.sourceId, s.id))).toEqual([]);
    expect((await audits("usage_source.delete")).at(-1)).toMatchObject({
      reason: "moved to a proxy",
      details: { source: s.name, removed: { days: 1, rows: 1, compared: 1, rules: 1 } },
    });
    await expect(deleteUsageSource(t.db, { sourceId: s.id, actor })).rejects.toMatchObject({ code: "not_found" });
  });
});
