import { describe, expect, it } from "vitest";
import { billingMonthWindow } from "@/lib/limits/windows";
import { DEMO_CALLERS, DEMO_ENDPOINTS, DEMO_INBOXES, DEMO_PHONES, type DemoEndpoint } from "./catalog";
import { CAP_DAYS, calendarUsageRows, dailySpend, HISTORY_DAYS, type SeededEndpoint } from "./history";
import { demoAlerts, demoRefusals, type Endpoints } from "./incidents";
import { distributeCapped, seededRandom } from "./random";
import { todaysReservations } from "./today";
import { demoUsage } from "./usage";
import { moneyOf } from "@/lib/money/price";

// Ids as the database would hand them out, so the generators can be checked without one.
function seededEndpoints(): Endpoints {
  let next = 1;
  const seed = (key: DemoEndpoint["key"]): SeededEndpoint => {
    const index = DEMO_ENDPOINTS.findIndex((d) => d.key === key);
    const def = DEMO_ENDPOINTS[index];
    if (!def) throw new Error(`no demo endpoint ${key}`);
    const ceilings: SeededEndpoint["ceilings"] = {};
    for (const c of def.ceilings) ceilings[c.ref] = { ...c, id: next, limitId: next++ };
    return { def, id: index + 1, ceilings };
  };
  return {
    "email.subscribe": seed("email.subscribe"),
    "sms.password-reset": seed("sms.password-reset"),
    "llm.chat": seed("llm.chat"),
    "llm.gpt-4o": seed("llm.gpt-4o"),
    "llm.claude-sonnet": seed("llm.claude-sonnet"),
    "llm.embed": seed("llm.embed"),
    "webhook.notify": seed("webhook.notify"),
  };
}

const now = new Date("2026-03-02T09:30:00Z");

