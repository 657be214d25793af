import type { ActionState } from "@/app/_lib/define-action";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { describe, expect, it } from "vitest";
import { asc, count } from "drizzle-orm";
import type { Role } from "@/lib/auth/roles";
import { auditEvents, ceilings } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint, first } from "@/lib/ceilings/test-fixtures";
import { killAllCore, killEndpointCore, restoreEndpointCore } from "./control-action-core";
import { adjustCeilingCore, removeOverrideCore, setBoundsCore, setOverrideCore } from "./endpoints/[key]/ceiling-action-core";
import { form } from "@/app/_lib/test-form";
import { limitOverrides } from "@/db/schema";

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;
type Setup = { key: string; dailyId: number; callerId: number; version: number };

// Each action with the least role allowed, and a form that succeeds for that role on a fresh endpoint.
const actions: { name: string; core: Core; min: Role; form: (s: Setup) => FormData; prepare?: "kill" | "override" }[] = [
  // A lowering: a raise is a change request (lib/changes), refused here below.
  { name: "adjust", core: adjustCeilingCore, min: "admin", form: (s) => form({ ceilingId: s.dailyId, expectedVersion: s.version, input: "80", reason: "r" }) },
  {
    name: "bounds",
    core: setBoundsCore,
    min: "admin",
    form: (s) => form({ ceilingId: s.dailyId, expectedVersion: s.version, min: "0", max: "90", reason: "r" }),
  },
  { name: "set override", core: setOverrideCore, min: "admin", form: (s) => form({ ceilingId: s.callerId, caller: "acct_1", input: "0", reason: "r" }) },
  {
    name: "remove override",
    core: removeOverrideCore,
    min: "admin",
    prepare: "override",
    form: (s) => form({ ceilingId: s.callerId, caller: "acct_0", reason: "r" }),
  },
  { name: "kill", core: killEndpointCore, min: "operator", form: (s) => form({ endpointKey: s.key, reason: "r" }) },
  { name: "restore", core: restoreEndpointCore, min: "operator", prepare: "kill", form: (s) => form({ endpointKey: s.key }) },
  { name: "kill all", core: killAllCore, min: "operator", form: () => form({ reason: "r" }) },
];

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

describe.skipIf(skipWithoutDatabase())("ceiling server actions check the role themselves", () => {
  const t = useTestDatabase("ceilings_actions");

  async function snapshot() {
    const rows = await t.db.select().from(ceilings).orderBy(asc(ceilings.id));
    const overrides = await t.db.select().from(limitOverrides).orderBy(asc(limitOverrides.limitId), asc(limitOverrides.caller));
    const [audit] = await t.db.select({ n: count() }).from(auditEvents);
    return { rows, overrides, audit: audit?.n };
  }

  async function setup(prepare?: "kill" | "override"): Promise<Setup> {
    const { key, ceilings: rows } = await createEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100, defaultValue: 100, minValue: 0, maxValue: 150 },
        { metric: "units", scope: "caller", window: "utc_day", value: 5, defaultValue: 5, minValue: 0, maxValue: 20 },
      ],
    });
    const daily = first(rows);
    const caller = rows[1] ?? daily;
    const admin: ActionDeps = { session: async () => ({ id: 1, email: "admin@t", role: "admin" }), db: async () => t.db, revalidate: () => {} };
    if (prepare === "kill") expect(await killEndpointCore(admin, form({ endpointKey: key, reason: "prep" }))).toMatchObject({ status: "ok" });
    if (prepare === "override") {
      expect(await setOverrideCore(admin, form({ ceilingId: caller.id, caller: "acct_0", input: "5", reason: "prep" }))).toMatchObject({ status: "ok" });
    }
    return { key, dailyId: daily.id, callerId: caller.id, version: daily.version };
  }

  for (const a of actions) {
    for (const who of [null, "viewer", "operator", "admin"] as const) {
      const allowed = who !== null && rank[who] >= rank[a.min];
      it(`${a.name} as ${who ?? "no session"} is ${allowed ? "allowed" : "refused, changing nothing"}`, async () => {
        const s = await setup(a.prepare);
        const revalidated: string[] = [];
        const deps: ActionDeps = {
          session: async () => (who === null ? null : { id: 7, email: `${who}@t`, role: who }),
          db: async () => t.db,
          revalidate: (path) => revalidated.push(path),
        };
        const before = await snapshot();
        const result = await a.core(deps, a.form(s));
        if (allowed) {
          expect(result).toMatchObject({ status: "ok" });
          expect(revalidated.length).toBeGreaterThan(0);
          expect(await snapshot()).not.toEqual(before);
        } else {
          expect(result).toEqual({ status: "error", error: who === null ? "Sign in required" : `Your role (${who}) cannot do this` });
          expect(await snapshot()).toEqual(before);
          expect(revalidated).toEqual([]);
        }
      });
    }
  }

  it("returns the conflict with the current value to the form", async () => {
    const s = await setup();
    const admin: ActionDeps = { session: async () => ({ id: 1, email: "a@t", role: "admin" }), db: async () => t.db, revalidate: () => {} };
    await adjustCeilingCore(admin, form({ ceilingId: s.dailyId, expectedVersion: s.version, input: "90", reason: "first" }));
    const second = await adjustCeilingCore(admin, form({ ceilingId: s.dailyId, expectedVersion: s.version, input: "80", reason: "second" }));
    expect(second).toMatchObject({ status: "error", code: "conflict", current: { value: 90, version: s.version + 1 } });
  });

  it("refuses a raise through the direct edit, even from an admin: approval_required, nothing changes", async () => {
    const s = await setup();
    const admin: ActionDeps = { session: async () => ({ id: 1, email: "a@t", role: "admin" }), db: async () => t.db, revalidate: () => {} };
    const before = await snapshot();
    const raised = await adjustCeilingCore(admin, form({ ceilingId: s.dailyId, expectedVersion: s.version, input: "120", reason: "launch" }));
    expect(raised).toMatchObject({ status: "error", code: "approval_required" });
    const bounds = await setBoundsCore(admin, form({ ceilingId: s.dailyId, expectedVersion: s.version, min: "0", max: "500", reason: "room" }));
    expect(bounds).toMatchObject({ status: "error", code: "approval_required" });
    expect(await snapshot()).toEqual(before);
  });

  it("returns a typo as a clear error", async () => {
    const s = await setup();
    const admin: ActionDeps = { session: async () => ({ id: 1, email: "a@t", role: "admin" }), db: async () => t.db, revalidate: () => {} };
    const result = await adjustCeilingCore(admin, form({ ceilingId: s.dailyId, expectedVersion: s.version, input: "1e9", reason: "oops" }));
    expect(result).toEqual({ status: "error", error: "limit must be a whole number, got '1e9'", code: "invalid_input" });
  });

  it("kills with an empty reason from the form, and refuses an adjust without one", async () => {
    const s = await setup();
    const operatorDeps: ActionDeps = { session: async () => ({ id: 2, email: "o@t", role: "operator" }), db: async () => t.db, revalidate: () => {} };
    expect(await killEndpointCore(operatorDeps, form({ endpointKey: s.key, reason: "" }))).toMatchObject({ status: "ok" });
    const admin: ActionDeps = { session: async () => ({ id: 1, email: "a@t", role: "admin" }), db: async () => t.db, revalidate: () => {} };
    const adjust = await adjustCeilingCore(admin, form({ ceilingId: s.callerId, expectedVersion: 0, input: "6", reason: "" }));
    expect(adjust).toMatchObject({ status: "error", code: "invalid_input", error: expect.stringContaining("a reason is required") });
  });
});
