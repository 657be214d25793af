import { asc, count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { form } from "@/app/_lib/test-form";
import { auditEvents, endpoints } from "@/db/schema";
import { usageRows, usageSourceRules, usageSources } from "@/db/schema/reconciliation";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { addUsageRule, createUsageSource, setUsageSourceEnabled, sourceVersion } from "@/lib/reconciliation/sources";
import {
  addUsageRuleCore,
  badFileError,
  createUsageSourceCore,
  deleteUsageSourceCore,
  formatOf,
  importUsageFileCore,
  MAX_LISTED_LINES,
  pauseUsageSourceCore,
  removeUsageRuleCore,
  requestPullCore,
  resumeUsageSourceCore,
  updateUsageSourceCore,
} from "./source-action-core";

// The usage sources' server actions are public POST endpoints: each checks the role itself.
// Viewers read; operators ask for a pull now; admins do everything else. A refused call changes
// nothing; a bad field comes back next to its field and is audited as usage_source.rejected.

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;
const actor = { type: "system", name: "test" } as const;
let n = 0;

const settings = (over: Record<string, string> = {}) => ({
  name: `OpenAI ${(n += 1)}`,
  kind: "openai",
  location: "",
  credentialRef: "env:CEILINGS_SECRET_OPENAI",
  account: "",
  timeZone: "UTC",
  currency: "USD",
  lookbackDays: "3",
  thresholdPercent: "2",
  thresholdMoney: "1",
  ...over,
});

describe.skipIf(skipWithoutDatabase())("usage source server actions", () => {
  const t = useTestDatabase("usage_source_actions");

  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });

  async function snapshot() {
    return {
      sources: await t.db.select().from(usageSources).orderBy(asc(usageSources.id)),
      rules: await t.db.select().from(usageSourceRules).orderBy(asc(usageSourceRules.id)),
      rows: (await t.db.select({ n: count() }).from(usageRows))[0]?.n,
      audit: (await t.db.select({ n: count() }).from(auditEvents))[0]?.n,
    };
  }

  async function endpoint() {
    n += 1;
    const [row] = await t.db
      .insert(endpoints)
      .values({ key: `llm.a${n}`, name: "m", unit: "tokens", perCallMax: 100, parts: [{ name: "input", pricePico: 1 }] })
      .returning();
    return row?.key ?? "";
  }

  async function existing(opts: { kind?: string; paused?: boolean } = {}) {
    const s = await createUsageSource(t.db, { input: settings(opts.kind === "file" ? { kind: "file", credentialRef: "" } : {}), actor });
    const e = await endpoint();
    const rule = await addUsageRule(t.db, { sourceId: s.id, match: "gpt-4o", endpointKey: e, actor });
    if (opts.paused) await setUsageSourceEnabled(t.db, { sourceId: s.id, enabled: false, actor });
    return { id: String(s.id), version: sourceVersion(s), name: s.name, ruleId: String(rule.id), endpoint: e };
  }

  type Existing = Awaited<ReturnType<typeof existing>>;
  const cases: { name: string; core: Core; role: Role; kind?: string; paused?: boolean; form: (e: Existing) => Promise<FormData> | FormData }[] = [
    { name: "create", core: createUsageSourceCore, role: "admin", form: () => form(settings()) },
    {
      name: "update",
      core: updateUsageSourceCore,
      role: "admin",
      form: (e) => form({ ...settings({ name: e.name, lookbackDays: "5" }), sourceId: e.id, version: e.version }),
    },
    { name: "delete", core: deleteUsageSourceCore, role: "admin", form: (e) => form({ sourceId: e.id, reason: "" }) },
    { name: "pause", core: pauseUsageSourceCore, role: "admin", form: (e) => form({ sourceId: e.id }) },
    { name: "resume", core: resumeUsageSourceCore, role: "admin", paused: true, form: (e) => form({ sourceId: e.id }) },
    {
      name: "add rule",
      core: addUsageRuleCore,
      role: "admin",
      form: async (e) => form({ sourceId: e.id, match: "o3*", target: `endpoint:${e.endpoint}`, part: "" }),
    },
    { name: "remove rule", core: removeUsageRuleCore, role: "admin", form: (e) => form({ sourceId: e.id, ruleId: e.ruleId }) },
    {
      name: "import",
      core: importUsageFileCore,
      role: "admin",
      kind: "file",
      form: (e) => form({ sourceId: e.id, format: "csv", text: "date,item,units,cost\n2026-12-01,gpt-4o,1000,\n" }),
    },
    { name: "pull now", core: requestPullCore, role: "operator", form: (e) => form({ sourceId: e.id }) },
  ];

  for (const c of cases) {
    const refused = c.role === "admin" ? ([null, "viewer", "operator"] as const) : ([null, "viewer"] as const);
    for (const role of refused) {
      it(`${c.name} as ${role ?? "no session"} is refused and changes nothing`, async () => {
        const e = await existing({ kind: c.kind, paused: c.paused });
        const f = await c.form(e);
        const before = await snapshot();
        expect(await c.core(deps(role), f)).toEqual({ status: "error", error: role === null ? "Sign in required" : `Your role (${role}) cannot do this` });
        expect(await snapshot()).toEqual(before);
      });
    }
    for (const role of c.role === "admin" ? (["admin"] as const) : (["operator", "admin"] as const)) {
      it(`${c.name} as ${role} goes through`, async () => {
        const e = await existing({ kind: c.kind, paused: c.paused });
        const state = await c.core(deps(role), await c.form(e));
        expect(state.status, JSON.stringify(state)).toBe("ok");
      });
    }
  }

  it("create trims trailing spaces and redirects to the source's page", async () => {
    const state = await createUsageSourceCore(deps("admin"), form(settings({ name: "Trimmed   ", timeZone: " UTC " })));
    const [row] = await t.db.select().from(usageSources).where(eq(usageSources.name, "Trimmed"));
    expect(row?.timeZone).toBe("UTC");
    expect(state).toMatchObject({ status: "ok", redirectTo: `/reconciliation/sources/${row?.id}` });
  });

  it("shows each bad field next to itself, all at once, and audits the refusal", async () => {
    const before = await snapshot();
    const state = await createUsageSourceCore(deps("admin"), form(settings({ credentialRef: "sk-live-abc", lookbackDays: "1e1", thresholdMoney: "500abc" })));
    expect(state).toMatchObject({ status: "error", code: "invalid_input" });
    const fieldErrors = state.status === "error" ? state.fieldErrors : undefined;
    expect(fieldErrors?.credentialRef).toMatch(/env:CEILINGS_SECRET_/);
    expect(fieldErrors?.lookbackDays).toMatch(/whole number from 1 to 35, got '1e1'/);
    expect(fieldErrors?.thresholdMoney).toMatch(/500abc/);
    const after = await snapshot();
    expect(after.sources).toEqual(before.sources);
    const [audit] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "usage_source.rejected")).orderBy(asc(auditEvents.id));
    expect(audit?.details).toMatchObject({ error: expect.stringMatching(/credential/) });
  });

  it("refuses control characters and NUL at the boundary, naming the field, and audits it", async () => {
    for (const [field, value] of [
      ["name", "a\u0000b"],
      ["location", "https://x\u0007.com"],
      ["account", "proj\u001b"],
    ] as const) {
      const before = await snapshot();
      expect(await createUsageSourceCore(deps("admin"), form(settings({ [field]: value })))).toEqual({
        status: "error",
        error: `${field} must not contain control characters`,
        code: "invalid_input",
      });
      expect((await snapshot()).sources).toEqual(before.sources);
    }
    expect(await t.db.select().from(auditEvents).where(eq(auditEvents.action, "usage_source.create.rejected"))).toHaveLength(3);
  });

  it("refuses a stale version: someone saved first", async () => {
    const e = await existing();
    expect(
      (await updateUsageSourceCore(deps("admin"), form({ ...settings({ name: e.name, lookbackDays: "5" }), sourceId: e.id, version: e.version }))).status,
    ).toBe("ok");
    expect(
      await updateUsageSourceCore(deps("admin"), form({ ...settings({ name: e.name, lookbackDays: "6" }), sourceId: e.id, version: e.version })),
    ).toMatchObject({ status: "error", code: "conflict" });
  });

  it("add rule: a duplicate match, an unknown endpoint, a part not on it and a target mapped elsewhere, each by its field", async () => {
    const e = await existing();
    const other = await existing();
    const add = (fields: Record<string, string>) => addUsageRuleCore(deps("admin"), form({ sourceId: e.id, part: "", ...fields }));
    const errors = async (fields: Record<string, string>) => {
      const state = await add(fields);
      expect(state.status).toBe("error");
      return state.status === "error" ? (state.fieldErrors ?? {}) : {};
    };
    const before = await snapshot();
    expect((await errors({ match: "gpt-4o  ", target: `endpoint:${e.endpoint}` })).match).toMatch(/already has a rule for 'gpt-4o'/);
    expect((await errors({ match: "o3", target: "endpoint:llm.nope" })).endpointKey).toBe("no endpoint 'llm.nope'");
    expect((await errors({ match: "o3", target: `endpoint:${e.endpoint}`, part: "output" })).part).toMatch(/has no part 'output' \(its parts: input\)/);
    expect((await errors({ match: "o3", target: `endpoint:${other.endpoint}` })).endpointKey).toMatch(
      new RegExp(`already mapped by the source '${other.name}'`),
    );
    expect((await errors({ match: "o3", target: "" })).target).toMatch(/an endpoint or a budget/);
    expect(await add({ match: "o3\u0000", target: `endpoint:${e.endpoint}` })).toEqual({
      status: "error",
      error: "match must not contain control characters",
      code: "invalid_input",
    });
    expect((await snapshot()).rules).toEqual(before.rules);
    expect((await t.db.select().from(auditEvents).where(eq(auditEvents.action, "usage_source.rejected"))).length).toBeGreaterThanOrEqual(5);
  });

  it("pull now says when it was requested and that the worker pulls; a paused source is refused", async () => {
    const e = await existing();
    expect(await requestPullCore(deps("operator"), form({ sourceId: e.id }))).toMatchObject({
      status: "ok",
      message: expect.stringMatching(/^Pull requested at .*\(the worker pulls within a few seconds\)\.$/),
    });
    const paused = await existing({ paused: true });
    expect(await requestPullCore(deps("operator"), form({ sourceId: paused.id }))).toMatchObject({
      status: "error",
      error: expect.stringMatching(/is paused/),
    });
  });

  it("delete redirects to the Reconciliation page; an unknown source is not found", async () => {
    const e = await existing();
    expect(await deleteUsageSourceCore(deps("admin"), form({ sourceId: e.id }))).toMatchObject({ status: "ok", redirectTo: "/reconciliation" });
    expect(await deleteUsageSourceCore(deps("admin"), form({ sourceId: e.id }))).toMatchObject({ status: "error", code: "not_found" });
    expect(await deleteUsageSourceCore(deps("admin"), form({ sourceId: "0x1" }))).toMatchObject({ status: "error", code: "invalid_input" });
  });

  describe("import", () => {
    it("refuses a file with bad lines whole, listing every bad line by its number, and writes nothing", async () => {
      const e = await existing({ kind: "file" });
      const text = [
        "date,item,units,cost",
        "2026-12-01,gpt-4o,100,",
        "2026-13-01,gpt-4o,100,",
        "2026-12-02,gpt-4o,1e9,",
        "2026-12-03,gpt-4o,100,",
        "2026-12-04,gpt-4o,-5,",
      ].join("\n");
      const before = await snapshot();
      const state = await importUsageFileCore(deps("admin"), form({ sourceId: e.id, format: "", text }));
      expect(state).toMatchObject({
        status: "error",
        code: "invalid_input",
        error: expect.stringMatching(/^The file was not imported \(3 bad lines; nothing was written\)/),
      });
      const lines = Object.keys(state.status === "error" ? (state.fieldErrors ?? {}) : {}).filter((k) => k.startsWith("line "));
      expect(lines).toHaveLength(3);
      const after = await snapshot();
      expect(after.rows).toBe(before.rows);
      expect(after.sources).toEqual(before.sources);
    });

    it("takes a file longer than a form field may be, with its own characters named by the parser", async () => {
      const e = await existing({ kind: "file" });
      const rows = Array.from({ length: 800 }, (_, i) => `2026-11-${String((i % 28) + 1).padStart(2, "0")},item-${i},${i},`);
      const text = ["date,item,units,cost", ...rows].join("\n");
      expect(text.length).toBeGreaterThan(10_000);
      const state = await importUsageFileCore(deps("admin"), form({ sourceId: e.id, text }));
      expect(state, JSON.stringify(state)).toMatchObject({ status: "ok", message: expect.stringMatching(/^Imported 800 rows over 28 days/) });
    });

    it("refuses a CSV header with a NUL in a column name line by line (the code point named), not a server error", async () => {
      const id = (await createUsageSource(t.db, { input: settings({ kind: "file", credentialRef: "" }), actor })).id;
      const state = await importUsageFileCore(
        deps("admin"),
        form({ sourceId: String(id), format: "csv", text: "date,item,units,co\u0000st\n2026-11-02,x,1,\n" }),
      );
      expect(state).toMatchObject({ status: "error", code: "invalid_input" });
      expect(JSON.stringify(state)).toContain("U+0000");
      expect(JSON.stringify(state)).not.toContain("\\u0000");
    });

    it("imports mapped rows and compares their days with what Ceilings charged", async () => {
      const s = await createUsageSource(t.db, { input: settings({ kind: "file", credentialRef: "" }), actor });
      const e = await endpoint();
      await addUsageRule(t.db, { sourceId: s.id, match: e, endpointKey: e, actor });
      const text = `date,item,units,cost\n2026-11-30,${e},1000,2.50\n2026-12-01,${e},900,\n2026-12-01,unknown.item,5,\n`;
      const state = await importUsageFileCore(deps("admin"), form({ sourceId: String(s.id), text }));
      expect(state).toEqual({ status: "ok", message: "Imported 3 rows over 2 days (1 unmapped); compared 2 target-days with what Ceilings charged." });
    });

    it("a file's days not over yet are stored, not compared, and the result says so", async () => {
      const s = await createUsageSource(t.db, { input: settings({ kind: "file", credentialRef: "" }), actor });
      const e = await endpoint();
      await addUsageRule(t.db, { sourceId: s.id, match: e, endpointKey: e, actor });
      const text = `date,item,units,cost\n2026-11-30,${e},1000,2.50\n2099-01-01,${e},900,\n`;
      const state = await importUsageFileCore(deps("admin"), form({ sourceId: String(s.id), text }));
      expect(state).toEqual({
        status: "ok",
        message:
          "Imported 2 rows over 2 days (0 unmapped); compared 1 target-day with what Ceilings charged; 2099-01-01 is not over yet: stored, and compared once over (import the file again then).",
      });
    });

    it("refuses an empty file, a file sent twice and a file sent as a file", async () => {
      const e = await existing({ kind: "file" });
      expect(await importUsageFileCore(deps("admin"), form({ sourceId: e.id, text: "  \n" }))).toMatchObject({
        status: "error",
        fieldErrors: { text: expect.stringMatching(/empty/) },
      });
      expect(await importUsageFileCore(deps("admin"), form({ sourceId: e.id, text: ["a", "b"] }))).toMatchObject({
        status: "error",
        error: "text was sent more than once",
      });
      const f = form({ sourceId: e.id });
      f.append("text", new Blob(["date,item,units\n"]), "usage.csv");
      expect(await importUsageFileCore(deps("admin"), f)).toMatchObject({ status: "error", error: "text must be the file's text, not a file" });
    });
  });

  it("lists at most a thousand bad lines and counts the rest; merges a line's reasons", () => {
    const lines = Array.from({ length: MAX_LISTED_LINES + 5 }, (_, i) => ({ line: i + 2, reason: "bad date" }));
    const e = badFileError([...lines, { line: 2, reason: "units must be a whole number" }]);
    expect(e.problems[0]).toEqual({ path: "line 2", message: "bad date; units must be a whole number" });
    expect(e.problems).toHaveLength(MAX_LISTED_LINES + 1);
    expect(e.problems.at(-1)).toEqual({ path: "lines", message: "and 5 more bad lines not listed here" });
    expect(badFileError([{ line: 0, reason: "the file has a header but no rows" }])).toMatchObject({
      message: expect.stringMatching(/^The file was not imported \(the file as a whole;/),
      problems: [{ path: "file", message: "the file has a header but no rows" }],
    });
    expect(formatOf("", ' [{"date":"2026-12-01"}]')).toBe("json");
    expect(formatOf("", "date,item,units")).toBe("csv");
  });
});
