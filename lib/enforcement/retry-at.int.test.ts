import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { AuditActor } from "@/lib/audit/record";
import { killBudget, restoreBudget } from "@/lib/budgets/kill";
import { killEndpoint } from "@/lib/ceilings";
import { makeBudget, priceEndpoint } from "./budget-fixtures";
import { reserve } from "./reserve";
import { makeEndpoint } from "./test-fixtures";
import type { Decision } from "./types";

// A refusal names a time to come back (retryAt, the refusing window's end) only when the call would
// pass then: a window used up keeps it; a kill (a ceiling or a budget at 0) and a call costing more
// than the whole limit have none, since the next window refuses them again.

const actor: AuditActor = { type: "staff", email: "ops@example.com" };

function refused(d: Decision) {
  if (d.status !== "refused") throw new Error(`expected a refusal, got ${JSON.stringify(d)}`);
  return d;
}

function nextUtcMidnight(): string {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
}

describe.skipIf(skipWithoutDatabase())("retryAt on a refusal", () => {
  const t = useTestDatabase("retry_at", { max: 4 });

  async function pricedMember(value: number) {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    // One micro a unit (a price in picos).
    await priceEndpoint(t.db, e.endpointId, { units: 1_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value });
    return { e, budget };
  }

  it("a budget used up in its window refuses until the window ends; killed, it names no time", async () => {
    const { e, budget } = await pricedMember(100);
    expect((await reserve(t.db, { endpoint: e.key, amount: 100 })).status).toBe("granted");
    const full = refused(await reserve(t.db, { endpoint: e.key, amount: 1 }));
    expect(full.gate).toBe("budget");
    expect(new Date(full.retryAt ?? "").toISOString()).toBe(nextUtcMidnight());

    await killBudget(t.db, { key: budget.key, actor });
    const killed = refused(await reserve(t.db, { endpoint: e.key, amount: 1 }));
    expect(killed.gate).toBe("budget");
    expect(killed.message).toContain("switched off");
    expect(killed).not.toHaveProperty("retryAt");

    await restoreBudget(t.db, { key: budget.key, actor });
    expect(refused(await reserve(t.db, { endpoint: e.key, amount: 1 })).retryAt).toBeDefined();
  });

  it("a call costing more than the whole budget names no time: the next window refuses it too", async () => {
    const { e } = await pricedMember(100);
    const tooBig = refused(await reserve(t.db, { endpoint: e.key, amount: 101 }));
    expect(tooBig.gate).toBe("budget");
    expect(tooBig).not.toHaveProperty("retryAt");
  });

  it("a ceiling used up keeps its retryAt; a killed endpoint has none", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    expect((await reserve(t.db, { endpoint: e.key, amount: 10 })).status).toBe("granted");
    const full = refused(await reserve(t.db, { endpoint: e.key, amount: 1 }));
    expect(full.gate).toBe("ceiling");
    expect(new Date(full.retryAt ?? "").toISOString()).toBe(nextUtcMidnight());
    await killEndpoint(t.db, { endpointKey: e.key, actor });
    const killed = refused(await reserve(t.db, { endpoint: e.key, amount: 1 }));
    expect(killed.gate).toBe("kill_switch");
    expect(killed).not.toHaveProperty("retryAt");
  });
});
