import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { countRefusalsByGate } from "./chart";
import { countAllRefusals, countMatchingRefusals } from "./counts";
import { getRefusal } from "./detail";
import { RefusalFilters, type RefusalFilters as Filters } from "./filters";
import { listRefusals } from "./list";
import { insertRefusals, minutesAgo } from "./test-fixtures";

// One hand-made log, and for each filter the exact set of rows it must return.
describe.skipIf(skipWithoutDatabase())("refusal log filters on real Postgres", () => {
  const t = useTestDatabase("refusal_filters");
  const now = new Date("2025-06-10T12:00:00.000Z");
  const ids: Record<string, number> = {};
  let emailKey = "";
  let dailyCeiling = 0;

  beforeAll(async () => {
    const email = await createEndpoint(t.db, { key: "email.subscribe" });
    const sms = await createEndpoint(t.db, { key: "sms.reset" });
    emailKey = email.key;
    dailyCeiling = email.ceilings[0]?.id ?? 0;
    const e = { endpointId: email.endpointId, endpointKey: email.key };
    const s = { endpointId: sms.endpointId, endpointKey: sms.key };
    const rows = {
      e1: {
        ...e,
        at: minutesAgo(now, 10),
        gate: "ceiling",
        caller: "acct_1",
        destination: "maria.lopez@example.com",
        count: 7,
        ceilingId: dailyCeiling,
        remaining: 0,
      },
      e2: { ...e, at: minutesAgo(now, 20), gate: "cooldown", caller: "acct_10", destination: "maria.baker@example.org" },
      e3: { ...e, at: minutesAgo(now, 30), gate: "kill_switch", caller: "acct_1", destination: "sam_x%@example.com" },
      s1: { ...s, at: minutesAgo(now, 40), gate: "throttle", caller: "acct_2", destination: "+14155550101" },
      s2: { ...s, at: minutesAgo(now, 50), gate: "ceiling", caller: "", destination: "+14155550102" },
      s3: { ...s, at: minutesAgo(now, 60 * 24 * 3), gate: "unavailable", caller: "acct_1", destination: "+12125550103" },
    } as const;
    const inserted = await insertRefusals(t.db, Object.values(rows));
    Object.keys(rows).forEach((name, i) => {
      ids[name] = inserted[i] ?? -1;
    });
  });

  async function names(input: Record<string, string>): Promise<string[]> {
    const filters: Filters = RefusalFilters.parse(input);
    const page = await listRefusals(t.db, { filters });
    const byId = new Map(Object.entries(ids).map(([k, v]) => [v, k]));
    return page.rows.map((r) => byId.get(r.id) ?? `?${r.id}`);
  }

  it("lists everything newest first without filters", async () => {
    expect(await names({})).toEqual(["e1", "e2", "e3", "s1", "s2", "s3"]);
  });

  it("filters by endpoint key", async () => {
    expect(await names({ endpoint: "sms.reset" })).toEqual(["s1", "s2", "s3"]);
    expect(await names({ endpoint: "no.such" })).toEqual([]);
  });

  it("filters by gate", async () => {
    expect(await names({ gate: "ceiling" })).toEqual(["e1", "s2"]);
    expect(RefusalFilters.safeParse({ gate: "nonsense" }).success).toBe(false);
  });

  it("filters by caller exactly, never as a prefix", async () => {
    expect(await names({ caller: "acct_1" })).toEqual(["e1", "e3", "s3"]);
    expect(await names({ caller: "acct_10" })).toEqual(["e2"]);
  });

  it("filters by destination prefix, with LIKE wildcards taken literally", async () => {
    expect(await names({ destination: "maria." })).toEqual(["e1", "e2"]);
    expect(await names({ destination: "+1415" })).toEqual(["s1", "s2"]);
    expect(await names({ destination: "sam_x%" })).toEqual(["e3"]);
    expect(await names({ destination: "sam%" })).toEqual([]);
    expect(await names({ destination: "+14155550101" })).toEqual(["s1"]);
  });

  it("filters by time range, from inclusive and to exclusive, in any accepted format", async () => {
    const from = minutesAgo(now, 40).toISOString();
    const to = minutesAgo(now, 10).toISOString();
    expect(await names({ from, to })).toEqual(["e2", "e3", "s1"]);
    expect(await names({ to: "2025-06-09" })).toEqual(["s3"]);
    expect(await names({ from: "2025-06-10T11:45" })).toEqual(["e1"]);
    expect(RefusalFilters.safeParse({ from: to, to: from }).success).toBe(false);
    expect(RefusalFilters.safeParse({ from: "yesterday" }).success).toBe(false);
  });

  it("combines filters", async () => {
    expect(await names({ endpoint: emailKey, caller: "acct_1", gate: "kill_switch" })).toEqual(["e3"]);
    expect(await names({ caller: "acct_1", destination: "+1" })).toEqual(["s3"]);
  });

  it("counts matching rows and the whole log", async () => {
    expect(await countMatchingRefusals(t.db, RefusalFilters.parse({ endpoint: "sms.reset" }))).toEqual({ n: 3, exact: true });
    expect(await countAllRefusals(t.db)).toEqual({ n: 6, exact: true });
  });

  it("charts refusals per gate, summing folded counts, within the filtered range", async () => {
    const chart = await countRefusalsByGate(t.db, { filters: RefusalFilters.parse({ endpoint: emailKey }), now });
    expect(chart.totals).toMatchObject({ ceiling: 7, cooldown: 1, kill_switch: 1, throttle: 0 });
    expect(chart.bucketMs).toBe(3 * 3_600_000);
    expect(chart.buckets.reduce((sum, b) => sum + b.ceiling, 0)).toBe(7);
    const day = await countRefusalsByGate(t.db, { filters: RefusalFilters.parse({ from: "2025-06-10T11:00", to: "2025-06-10T12:00" }), now });
    expect(day.bucketMs).toBe(5 * 60_000);
    expect(day.totals).toMatchObject({ ceiling: 8, cooldown: 1, kill_switch: 1, throttle: 1, unavailable: 0 });
  });

  it("details one refusal with its ceiling and remaining budget", async () => {
    const d = await getRefusal(t.db, ids.e1 ?? -1);
    expect(d).toMatchObject({ gate: "ceiling", count: 7, remaining: 0, caller: "acct_1", endpoint: { key: emailKey } });
    expect(d?.ceiling).toMatchObject({ id: dailyCeiling, guarantee: "at most 100 emails per UTC day" });
    expect((await getRefusal(t.db, ids.s1 ?? -1))?.ceiling).toBeNull();
    expect(await getRefusal(t.db, 999_999)).toBeNull();
  });
});
