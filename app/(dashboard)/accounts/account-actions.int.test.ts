import { asc, count, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { form } from "@/app/_lib/test-form";
import { accounts, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { readAccount } from "@/lib/accounts/read";
import { assignPlanCore, blockAccountCore, unblockAccountCore } from "./account-action-core";

// An account's server actions are public POST endpoints: each checks the role itself. Operators
// (and admins) block; only admins unblock (it lets spend resume on every endpoint) and change an
// account's plan. A refused call changes nothing.

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;
let n = 0;

describe.skipIf(skipWithoutDatabase())("account server actions", () => {
  const t = useTestDatabase("account_actions");

  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });

  async function snapshot() {
    return {
      accounts: await t.db.select().from(accounts).orderBy(asc(accounts.account)),
      audit: (await t.db.select({ n: count() }).from(auditEvents))[0]?.n,
    };
  }

  async function proPlan(): Promise<string> {
    const [row] = await t.db.insert(plans).values({ key: "pro", name: "Pro" }).onConflictDoNothing().returning({ key: plans.key });
    return row?.key ?? "pro";
  }

  /** An account to act on, blocked or not. */
  async function existing(opts: { blocked?: boolean } = {}) {
    n += 1;
    const account = `acct_${n}`;
    await t.db.insert(accounts).values({ account, ...(opts.blocked ? { blockedAt: new Date(), blockedBy: "ops@example.com", blockReason: "fraud" } : {}) });
    return account;
  }

  const cases: { name: string; core: Core; role: Role; blocked?: boolean; form: (account: string) => Promise<FormData> }[] = [
    { name: "block", core: blockAccountCore, role: "operator", form: async (account) => form({ account, reason: "card fraud" }) },
    { name: "unblock", core: unblockAccountCore, role: "admin", blocked: true, form: async (account) => form({ account, reason: "cleared by billing" }) },
    {
      name: "change plan",
      core: assignPlanCore,
      role: "admin",
      form: async (account) => form({ account, plan: await proPlan(), reason: "upgraded by phone" }),
    },
  ];

  for (const c of cases) {
    const refused = c.role === "admin" ? ([null, "viewer", "operator"] as const) : ([null, "viewer"] as const);
    for (const role of refused) {
      it(`${c.name} as ${role ?? "no session"} is refused and changes nothing`, async () => {
        const account = await existing({ blocked: c.blocked });
        const f = await c.form(account);
        const before = await snapshot();
        const state = await c.core(deps(role), f);
        expect(state).toEqual({ status: "error", error: role === null ? "Sign in required" : `Your role (${role}) cannot do this` });
        expect(await snapshot()).toEqual(before);
      });
    }
    for (const role of c.role === "admin" ? (["admin"] as const) : (["operator", "admin"] as const)) {
      it(`${c.name} as ${role} ${c.core === unblockAccountCore ? "is asked for, not applied alone" : "goes through"}`, async () => {
        const account = await existing({ blocked: c.blocked });
        const state = await c.core(deps(role), await c.form(account));
        // An unblock is a raise: one admin alone is answered approval_required (asked and approved: lib/changes/plan-paths.int.test.ts).
        if (c.core === unblockAccountCore) {
          expect(state).toMatchObject({ status: "error", code: "approval_required" });
          return;
        }
        expect(state.status, JSON.stringify(state)).toBe("ok");
      });
    }
  }

  it("block then unblock: the page reads the block, the audit names who and why; an unblock alone is refused, as a raise", async () => {
    const account = await existing();
    expect(await blockAccountCore(deps("operator"), form({ account, reason: "chargebacks" }))).toMatchObject({ status: "ok" });
    const blocked = await readAccount(t.db, account, new Date());
    expect(blocked.blocked).toMatchObject({ by: "operator@example.com", reason: "chargebacks" });
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.target, account)).orderBy(desc(auditEvents.id)).limit(1);
    expect(event).toMatchObject({ action: "account.block", actor: "operator@example.com", reason: "chargebacks" });
    expect(await unblockAccountCore(deps("admin"), form({ account, reason: "paid" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect((await readAccount(t.db, account, new Date())).blocked).not.toBeNull();
  });

  it("blocks an account Ceilings has not seen yet, before its first call", async () => {
    const state = await blockAccountCore(deps("operator"), form({ account: "acct_future", reason: "known fraudster" }));
    expect(state).toMatchObject({ status: "ok" });
    expect((await readAccount(t.db, "acct_future", new Date())).blocked).not.toBeNull();
  });

  it("change plan moves the account and says so; the same plan again changes nothing", async () => {
    const account = await existing();
    const plan = await proPlan();
    const moved = await assignPlanCore(deps("admin"), form({ account, plan }));
    expect(moved).toMatchObject({ status: "ok", message: expect.stringContaining(`from plan default to ${plan}`) });
    expect((await readAccount(t.db, account, new Date())).plan).toMatchObject({ key: plan, onDefault: false, setBy: "admin@example.com" });
    expect(await assignPlanCore(deps("admin"), form({ account, plan }))).toMatchObject({ status: "ok", message: expect.stringContaining("nothing changed") });
  });

  const bad: [string, Core, Record<string, string>, string][] = [
    ["block without a reason", blockAccountCore, { account: "acct_x", reason: "" }, "reason"],
    ["unblock of an account that is not blocked", unblockAccountCore, { account: "acct_never_blocked", reason: "r" }, "not blocked"],
    ["block of an id with a control character", blockAccountCore, { account: "acct\u0007x", reason: "r" }, "control characters"],
    ["block of a 300-character id", blockAccountCore, { account: "a".repeat(300), reason: "r" }, "200 characters"],
    ["change to an unknown plan", assignPlanCore, { account: "acct_y", plan: "platinum" }, "unknown plan"],
    ["change with no plan chosen", assignPlanCore, { account: "acct_y", plan: "" }, "choose a plan"],
  ];
  it.each(bad)("%s is a clear error and changes no account", async (_what, core, fields, message) => {
    const role: Role = "admin";
    const before = (await snapshot()).accounts;
    const state = await core(deps(role), form(fields));
    expect(state.status).toBe("error");
    if (state.status === "error") expect(state.error).toContain(message);
    expect((await snapshot()).accounts).toEqual(before);
  });
});
