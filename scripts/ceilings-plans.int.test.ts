import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { readPlan, setDefaultPlan } from "@/lib/plans";
import { budgetOn, perCallerEndpoint, planAudit, planKey } from "@/lib/plans/test-fixtures";
import { setupControl } from "@/lib/changes";
import { parsePlansArgs, runPlans } from "./ceilings-plans";

// The plans CLI end to end on a real database: each verb through lib/plans, logged as the CLI user.

const cli = { type: "cli", name: "ops" } as const;

describe.skipIf(skipWithoutDatabase())("npm run ceilings -- plans", () => {
  const t = useTestDatabase("plans_cli");

  async function run(...argv: string[]): Promise<string[]> {
    const lines: string[] = [];
    await runPlans(t.db, parsePlansArgs(argv, {}), cli, (l) => lines.push(l));
    return lines;
  }

  it("creates a plan, sets and unsets values by name, switches the default and deletes", async () => {
    const e = await perCallerEndpoint(t.db);
    const b = await budgetOn(t.db);
    const key = planKey("pro");
    expect(await run("create", key, "--name", "Pro", "--reason", "tiers")).toEqual([
      `created plan ${key}: it sets no values yet (npm run ceilings -- plans set ${key} ...)`,
    ]);
    // Below the own values: one person's. Above what binds: a raise, refused without a personal token (asked with one: lib/changes/plan-paths.int.test.ts).
    expect(await run("set", key, "--ceiling", `${e.key}/units/utc_day`, "4", "--reason", "r")).toEqual([
      `${key} on ${e.key} units/caller/utc_day: none (its own 10) → 4`,
    ]);
    expect(await run("set", key, "--budget", b.key, "1.50", "--reason", "r")).toEqual([`${key} on budget ${b.key}: none (its own $2.00) → $1.50`]);
    await expect(run("set", key, "--ceiling", `${e.key}/units/utc_day`, "500", "--reason", "r")).rejects.toMatchObject({ code: "confirmation_required" });
    await expect(run("set", key, "--ceiling", `${e.key}/units/utc_day`, "500", "--confirm", "500", "--reason", "r")).rejects.toMatchObject({
      code: "approval_required",
      message: expect.stringContaining("CEILINGS_STAFF_TOKEN=cst_"),
    });
    await expect(run("set", key, "--ceiling", `${e.key}/units/utc_day`, "1e9", "--reason", "r")).rejects.toMatchObject({ code: "invalid_input" });
    await expect(run("set", key, "--ceiling", `${e.key}/units/billing_month`, "5", "--reason", "r")).rejects.toMatchObject({ code: "not_found" });
    await expect(run("set", key, "--ceiling", `${e.key}/units/utc_day`.replace("units", "calls"), "5", "--reason", "r")).rejects.toMatchObject({
      code: "not_found",
    });
    const show = await run("show", key);
    expect(show[0]).toContain(`${key}  Pro`);
    expect(show).toContain(`  #${e.caller.id} ${e.key}/units/utc_day  plan 4  (ceiling 10, bounds 1..1,000)`);
    // Removing a value below the own one raises the plan's accounts: refused alone.
    await expect(run("unset", key, "--budget", b.key, "--reason", "r")).rejects.toMatchObject({ code: "approval_required" });
    expect((await run("list")).find((l) => l.startsWith(`${key} `))).toBe(`${key}  Pro  0 account(s)`);
    expect(await run("default", key, "--reason", "r")).toEqual([
      `${key} is the default plan (was default): every account not assigned a plan is on it from the next reservation`,
    ]);
    await expect(run("delete", key, "--reason", "r")).rejects.toMatchObject({ code: "in_use" });
    // Back to the seeded default (looser than this plan): a raise, refused alone; put back as setup.
    await expect(run("default", "default", "--reason", "back")).rejects.toMatchObject({ code: "approval_required" });
    await setDefaultPlan(t.db, { planKey: "default", actor: cli, reason: "back", changeControl: setupControl("test") });
    expect(await run("update", key, "--name", "Pro 2", "--reason", "r")).toEqual([`saved ${key}: name changed`]);
    expect(await run("delete", key, "--reason", "retired")).toEqual([`deleted plan ${key}`]);
    const events = await planAudit(t.db, key);
    expect(events.every((x) => x.actorType === "cli" && x.actor === "ops")).toBe(true);
    expect(events.map((x) => x.action)).toEqual([
      "plan.create",
      "plan.value.set",
      "plan.value.set",
      "plan.rejected",
      "plan.default",
      "plan.update",
      "plan.delete",
    ]);
    await expect(readPlan(t.db, key)).rejects.toMatchObject({ code: "not_found" });
  });
});
