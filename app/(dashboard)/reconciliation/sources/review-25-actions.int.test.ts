// REVIEW EVIDENCE (issue 25 adversarial review): each test below FAILS on aa965fd and names a bug.
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { createUsageSource } from "@/lib/reconciliation/sources";
import { importUsageFileCore } from "./source-action-core";

const actor = { type: "system", name: "test" } as const;
let n = 0;

describe.skipIf(skipWithoutDatabase())("REVIEW import action: control characters in a refused file", () => {
  const t = useTestDatabase("usage_review_actions");
  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });
  const fileSource = async () =>
    (await createUsageSource(t.db, { input: { name: `file ${(n += 1)}`, kind: "file", location: "", credentialRef: "", account: "", timeZone: "UTC", currency: "USD", lookbackDays: "3", thresholdPercent: "2", thresholdMoney: "1" }, actor })).id;

  it("a CSV header with a NUL in a column name is refused line by line, not a server error", async () => {
    const id = await fileSource();
    const text = "date,item,units,co\u0000st\n2026-11-02,x,1,\n";
    const state = await importUsageFileCore(deps("admin"), form({ sourceId: String(id), format: "csv", text }));
    expect(state).toMatchObject({ status: "error", code: "invalid_input" });
    expect(JSON.stringify(state)).not.toContain("\\u0000");
  });
});
