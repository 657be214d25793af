import { count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { auditEvents, reservations } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { whatIfCore, type WhatIfData } from "./what-if-action-core";

// The what-if panel's action: operator and up (it is part of the edit forms), reads only, and
// input refused at the boundary is audited as whatif.rejected.

describe.skipIf(skipWithoutDatabase())("whatif.read", () => {
  const t = useTestDatabase("what_if_action");
  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role === null ? null : { id: 7, email: `${role}@t`, role }),
    db: async () => t.db,
    revalidate: () => {},
  });

  async function endpointWithHistory() {
    const ep = await createEndpoint(t.db);
    const now = Date.now();
    // Ten grants of 30 units today: at a value of 100, the fourth and later are refused.
    await t.ownerDb.insert(reservations).values(
      Array.from({ length: 10 }, (_, i) => ({
        endpointId: ep.endpointId,
        caller: i % 2 ? "acct-odd" : "acct-even",
        amount: 30,
        money: 30,
        state: "settled" as const,
        settledAmount: 30,
        settledMoney: 30,
        charges: [],
        createdAt: new Date(now - (10 - i) * 1000),
        expiresAt: new Date(now + 300_000),
      })),
    );
    return ep;
  }

  it("answers an operator with the 7 and 30 day replays", async () => {
    const ep = await endpointWithHistory();
    const c = ep.ceilings.find((x) => x.window === "utc_day");
    const result = await whatIfCore(deps("operator"), form({ target: "ceiling", ceilingId: c?.id ?? 0, value: "100" }));
    expect(result).toMatchObject({ status: "ok" });
    const data = (result as { data: WhatIfData }).data;
    expect(data.d7.refused).toBe(7);
    expect(data.d30.refused).toBe(7);
    expect(data.d30.topAccounts.map((a) => a.account).sort()).toEqual(["acct-even", "acct-odd"]);
  });

  it("answers a new ceiling on a fresh endpoint with no refusals", async () => {
    const ep = await createEndpoint(t.db);
    const result = await whatIfCore(
      deps("admin"),
      form({ target: "new-ceiling", endpointKey: ep.key, metric: "calls", scope: "caller", window: "utc_day", value: "1" }),
    );
    const data = (result as { data: WhatIfData }).data;
    expect(data.d30).toMatchObject({ refused: 0, refusedMoney: 0, topAccounts: [] });
  });

  it("refuses a viewer and no session, reading nothing", async () => {
    const ep = await endpointWithHistory();
    for (const role of ["viewer", null] as const) {
      const result = await whatIfCore(deps(role), form({ target: "ceiling", ceilingId: ep.ceilings[0]?.id ?? 0, value: "100" }));
      expect(result).toMatchObject({ status: "error" });
      expect(result).not.toHaveProperty("data");
    }
  });

  it("bad input is a clear error, audited: the form's rules as whatif.rejected, a control character as whatif.read.rejected", async () => {
    const ep = await endpointWithHistory();
    const id = ep.ceilings[0]?.id ?? 0;
    const audited = async (action: string) => (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.action, action)))[0]?.n ?? 0;
    expect(await whatIfCore(deps("operator"), form({ target: "ceiling", ceilingId: id, value: "-5" }))).toMatchObject({
      status: "error",
      error: expect.stringMatching(/whole number/),
    });
    expect(await audited("whatif.rejected")).toBe(1);
    expect(await whatIfCore(deps("operator"), form({ target: "ceiling", ceilingId: 99_999_999, value: "5" }))).toMatchObject({
      status: "error",
      error: expect.stringMatching(/no ceiling/),
    });
    expect(await whatIfCore(deps("operator"), form({ target: "ceiling\u0007", ceilingId: id, value: "5" }))).toMatchObject({ status: "error" });
    expect(await audited("whatif.read.rejected")).toBe(1);
  });
});
