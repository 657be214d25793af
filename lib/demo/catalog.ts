import { CatalogFile, type CeilingSpec } from "@/lib/catalog/spec";
import type { NewCeiling } from "@/db/schema/ceilings";
import type { NewEndpoint } from "@/db/schema/endpoints";
import demoCatalog from "./ceilings.json";
import { seededRandom } from "./random";

// The demo endpoints: the kinds of spend a real product pays for (email, SMS, a webhook, and LLM calls
// per model, priced by input and output tokens as providers bill them), each with the ceilings a
// careful operator would set. Their catalog is lib/demo/ceilings.json, a catalog file like any
// team's, applied by the seed through `applyCatalog`; this file adds what the history needs.

/** Names a ceiling inside its endpoint so the history generator can find it after insert. */
export type CeilingRef = "day_units" | "day_calls" | "month_units" | "caller_day_units" | "destination_cooldown";

export type DemoCeiling = Omit<NewCeiling, "endpointId"> & { ref: CeilingRef };

type DemoKey = "email.subscribe" | "sms.password-reset" | "llm.chat" | "llm.gpt-4o" | "llm.claude-sonnet" | "llm.embed" | "webhook.notify";

export type DemoEndpoint = NewEndpoint & {
  key: DemoKey;
  ceilings: DemoCeiling[];
  /** Typical daily volume in units, and units per call, for the history. */
  typicalDailyUnits: number;
  unitsPerCall: number;
  /** For an endpoint priced by input and output tokens: the share of a call's tokens that is output. */
  outputShare?: number;
};

/** The demo catalog file's text, as the seed applies it. */
export const DEMO_CATALOG_TEXT = JSON.stringify(demoCatalog);

const HISTORY: Record<DemoKey, { typicalDailyUnits: number; unitsPerCall: number; outputShare?: number }> = {
  "email.subscribe": { typicalDailyUnits: 62, unitsPerCall: 1 },
  "sms.password-reset": { typicalDailyUnits: 22, unitsPerCall: 1 },
  "llm.chat": { typicalDailyUnits: 520_000, unitsPerCall: 210 },
  "llm.gpt-4o": { typicalDailyUnits: 1_100_000, unitsPerCall: 1400, outputShare: 0.3 },
  "llm.claude-sonnet": { typicalDailyUnits: 560_000, unitsPerCall: 1800, outputShare: 0.35 },
  "llm.embed": { typicalDailyUnits: 9_000_000, unitsPerCall: 500 },
  "webhook.notify": { typicalDailyUnits: 6200, unitsPerCall: 1 },
};

function refOf(c: CeilingSpec): CeilingRef {
  if (c.scope === "destination") return "destination_cooldown";
  if (c.scope === "caller") return "caller_day_units";
  if (c.window === "billing_month") return "month_units";
  return c.metric === "calls" ? "day_calls" : "day_units";
}

function isDemoKey(key: string): key is DemoKey {
  return key in HISTORY;
}

export const DEMO_ENDPOINTS: readonly DemoEndpoint[] = CatalogFile.parse(demoCatalog).endpoints.map((e) => {
  if (!isDemoKey(e.key)) throw new Error(`lib/demo/ceilings.json: ${e.key} has no history settings in lib/demo/catalog.ts`);
  const { ceilings, overrides: _o, archived: _a, ...fields } = e;
  return {
    ...fields,
    key: e.key,
    ...HISTORY[e.key],
    ceilings: ceilings.map((c) => ({
      ref: refOf(c),
      metric: c.metric,
      scope: c.scope,
      window: c.window,
      windowSeconds: c.windowSeconds ?? null,
      value: c.value,
      defaultValue: c.default,
      minValue: c.min,
      maxValue: c.max,
    })),
  };
});

export type DemoStaff = { email: string; name: string; role: "admin" | "operator" | "viewer" };

export const DEMO_PASSWORD = "ceilings-demo";

export const DEMO_STAFF: readonly DemoStaff[] = [
  { email: "admin@ceilings.local", name: "Demo Admin", role: "admin" },
  // A second admin: a raise asked by one admin is approved by another (change control).
  { email: "approver@ceilings.local", name: "Demo Approver", role: "admin" },
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
export const DEMO_INBOXES: readonly string[] = FIRST.flatMap((f, i) => LAST.slice(0, 4).map((l, j) => `${f}.${l}@${DOMAINS[(i + j) % DOMAINS.length]}`));

/** Phone numbers in the 555-01xx range, reserved for fiction. */
export const DEMO_PHONES: readonly string[] = Array.from(
  { length: 40 },
  (_, i) => `+1${["415", "212", "312", "646"][i % 4]}55501${String(i).padStart(2, "0")}`,
);