describe("distributeCapped", () => {
  it("hands out exactly the total when the callers have room, none above the cap", () => {
    const got = distributeCapped(1000, [5, 3, 1, 1, 1], 300);
    expect(got.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(Math.max(...got)).toBeLessThanOrEqual(300);
  });

  it("stops at cap x callers when the total does not fit", () => {
    expect(distributeCapped(100, [1, 1, 1], 5)).toEqual([5, 5, 5]);
  });

  it("gives nothing for a total of zero", () => {
    expect(distributeCapped(0, [1, 2], 5)).toEqual([0, 0]);
  });
});

describe("demo history", () => {
  const eps = seededEndpoints();

  for (const ep of Object.values(eps)) {
    it(`${ep.def.key}: stays within every ceiling, every day and every billing month`, () => {
      const days = dailySpend(ep, now, seededRandom(7));
      expect(days).toHaveLength(HISTORY_DAYS);
      const rows = calendarUsageRows(ep, days);
      for (const row of rows) {
        const ceiling = Object.values(ep.ceilings).find((c) => c.id === row.ceilingId);
        expect(Number(row.settled)).toBeLessThanOrEqual(ceiling?.value ?? -1);
      }
      const month = ep.ceilings.month_units;
      if (month) {
        const monthRows = rows.filter((r) => r.ceilingId === month.id);
        const sum = (rs: typeof rows) => rs.reduce((a, r) => a + Number(r.settled), 0);
        // The month counters are the sum of the days inside them.
        expect(sum(monthRows)).toBe(days.reduce((a, d) => a + d.units, 0));
        for (const r of monthRows) {
          expect(r.windowStart).toEqual(billingMonthWindow(r.windowStart, ep.def.billingDay ?? 1).start);
        }
      }
      const perCaller = ep.ceilings.caller_day_units;
      if (perCaller) {
        for (const d of days) expect([...d.byCaller.values()].reduce((a, b) => a + b, 0)).toBe(d.units);
      }
    });
  }

  it("has one day at the cap for the endpoints that ran into it", () => {
    for (const ep of Object.values(eps)) {
      const ago = CAP_DAYS[ep.def.key];
      if (ago === undefined) continue;
      const days = dailySpend(ep, now, seededRandom(7));
      expect(days[days.length - 1 - ago]?.units).toBe(ep.ceilings.day_units?.value);
    }
  });

  it("never lets a cooldown window hold more hits than its value", () => {
    for (const ep of [eps["email.subscribe"], eps["sms.password-reset"]]) {
      const today = dailySpend(ep, now, seededRandom(3)).at(-1);
      if (!today) throw new Error("no days");
      const { reservations, cooldownUsage } = todaysReservations(ep, today, now, seededRandom(3));
      expect(reservations.length).toBeGreaterThan(0);
      expect(cooldownUsage.length).toBeGreaterThan(0);
      for (const w of cooldownUsage) expect(Number(w.settled)).toBeLessThanOrEqual(ep.ceilings.destination_cooldown?.value ?? 0);
      for (const r of reservations) expect(r.createdAt && r.createdAt.getTime()).toBeLessThanOrEqual(now.getTime());
    }
  });
});

describe("demo counters and reservations agree", () => {
  const eps = seededEndpoints();
  // Every 25 hours over two months: month ends, early mornings just after midnight, weekends.
  const instants = Array.from({ length: 60 }, (_, i) => new Date(Date.UTC(2026, 0, 28) + i * 25 * 3_600_000 + 60_000));

  it("fits every ceiling whenever the seed runs", () => {
    for (const at of instants) {
      for (const ep of Object.values(eps)) expect(() => demoUsage(ep, at, seededRandom(at.getTime()))).not.toThrow();
    }
  });

  it("gives the reconcile job nothing to report: a counter charged only by reservations equals their sum", () => {
    for (const at of instants.slice(0, 20)) {
      for (const ep of Object.values(eps)) {
        const { usage, reservations } = demoUsage(ep, at, seededRandom(at.getTime()));
        // A charge names its ceiling's limit; the demo's counters, the ceiling. (This loop
        // skipped every charge while it looked for the ceiling ids charges named before 0042.)
        const ceilingOf = new Map(Object.values(ep.ceilings).flatMap((c) => (c ? [[c.limitId, c.id] as const] : [])));
        const charged = new Map<string, { grants: number; settled: number }>();
        for (const r of reservations) {
          for (const ch of r.charges) {
            expect(ceilingOf.has(ch.limitId), `limit ${ch.limitId}`).toBe(true);
            const key = `${ceilingOf.get(ch.limitId)}|${ch.scopeKey}|${ch.windowStart.toISOString()}`;
            const sum = charged.get(key) ?? { grants: 0, settled: 0 };
            const units = ch.measure === "u" ? Number(r.settledAmount) : ch.amount;
            charged.set(key, { grants: sum.grants + 1, settled: sum.settled + units });
          }
        }
        expect(charged.size > 0 || reservations.length === 0).toBe(true);
        const counters = new Map(usage.map((u) => [`${u.ceilingId}|${u.scopeKey}|${u.windowStart.toISOString()}`, u]));
        for (const [key, sum] of charged) {
          const counter = counters.get(key);
          expect(counter, `counter ${key}`).toBeDefined();
          const grants = Number(counter?.reservations);
          // Counters may carry history without reservation rows; only then may they differ.
          expect(grants).toBeGreaterThanOrEqual(sum.grants);
          if (grants === sum.grants) expect(Number(counter?.settled)).toBe(sum.settled);
          else expect(Number(counter?.settled)).toBeGreaterThanOrEqual(sum.settled);
        }
      }
    }
  });
});

describe("demo prices", () => {
  const eps = seededEndpoints();
  const partsOf = (key: DemoEndpoint["key"]) => eps[key].def.parts;

  it("prices LLM calls per model the way providers bill: input and output tokens apart", () => {
    expect(partsOf("llm.gpt-4o")).toEqual([
      { name: "input", pricePico: 2_500_000 },
      { name: "output", pricePico: 10_000_000 },
    ]);
    expect(partsOf("llm.claude-sonnet")).toEqual([
      { name: "input", pricePico: 3_000_000 },
      { name: "output", pricePico: 15_000_000 },
    ]);
    expect(partsOf("llm.embed")).toEqual([{ name: "units", pricePico: 20_000 }]);
    expect(partsOf("sms.password-reset")).toEqual([{ name: "units", pricePico: 7_900_000_000 }]);
  });

  it("keeps each reservation's parts, units and money consistent: parts add up to the amount, money is the parts at their prices", () => {
    for (const key of ["llm.gpt-4o", "llm.claude-sonnet", "llm.embed", "llm.chat", "sms.password-reset"] as const) {
      const ep = eps[key];
      const today = dailySpend(ep, now, seededRandom(5)).at(-1);
      if (!today) throw new Error("no days");
      const { reservations } = todaysReservations(ep, today, now, seededRandom(5));
      expect(reservations.length, key).toBeGreaterThan(0);
      const prices = ep.def.parts ?? [];
      for (const r of reservations) {
        const sum = (parts: Record<string, number>) => Object.values(parts).reduce((a, b) => a + b, 0);
        if (prices.length > 1) {
          if (!r.parts || !r.settledParts) throw new Error(`${key}: a reservation without parts`);
          expect(sum(r.parts)).toBe(r.amount);
          expect(sum(r.settledParts)).toBe(r.settledAmount);
          expect(r.money).toBe(Number(moneyOf(r.parts, prices)));
          expect(r.settledMoney).toBe(Number(moneyOf(r.settledParts, prices)));
        } else {
          expect(r.parts).toBeNull();
          expect(r.money).toBe(Number(moneyOf({ units: r.amount }, prices)));
        }
        expect(Number(r.settledMoney)).toBeLessThanOrEqual(Number(r.money));
        expect(Number(r.amount)).toBeLessThanOrEqual(ep.def.perCallMax);
      }
    }
  });
});

describe("demo incidents", () => {
  const eps = seededEndpoints();
  const refusals = demoRefusals(eps, now, seededRandom(11));

  it("has a few hundred refusals across all six gates, none in the future", () => {
    expect(refusals.length).toBeGreaterThan(200);
    expect(new Set(refusals.map((r) => r.gate))).toEqual(new Set(["kill_switch", "per_call_max", "ceiling", "cooldown", "throttle", "unavailable"]));
    for (const r of refusals) expect(r.at && r.at.getTime()).toBeLessThan(now.getTime());
  });

  it("folds identical refusals within a 10-second bucket into one row, as the database does", () => {
    const keys = refusals.map((r) => [r.endpointKey, r.gate, r.caller, r.destination, r.bucket?.getTime()].join("|"));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("has alerts in the past only", () => {
    const alerts = demoAlerts(eps, now, refusals);
    expect(alerts.map((a) => a.kind).sort()).toEqual(["fail_closed", "threshold", "threshold"]);
    for (const a of alerts) expect(a.createdAt && a.createdAt.getTime()).toBeLessThan(now.getTime());
  });
});

it("uses fictional callers, inboxes and phone numbers", () => {
  expect(new Set(DEMO_CALLERS).size).toBe(DEMO_CALLERS.length);
  for (const c of DEMO_CALLERS) expect(c).toMatch(/^acct_[a-z0-9]{8}$/);
  for (const i of DEMO_INBOXES) expect(i).toMatch(/@example\.(com|org|net)$/);
  for (const p of DEMO_PHONES) expect(p).toMatch(/^\+1\d{3}55501\d{2}$/);
});
