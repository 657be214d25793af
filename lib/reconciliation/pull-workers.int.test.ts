import path from "node:path";
import { describe, expect, it } from "vitest";
import { usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { startFixtureProcess } from "@/lib/enforcement/test-fixtures";
import { FAKE_KEYS, startFakeProvider } from "./fake-provider";

// Three workers, each its own OS process with its own pool, run pullDueSources at the same moment
// over the same sources: each source is pulled by exactly one of them, once.

describe.skipIf(skipWithoutDatabase())("pullDueSources from three processes", () => {
  const t = useTestDatabase("usage_pull_workers", { max: 4 });

  it("pulls every due source exactly once", async () => {
    const fake = await startFakeProvider();
    try {
      fake.setTwilio([{ day: "2026-11-01", category: "sms-outbound", count: 2, price: 0.02 }]);
      const names = Array.from({ length: 6 }, (_, i) => `src-${i}`);
      await t.db.insert(usageSources).values(
        names.map((name) => ({
          name,
          kind: "twilio" as const,
          location: fake.url,
          credentialRef: "env:CEILINGS_SECRET_TWILIO",
          account: FAKE_KEYS.twilio.accountSid,
          createdBy: "t",
        })),
      );
      const workers = [1, 2, 3].map(() =>
        startFixtureProcess<{ pulled: string[]; failed: string[] }>(path.join(__dirname, "pull-worker.fixture.ts"), [
          t.url,
          "2026-11-03T12:00:00Z",
          FAKE_KEYS.twilio.authToken,
        ]),
      );
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.send();
      const results = await Promise.all(workers.map((w) => w.done));
      expect(results.flatMap((r) => r.failed)).toEqual([]);
      expect(results.flatMap((r) => r.pulled).sort()).toEqual(names);
      expect(fake.requests.filter((r) => r.path.endsWith("Daily.json"))).toHaveLength(names.length);
    } finally {
      await fake.close();
    }
  }, 60_000);
});
