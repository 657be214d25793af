import type { NewCeiling } from "../schema/ceilings";
import type { NewEndpoint } from "../schema/endpoints";
import { seededRandom } from "./random";

// The demo endpoints: four kinds of spend a real product pays for, each with the ceilings a
// careful operator would set. The daily email ceiling is the plan allowance / 30, and the monthly
// one equals the allowance, so a 31-day month cannot exceed the plan.

/** Names a ceiling inside its endpoint so the history generator can find it after insert. */
export type CeilingRef = "day_units" | "day_calls" | "month_units" | "caller_day_units" | "destination_cooldown";

export type DemoCeiling = Omit<NewCeiling, "endpointId"> & { ref: CeilingRef };

export type DemoEndpoint = NewEndpoint & {
  key: "email.subscribe" | "sms.password-reset" | "llm.chat" | "webhook.notify";
  ceilings: DemoCeiling[];
  /** Typical daily volume in units, and units per call, for the history. */
  typicalDailyUnits: number;
  unitsPerCall: number;
};

export const DEMO_ENDPOINTS: readonly DemoEndpoint[] = [
  {
    key: "email.subscribe",
    name: "Newsletter confirmation email",
    unit: "emails",
    unitPriceMicros: 400,
    perCallMax: 1,
    planAllowance: 3000,
    billingDay: 1,
    typicalDailyUnits: 62,
    unitsPerCall: 1,
    ceilings: [
      { ref: "day_units", metric: "units", scope: "global", window: "utc_day", value: 100, defaultValue: 100, minValue: 0, maxValue: 150 },
      { ref: "month_units", metric: "units", scope: "global", window: "billing_month", value: 3000, defaultValue: 3000, minValue: 0, maxValue: 3000 },
      // One confirmation per inbox per 24 hours, counted from the first send.
      { ref: "destination_cooldown", metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 86_400, value: 1, defaultValue: 1, minValue: 0, maxValue: 5 },
    ],
  },
  {
    key: "sms.password-reset",
    name: "Password reset SMS",
    unit: "messages",
    unitPriceMicros: 7900,
    perCallMax: 1,
    planAllowance: 1500,
    billingDay: 1,
    throttlePerMinute: 20,
    typicalDailyUnits: 22,
    unitsPerCall: 1,
    ceilings: [
      { ref: "day_units", metric: "units", scope: "global", window: "utc_day", value: 50, defaultValue: 50, minValue: 0, maxValue: 100 },
      { ref: "caller_day_units", metric: "units", scope: "caller", window: "utc_day", value: 5, defaultValue: 5, minValue: 0, maxValue: 20 },
      { ref: "destination_cooldown", metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 3600, value: 3, defaultValue: 3, minValue: 0, maxValue: 10 },
    ],
  },
  {
    key: "llm.chat",
    name: "Assistant chat completion",
    unit: "tokens",
    unitPriceMicros: 2,
    perCallMax: 8000,
    planAllowance: 30_000_000,
    billingDay: 1,
    throttlePerMinute: 60,
    typicalDailyUnits: 520_000,
    unitsPerCall: 210,
    ceilings: [
      { ref: "day_units", metric: "units", scope: "global", window: "utc_day", value: 1_000_000, defaultValue: 1_000_000, minValue: 0, maxValue: 2_000_000 },
      { ref: "day_calls", metric: "calls", scope: "global", window: "utc_day", value: 5000, defaultValue: 5000, minValue: 0, maxValue: 20_000 },
      { ref: "caller_day_units", metric: "units", scope: "caller", window: "utc_day", value: 50_000, defaultValue: 50_000, minValue: 0, maxValue: 200_000 },
    ],
  },
  {
    key: "webhook.notify",
    name: "Metered customer webhook",
    unit: "calls",
    unitPriceMicros: 100,
    perCallMax: 1,
    planAllowance: 300_000,
    // Billed from the 15th: shows a billing month that is not the calendar month.
    billingDay: 15,
    typicalDailyUnits: 6200,
    unitsPerCall: 1,
    ceilings: [
      { ref: "day_units", metric: "units", scope: "global", window: "utc_day", value: 10_000, defaultValue: 10_000, minValue: 0, maxValue: 20_000 },
      { ref: "month_units", metric: "units", scope: "global", window: "billing_month", value: 300_000, defaultValue: 300_000, minValue: 0, maxValue: 300_000 },
    ],
  },
];

export type DemoStaff = { email: string; name: string; role: "admin" | "operator" | "viewer" };

export const DEMO_PASSWORD = "ceilings-demo";

export const DEMO_STAFF: readonly DemoStaff[] = [
  { email: "admin@ceilings.local", name: "Demo Admin", role: "admin" },
  { email: "operator@ceilings.local", name: "Demo Operator", role: "operator" },
  { email: "viewer@ceilings.local", name: "Demo Viewer", role: "viewer" },
];

/** Billing accounts that call the demo endpoints. */
export const DEMO_CALLERS: readonly string[] = (() => {
  const random = seededRandom(20_250_101);
  const alphabet = "abcdefghjkmnpqrstuvwxyz23456789";
  const ids = new Set<string>();
  while (ids.size < 48) {
    ids.add(`acct_${Array.from({ length: 8 }, () => random.pick([...alphabet])).join("")}`);
  }
  return [...ids];
})();

const FIRST = ["maria", "sam", "li.wei", "noah", "fatima", "olga", "diego", "amara", "jonas", "priya", "tom", "ines"];
const LAST = ["lopez", "baker", "chen", "okafor", "novak", "silva", "kim", "haddad", "meyer", "rossi"];
const DOMAINS = ["example.com", "example.org", "example.net"];

/** Inboxes on the reserved example domains, never a real address. */
export const DEMO_INBOXES: readonly string[] = FIRST.flatMap((f, i) =>
  LAST.slice(0, 4).map((l, j) => `${f}.${l}@${DOMAINS[(i + j) % DOMAINS.length]}`),
);

/** Phone numbers in the 555-01xx range, reserved for fiction. */
export const DEMO_PHONES: readonly string[] = Array.from(
  { length: 40 },
  (_, i) => `+1${["415", "212", "312", "646"][i % 4]}55501${String(i).padStart(2, "0")}`,
);
