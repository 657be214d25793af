import { and, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { removeBudgetOverride, setBudgetOverride } from "@/lib/budgets/overrides";
import { removeOverride, setOverride } from "@/lib/ceilings/overrides";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { setupControl } from "@/lib/control/context";
import { MAX_END_SECONDS } from "@/lib/control/ends";
import { expireOverrides, listOverrides } from "@/lib/limits/overrides";
import { getAccount } from "@/lib/accounts/show";
import { readEndpointStatus } from "@/lib/http/endpoint-status";
import type { LimitKind } from "@/lib/vocabulary";
import { makeBudget, priceEndpoint } from "./budget-fixtures";
import { reserve } from "./reserve";
import { openPools } from "./test-fixtures";

// An override that ends by itself, written once for both kinds of limit (lib/limits/overrides.ts):
// each property below runs on a per-caller ceiling (calls) and on a per-account budget ($1 a call),
// both with an own value of 5 calls' worth.

const DOLLAR = 1_000_000;
const admin = { type: "staff", email: "admin@example.com" } as const;

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("an override that ends", () => {
  const t = useTestDatabase("override_ends", { max: 8 });

  /** A fresh limit of `kind` with its own value of 5 calls, alone in binding `caller`. */
  async function limitOf(kind: LimitKind) {
    if (kind === "ceiling") {
      const e = await createEndpoint(t.db, {
        ceilings: [{ metric: "calls", scope: "caller", window: "utc_day", value: 5, defaultValue: 5, minValue: 0, maxValue: 100 }],
      });
      const ceiling = e.ceilings.find((c) => c.scope === "caller");
      if (!ceiling) throw new Error("no per-caller ceiling");
      return {
        endpoint: e.key,
        id: ceiling.id,
        set: (caller: string, input: string, ends: number | null, control = true) =>
          setOverride(t.db, {
            ceilingId: ceiling.id,
            caller,
            input,
            actor: admin,
            reason: "trial",
            expiresAfterSeconds: ends,
            ...(control ? { changeControl: setupControl("test") } : {}),
          }),
        remove: (caller: string) => removeOverride(t.db, { ceilingId: ceiling.id, caller, actor: admin, reason: "done" }),
      };
    }
    const e = await createEndpoint(t.db, {
      ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 1_000_000, defaultValue: 1_000_000, minValue: 0, maxValue: 1_000_000 }],
    });
    await priceEndpoint(t.db, e.endpointId, { units: DOLLAR * 1_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 5 * DOLLAR, scope: "account" });
    return {
      endpoint: e.key,
      id: budget.id,
      set: (caller: string, input: string, ends: number | null, control = true) =>
        setBudgetOverride(t.db, {
          key: budget.key,
          caller,
          input: String(Number(input)),
          actor: admin,
          reason: "trial",
          expiresAfterSeconds: ends,
          ...(control ? { changeControl: setupControl("test") } : {}),
        }),
      remove: (caller: string) => removeBudgetOverride(t.db, { key: budget.key, caller, actor: admin, reason: "done" }),
    };
  }

  /** `n` calls of 1 unit at once from three pools; how many were granted. */
  async function grantedOf(endpoint: string, caller: string, n: number): Promise<number> {
    const pools = openPools(t.url, 3, 4);
    try {
      const answers = await Promise.all(Array.from({ length: n }, (_, i) => reserve(pools.dbs[i % 3] ?? t.db, { endpoint, caller, amount: 1 })));
      return answers.filter((a) => a.status === "granted").length;
    } finally {
      await pools.close();
    }
  }

  for (const kind of ["ceiling", "budget"] as const) {
    it(`${kind}: binds to the call until its end, then the own value binds, and the worker removes it with an audit row`, async () => {
      const limit = await limitOf(kind);
      const caller = `acct-${kind}-ends`;
      // 3 for 3 seconds (ending below the own 5: approved, as setup).
      const set = await limit.set(caller, "3", 3);
      expect(set.expiresAt).not.toBeNull();
      expect((await listOverrides(t.db, kind, [limit.id])).map((o) => [o.caller, o.value, o.expiresAt !== null])).toEqual([
        [caller, kind === "ceiling" ? 3 : 3 * DOLLAR, true],
      ]);
      // The status API and the account say what binds and until when.
      const said = async () => {
        const status = await readEndpointStatus(t.db, { endpointKey: limit.endpoint, account: caller });
        const view = await getAccount(t.db, caller);
        const [onEndpoint] = kind === "ceiling" ? (status?.ceilings.filter((c) => c.scope === "caller") ?? []) : (status?.budgets ?? []);
        const [onAccount] = kind === "ceiling" ? view.ceilings.filter((c) => c.endpoint === limit.endpoint) : view.budgets;
        return [onEndpoint?.source, onEndpoint?.overrideEndsAt, onAccount?.source, onAccount?.overrideEndsAt?.toISOString() ?? null];
      };
      const end = set.expiresAt?.toISOString();
      expect(await said()).toEqual(["override", end, "override", end]);
      // 30 at once from three processes: exactly the override's 3.
      expect(await grantedOf(limit.endpoint, caller, 30)).toBe(3);

      // Past its end no reservation sees it, before the worker has removed it: the own 5 binds,
      // 3 are used, so exactly 2 more.
      await new Promise((r) => setTimeout(r, Math.max(0, (set.expiresAt?.getTime() ?? 0) - Date.now()) + 300));
      expect(await listOverrides(t.db, kind, [limit.id])).toEqual([]);
      expect(await said()).toEqual([kind, null, kind, null]);
      expect(await grantedOf(limit.endpoint, caller, 10)).toBe(2);
      // A new account on the same limit gets the own value, 5.
      expect(await grantedOf(limit.endpoint, `${caller}-other`, 10)).toBe(5);
      // Nobody removes what binds nothing: not found (not a loosening below the own value to
      // approve), and the row is left to the worker and its audit row.
      await expect(limit.remove(caller)).rejects.toMatchObject({ code: "not_found" });

      expect((await expireOverrides(t.db)).overridesEnded).toBeGreaterThanOrEqual(1);
      expect((await expireOverrides(t.db)).overridesEnded).toBe(0);
      const action = kind === "ceiling" ? "override.expire" : "budget.override.expire";
      const logged = await t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, action), inArray(auditEvents.actor, ["override end"])));
      const mine = logged.filter((e) => (kind === "ceiling" ? e.target === caller : (e.details as { caller?: string }).caller === caller));
      expect(mine.map((e) => e.previousValue)).toEqual([kind === "ceiling" ? 3 : 3 * DOLLAR]);
    });

    it(`${kind}: an override that ends below what the account then gets is a raise; the same lasting one is a lowering`, async () => {
      const limit = await limitOf(kind);
      const caller = `acct-${kind}-low`;
      await expect(limit.set(caller, "2", 3600, false)).rejects.toMatchObject({ code: "approval_required" });
      expect(await listOverrides(t.db, kind, [limit.id])).toEqual([]);
      const lasting = await limit.set(caller, "2", null, false);
      expect(lasting.expiresAt).toBeNull();
      // Giving the lasting one an end is a change, and a raise at its end.
      await expect(limit.set(caller, "2", 3600, false)).rejects.toMatchObject({ code: "approval_required" });
      await expect(limit.set(caller, "2", null, false)).rejects.toMatchObject({ code: "unchanged" });
    });

    it(`${kind}: an end of 0, a fraction or over ${MAX_END_SECONDS / 86_400} days is refused and nothing is saved`, async () => {
      const limit = await limitOf(kind);
      const caller = `acct-${kind}-range`;
      for (const ends of [0, -1, 1.5, MAX_END_SECONDS + 1]) {
        await expect(limit.set(caller, "8", ends)).rejects.toMatchObject({ code: "invalid_input" });
      }
      expect(await listOverrides(t.db, kind, [limit.id])).toEqual([]);
    });
  }
});
