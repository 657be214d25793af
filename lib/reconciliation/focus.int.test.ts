import { readFileSync } from "node:fs";
import { copyFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { alerts, endpoints, reconciliationDays, usagePulls, usageRows, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { compareSourceDays } from "./compare";
import { reservation } from "./compare-fixtures";
import { startFakeProvider, type FakeProvider } from "./fake-provider";
import { importUsageFile, pullSource, type PullOptions } from "./pull";
import { addUsageRule } from "./source-rules";

// FOCUS exports into file sources on a real database, by every path a file takes (an import by
// hand, a URL the worker reads, a path in USAGE_FILE_DIR): a prefix rule maps one model to its
// endpoint, its day is compared to the micro with the ledger (billed is the sum of BilledCost),
// and the export's tax, credits, purchases and corrections stay items of their own, unmapped.

const admin = { type: "staff", email: "admin@test.local" } as const;
const now = new Date("2026-11-03T12:00:00Z");
const sample = (name: string) => path.join(__dirname, "focus-samples", name);

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("FOCUS exports reconciled", () => {
  const t = useTestDatabase("recon_focus", { max: 6 });
  let fake: FakeProvider;
  const ids: Record<string, number> = {};
  const options = (): PullOptions => ({ now, secrets: () => undefined, egress: { allowHosts: ["127.0.0.1"] }, retryCapMs: 20, clock: () => now });

  beforeAll(async () => {
    fake = await startFakeProvider();
    const rows = await t.db
      .insert(endpoints)
      .values(
        ["llm.bedrock", "llm.vertex", "llm.azure"].map((key) => ({
          key,
          name: key,
          unit: "tokens",
          parts: [{ name: "units", pricePico: 3_000_000 }],
          perCallMax: 100_000,
        })),
      )
      .returning({ id: endpoints.id, key: endpoints.key });
    for (const r of rows) ids[r.key] = r.id;
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    await t.db.delete(alerts);
    await t.db.delete(reconciliationDays);
    await t.db.delete(usageSources);
  });

  async function fileSource(values: Partial<typeof usageSources.$inferInsert> & { name: string }) {
    const [row] = await t.db
      .insert(usageSources)
      .values({ createdBy: "test", kind: "file", ...values })
      .returning();
    if (!row) throw new Error("no source");
    return row;
  }
  /** The ledger's side: one reservation settled at these units and micros, inside the day. */
  const charge = (key: string, at: string, units: number, micros: number) =>
    reservation(t.db, { endpointId: ids[key] ?? 0, at: new Date(at), state: "settled", amount: units, money: micros });
  const drifts = () => t.db.select().from(alerts).where(eq(alerts.kind, "reconciliation"));

  it("an AWS export imported by hand: a prefix maps Claude's usage types to an endpoint, compared exactly with the ledger", async () => {
    const s = await fileSource({ name: "aws bedrock" });
    await addUsageRule(t.db, { sourceId: s.id, match: "Amazon Bedrock: USE1-Claude3.5Sonnet-*", endpointKey: "llm.bedrock", actor: admin });
    const imported = await importUsageFile(t.db, s.id, readFileSync(sample("aws.csv"), "utf8"), { actor: admin, now });
    // Input, output, the month's tax and a credit: the last two no usage rule takes.
    expect(imported).toMatchObject({ days: ["2026-11-01"], rows: 4, unmapped: 2 });
    // BilledCost of the four Claude rows: 0.36 + 0.24 + 0.30 + 0.0150075 = $0.9150075, to the micro (half up).
    await charge("llm.bedrock", "2026-11-01T13:30:00Z", 221_001, 915_008);
    const [day] = await compareSourceDays(t.db, { sourceId: s.id, days: imported.days, now });
    expect(day).toMatchObject({
      endpointId: ids["llm.bedrock"],
      day: "2026-11-01",
      billedUnits: 221_001,
      billedMicros: 915_008,
      billedMoney: "reported",
      chargedUnits: 221_001,
      chargedMicros: 915_008,
    });
    expect(await drifts()).toEqual([]);
    const stored = await t.db
      .select({ item: usageRows.item, units: usageRows.units, costMicros: usageRows.costMicros, unit: usageRows.unit, endpointId: usageRows.endpointId })
      .from(usageRows)
      .where(eq(usageRows.sourceId, s.id))
      .orderBy(usageRows.item);
    expect(stored).toEqual([
      { item: "Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens", units: 200_000, costMicros: 600_000, unit: "Tokens", endpointId: ids["llm.bedrock"] },
      { item: "Amazon Bedrock: USE1-Claude3.5Sonnet-output-tokens", units: 21_001, costMicros: 315_008, unit: "Tokens", endpointId: ids["llm.bedrock"] },
      { item: "Credit: Amazon Bedrock: USE1-Claude3.5Sonnet-input-tokens", units: 0, costMicros: -500_000, unit: null, endpointId: null },
      { item: "Tax: Amazon Bedrock: Tax for product code AmazonBedrock", units: 0, costMicros: 90_000, unit: null, endpointId: null },
    ]);
  });

  it("a Google Cloud export at the source's URL, read by the worker: each day compared, an hour a commitment paid billed at nothing", async () => {
    fake.setFile("/exports/gcp-focus.csv", readFileSync(sample("gcp.csv"), "utf8"));
    const s = await fileSource({ name: "vertex", location: `${fake.url}/exports/gcp-focus.csv` });
    await addUsageRule(t.db, { sourceId: s.id, match: "Vertex AI: Gemini 2.5 Pro*", endpointKey: "llm.vertex", actor: admin });
    const pulled = await pullSource(t.db, s.id, options());
    expect(pulled).toMatchObject({ days: ["2026-11-01", "2026-11-02"], rows: 4, unmapped: 1 });
    await charge("llm.vertex", "2026-11-01T00:30:00Z", 2_100_000, 3_500_000);
    await charge("llm.vertex", "2026-11-02T00:30:00Z", 400_000, 0);
    const compared = await compareSourceDays(t.db, { sourceId: s.id, days: pulled.days, now });
    expect(compared.map((r) => [r.day, r.billedUnits, r.billedMicros, r.chargedMicros])).toEqual([
      ["2026-11-01", 2_100_000, 3_500_000, 3_500_000],
      ["2026-11-02", 400_000, 0, 0],
    ]);
    expect(await drifts()).toEqual([]);
  });

  it("an Azure export at a path in USAGE_FILE_DIR, for a New York source: UTC days on their dates, the correction on the invoice's first day", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "focus-"));
    await copyFile(sample("azure.csv"), path.join(dir, "azure-focus.csv"));
    const s = await fileSource({ name: "azure openai", location: path.join(dir, "azure-focus.csv"), timeZone: "America/New_York" });
    await addUsageRule(t.db, { sourceId: s.id, match: "Azure OpenAI: gpt-4o-0806*", endpointKey: "llm.azure", actor: admin });
    const pulled = await pullSource(t.db, s.id, { ...options(), fileDir: dir });
    // Input (two accounts, one row), output, provisioned hours, the purchase, October's refund: on 2026-11-01.
    expect(pulled).toMatchObject({ days: ["2026-11-01"], rows: 5, unmapped: 3 });
    // New York's 2026-11-01 runs 04:00 UTC to 05:00 UTC the next day: the ledger's charge inside it.
    await charge("llm.azure", "2026-11-01T20:00:00Z", 2_100_400, 6_001_000);
    const [day] = await compareSourceDays(t.db, { sourceId: s.id, days: pulled.days, now });
    expect(day).toMatchObject({ endpointId: ids["llm.azure"], day: "2026-11-01", billedUnits: 2_100_400, billedMicros: 6_001_000, chargedMicros: 6_001_000 });
    expect(await drifts()).toEqual([]);
    const unmapped = await t.db
      .select({ item: usageRows.item, costMicros: usageRows.costMicros })
      .from(usageRows)
      .where(and(eq(usageRows.sourceId, s.id), eq(usageRows.day, "2026-11-01")))
      .orderBy(usageRows.item);
    expect(unmapped.filter((r) => !r.item.startsWith("Azure OpenAI: gpt"))).toEqual([
      { item: "Azure OpenAI: Provisioned Managed Global Hours", costMicros: 0 },
      { item: "Correction: Adjustment: Azure OpenAI: gpt-4o-0806 Inp glbl Tokens", costMicros: -2_500_000 },
      { item: "Purchase: Azure OpenAI: Azure OpenAI Provisioned Throughput Unit reservation", costMicros: 260_000_000 },
    ]);
  });

  it("an export billed in another currency is refused whole, every line named, nothing written", async () => {
    const s = await fileSource({ name: "aws in euros", currency: "EUR" });
    const refused = importUsageFile(t.db, s.id, readFileSync(sample("aws.csv"), "utf8"), { actor: admin, now });
    await expect(refused).rejects.toMatchObject({
      code: "bad_file",
      message: expect.stringContaining("6 bad lines"),
      lines: [2, 3, 4, 5, 6, 7].map((line) => ({ line, reason: "BillingCurrency is USD, the source counts EUR" })),
    });
    expect(await t.db.select().from(usagePulls).where(eq(usagePulls.sourceId, s.id))).toEqual([]);
  });
});
