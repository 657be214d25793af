import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { limitOverrides } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { applyCatalog, exportCatalog, planCatalog } from "@/lib/catalog";
import { setupControl } from "@/lib/control/context";

// An override that ends, in the catalog file, for both kinds of limit: export writes its end
// (until), a file that keeps it changes nothing, one that moves it sets that very instant, and one
// whose until is past names no override (it binds nothing): the override in force is removed.

const config = { type: "config", name: "ci" } as const;
const DOLLAR = 1_000_000;
const HOUR = 3_600_000;

type Json = Record<string, unknown>;
type File = { endpoints: Json[]; budgets: Json[]; [k: string]: unknown };

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("an override that ends, in the catalog file", () => {
  const t = useTestDatabase("catalog_override_ends");

  const file = async (db: Db): Promise<File> => (await exportCatalog(db)) as unknown as File;
  const apply = (db: Db, f: File) =>
    applyCatalog(db, { text: JSON.stringify(f), actor: config, reason: "from file", confirmRaise: true, changeControl: setupControl("test") });
  const changes = async (db: Db, f: File) => {
    const plan = await planCatalog(db, JSON.stringify(f));
    if (!plan.ok) throw new Error(plan.errors.join("\n"));
    return plan.endpoints.flatMap((e) => e.changes.map((c) => `${c.action} ${c.lines.join(" ")}`));
  };
  const ends = async () =>
    (await t.db.select({ caller: limitOverrides.caller, expiresAt: limitOverrides.expiresAt }).from(limitOverrides)).map((o) => [
      o.caller,
      o.expiresAt?.toISOString() ?? null,
    ]);

  it("exports the end, keeps it, moves it to the instant the file names, and drops an ended one, on a ceiling and a budget", async () => {
    const soon = new Date(Math.floor((Date.now() + 2 * HOUR) / 1000) * 1000).toISOString();
    const f = await file(t.db);
    f.endpoints.push({
      key: "mail.ends",
      name: "Mail",
      unit: "emails",
      perCallMax: 1,
      parts: [{ name: "units", price: "0.000001" }],
      ceilings: [
        { metric: "calls", scope: "global", window: "utc_day", value: 1000, min: 0, max: 1000, default: 1000 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 5, min: 0, max: 100, default: 5 },
      ],
      overrides: [{ metric: "calls", window: "utc_day", caller: "acct-ceiling", value: 8, reason: "trial", until: soon }],
    });
    f.budgets.push({
      key: "mail.each",
      name: "Mail each",
      scope: "account",
      window: "utc_day",
      value: 5 * DOLLAR,
      min: 0,
      max: 100 * DOLLAR,
      default: 5 * DOLLAR,
      members: ["mail.ends"],
      overrides: [{ caller: "acct-budget", value: 8 * DOLLAR, reason: "trial", until: soon }],
    });
    await apply(t.db, f);
    expect(await ends()).toEqual(
      expect.arrayContaining([
        ["acct-ceiling", soon],
        ["acct-budget", soon],
      ]),
    );

    // Exported with its end; the same file again changes nothing.
    const exported = await file(t.db);
    const endpoint = exported.endpoints.find((e) => e.key === "mail.ends") as { overrides: Json[] };
    const budget = exported.budgets.find((b) => b.key === "mail.each") as { overrides: Json[] };
    expect(endpoint.overrides).toEqual([{ metric: "calls", window: "utc_day", caller: "acct-ceiling", value: 8, reason: "trial", until: soon }]);
    expect(budget.overrides).toEqual([{ caller: "acct-budget", value: 8 * DOLLAR, reason: "trial", until: soon }]);
    expect(await changes(t.db, exported)).toEqual([]);

    // Moved an hour on: that is a change, and the end is the file's instant to the millisecond.
    const later = new Date(Date.parse(soon) + HOUR).toISOString();
    endpoint.overrides = [{ ...endpoint.overrides[0], until: later }];
    budget.overrides = [{ ...budget.overrides[0], until: later }];
    expect((await changes(t.db, exported)).map((c) => c.split(" ")[0])).toEqual(["override.set", "budget.override.set"]);
    await apply(t.db, exported);
    expect(await ends()).toEqual(
      expect.arrayContaining([
        ["acct-ceiling", later],
        ["acct-budget", later],
      ]),
    );

    // A file whose until is past names an override that has ended: none binds, so the one in
    // force goes, and a past one for an account without one adds nothing.
    const past = new Date(Date.now() - HOUR).toISOString();
    endpoint.overrides = [
      { ...endpoint.overrides[0], until: past },
      { metric: "calls", window: "utc_day", caller: "acct-other", value: 2, reason: "old", until: past },
    ];
    budget.overrides = [{ ...budget.overrides[0], until: past }];
    expect((await changes(t.db, exported)).map((c) => c.split(" ")[0])).toEqual(["override.remove", "budget.override.remove"]);
    await apply(t.db, exported);
    expect(await ends()).toEqual([]);
    expect(await t.db.select().from(limitOverrides).where(eq(limitOverrides.caller, "acct-other"))).toEqual([]);
  });

  it("refuses an until that is not an instant with its offset, and saves nothing", async () => {
    const f = await file(t.db);
    const endpoint = f.endpoints.find((e) => e.key === "mail.ends") as { overrides: Json[] };
    endpoint.overrides = [{ metric: "calls", window: "utc_day", caller: "acct-x", value: 2, reason: "r", until: "tomorrow" }];
    const plan = await planCatalog(t.db, JSON.stringify(f));
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.errors.join("\n")).toContain("until must be an instant with its offset");
    // Further than 31 days: the writer refuses it whole.
    endpoint.overrides = [
      { metric: "calls", window: "utc_day", caller: "acct-x", value: 2, reason: "r", until: new Date(Date.now() + 40 * 24 * HOUR).toISOString() },
    ];
    await expect(apply(t.db, f)).rejects.toMatchObject({ code: "invalid_input" });
    expect(await ends()).toEqual([]);
  });
});
