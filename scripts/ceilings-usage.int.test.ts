import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpoints, usageRows, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { ReconciliationError } from "@/lib/reconciliation/errors";
import { FAKE_KEYS, startFakeProvider, type FakeProvider } from "@/lib/reconciliation/fake-provider";
import type { ProviderDay } from "@/lib/reconciliation/types";
import { describeUsageError, parseUsageArgs, runUsage, UsageCliError, type UsageDeps } from "./ceilings-usage";

describe("parseUsageArgs", () => {
  it("reads the three verbs and refuses what they do not take", () => {
    expect(parseUsageArgs([])).toEqual({ verb: "sources" });
    expect(parseUsageArgs(["pull", "openai"])).toEqual({ verb: "pull", source: "openai" });
    expect(parseUsageArgs(["import", "postmark", "usage.csv", "--format", "csv"])).toEqual({
      verb: "import",
      source: "postmark",
      file: "usage.csv",
      format: "csv",
    });
    expect(() => parseUsageArgs(["pull"])).toThrow(UsageCliError);
    expect(() => parseUsageArgs(["import", "x"])).toThrow(/needs a source and a file/);
    expect(() => parseUsageArgs(["import", "x", "f", "--format", "xml"])).toThrow(/csv or json/);
    expect(() => parseUsageArgs(["pull", "x", "--format", "csv"])).toThrow(/option of usage import/);
    expect(() => parseUsageArgs(["frobnicate"])).toThrow(/unknown usage command/);
  });
});

describe.skipIf(skipWithoutDatabase())("npm run ceilings -- usage", () => {
  const t = useTestDatabase("usage_cli", { max: 4 });
  let fake: FakeProvider;
  const lines: string[] = [];
  const compared: { sourceId: number; days: ProviderDay[] }[] = [];
  const deps = (): UsageDeps => ({
    actor: { type: "cli", name: "ops" },
    now: () => new Date("2026-11-03T12:00:00Z"),
    secrets: (name) => (name === "CEILINGS_SECRET_TWILIO_CLI" ? FAKE_KEYS.twilio.authToken : undefined),
    egress: { allowHosts: ["127.0.0.1"] },
    compare: async (_db, p) => {
      compared.push({ sourceId: p.sourceId, days: p.days });
      return [];
    },
    out: (line) => void lines.push(line),
  });
  beforeAll(async () => {
    fake = await startFakeProvider();
    await t.db.insert(endpoints).values({ key: "sms.send", name: "SMS", unit: "messages", perCallMax: 1 });
  });
  afterAll(async () => {
    await fake.close();
  });

  it("pulls a source by name and compares the days pulled; lists sources with their last pull", async () => {
    const [s] = await t.db
      .insert(usageSources)
      .values({
        name: "twilio",
        kind: "twilio",
        location: fake.url,
        credentialRef: "env:CEILINGS_SECRET_TWILIO_CLI",
        account: FAKE_KEYS.twilio.accountSid,
        createdBy: "t",
      })
      .returning();
    fake.setTwilio([{ day: "2026-11-02", category: "sms-outbound", count: 4, price: 0.04 }]);
    await runUsage(t.db, { verb: "pull", source: "twilio" }, deps());
    expect(lines.pop()).toBe(
      "pulled twilio: 3 days (2026-10-31 to 2026-11-02), 1 row, 1 no rule maps (map them on the source's page); compared 0 endpoint or budget days",
    );
    expect(compared.pop()).toEqual({ sourceId: s?.id, days: ["2026-10-31", "2026-11-01", "2026-11-02"] });
    await runUsage(t.db, { verb: "sources" }, deps());
    // A pull from the command line shows on the source as the worker's does.
    expect(lines.pop()).toMatch(/^#\d+ twilio {2}twilio, days in UTC, USD {2}last pull 2026-11-03 12:00 UTC, last good 2026-11-03 12:00 UTC$/);
    // And so does one that fails: the source's page and `usage sources` say why.
    await t.db
      .update(usageSources)
      .set({ location: `${fake.url}/nowhere` })
      .where(eq(usageSources.id, s?.id ?? 0));
    await expect(runUsage(t.db, { verb: "pull", source: "twilio" }, deps())).rejects.toThrow(/answered 404/);
    await runUsage(t.db, { verb: "sources" }, deps());
    expect(lines.slice(-2)).toEqual([
      expect.stringMatching(/last pull 2026-11-03 12:00 UTC, last good 2026-11-03 12:00 UTC$/),
      expect.stringMatching(/^ {4}error: Twilio: .*answered 404/),
    ]);
  });

  it("imports a file, and a bad one is refused with every bad line printed", async () => {
    const [s] = await t.db.insert(usageSources).values({ name: "postmark", kind: "file", timeZone: "America/New_York", createdBy: "t" }).returning();
    const dir = await mkdtemp(path.join(tmpdir(), "usage-cli-"));
    const good = path.join(dir, "good.csv");
    await writeFile(good, "date,item,units\n2026-11-01,sms.send,10\n");
    await runUsage(t.db, { verb: "import", source: `#${s?.id}`, file: good }, deps());
    expect(lines.pop()).toBe("imported postmark: 1 day (2026-11-01), 1 row; compared 0 endpoint or budget days");
    const bad = path.join(dir, "bad.csv");
    await writeFile(bad, "date,item,units\n2026-11-01,a,x\n2026-11-01,b,1\n2026-11-01,b,2\n");
    const error: unknown = await runUsage(t.db, { verb: "import", source: "postmark", file: bad }, deps()).catch((e: unknown) => e);
    expect(error instanceof ReconciliationError && describeUsageError(error)).toEqual([
      "error: the file for 'postmark' was not imported: 2 bad lines; nothing was written",
      "  line 2: units must be a whole number 0 or more, got 'x'",
      "  line 4: duplicate of line 3: 2026-11-01 b appears twice",
    ]);
    expect(
      (
        await t.db
          .select()
          .from(usageRows)
          .where(eq(usageRows.sourceId, s?.id ?? 0))
      ).map((r) => r.units),
    ).toEqual([10]);
    // Today in New York (the clock is 2026-11-03 07:00 there) is stored and said to wait.
    const today = path.join(dir, "today.csv");
    await writeFile(today, "date,item,units\n2026-11-02,sms.send,3\n2026-11-03,sms.send,1\n");
    await runUsage(t.db, { verb: "import", source: "postmark", file: today }, deps());
    expect(lines.slice(-1)).toEqual(["  2026-11-03 is not over yet in America/New_York: stored, and compared once over (import the file again then)"]);
    expect(lines.at(-2)).toMatch(/^imported postmark: 2 days/);
  });

  it("names an unknown source", async () => {
    await expect(runUsage(t.db, { verb: "pull", source: "nope" }, deps())).rejects.toThrow("no usage source named 'nope'");
  });
});
