// REVIEW EVIDENCE (issue 25 adversarial review): each test below FAILS on aa965fd and names a bug.
import { and, eq, isNotNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { usageRows } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeSource, pricedEndpoint } from "./compare-fixtures";
import { importUsageFile } from "./pull";

const admin = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("REVIEW comparison", () => {
  const t = useTestDatabase("usage_review_cmp", { max: 6 });

  it("one source per endpoint also holds for a file's implicit endpoint-key mapping (two file sources cannot both map an endpoint)", async () => {
    const e = await pricedEndpoint(t.db);
    const a = await makeSource(t.db);
    const b = await makeSource(t.db);
    const csv = `date,item,units,cost\n2026-11-02,${e.key},100,1.00\n`;
    await importUsageFile(t.db, a, csv, { actor: admin, now: new Date() });
    await importUsageFile(t.db, b, csv, { actor: admin, now: new Date() });
    const mapped = await t.db.select({ sourceId: usageRows.sourceId }).from(usageRows).where(and(eq(usageRows.endpointId, e.id), isNotNull(usageRows.endpointId)));
    // Both sources' rows count for the endpoint: usage counted twice / the comparison row flips between sources.
    expect(new Set(mapped.map((m) => m.sourceId)).size).toBe(1);
  });
});
