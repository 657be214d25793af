import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { DEFAULT_PART } from "@/lib/vocabulary";

// Fifty endpoints in five families, with the ceilings a careful operator would give each. The
// family decides what a destination is (inbox, phone number, none) and which gates refuse.

export const FAMILIES = {
  email: ["welcome", "receipt", "digest", "invite", "verify", "reset", "alert", "export-ready", "mention", "reminder", "invoice", "survey"],
  sms: ["otp", "login", "reset", "delivery", "reminder", "alert", "2fa", "marketing"],
  llm: ["chat", "summarize", "classify", "translate", "embed", "moderate", "extract", "draft", "search", "agent"],
  webhook: ["notify", "billing", "crm-sync", "audit", "partner", "status", "orders", "events", "slack", "zapier"],
  voice: ["call-otp", "ivr", "callback", "alert", "survey", "reminder", "escalate", "dispatch", "verify", "bridge"],
} as const;
export type Family = keyof typeof FAMILIES;

// pricePico: one unit's price in millionths of a micro, the endpoint's one part `units` (the fill's
// reservations send one amount, so every family is single-priced).
type Spec = { unit: string; pricePico: number; perCallMax: number; day: number; allowance: number; callerDay?: number; cooldownSeconds?: number };
const SPECS: Record<Family, Spec> = {
  email: { unit: "emails", pricePico: 400_000_000, perCallMax: 1, day: 2_000, allowance: 60_000, cooldownSeconds: 86_400 },
  sms: { unit: "messages", pricePico: 7_900_000_000, perCallMax: 1, day: 500, allowance: 15_000, callerDay: 5, cooldownSeconds: 3_600 },
  llm: { unit: "tokens", pricePico: 2_500_000, perCallMax: 8_000, day: 5_000_000, allowance: 150_000_000, callerDay: 200_000 },
  webhook: { unit: "calls", pricePico: 100_000_000, perCallMax: 1, day: 50_000, allowance: 1_500_000 },
  voice: { unit: "minutes", pricePico: 13_000_000_000, perCallMax: 30, day: 3_000, allowance: 90_000, callerDay: 60 },
};

const FAMILY_NAMES: readonly Family[] = ["email", "sms", "llm", "webhook", "voice"];
export const FILL_ENDPOINTS: { key: string; family: Family }[] = FAMILY_NAMES.flatMap((family) =>
  FAMILIES[family].map((action) => ({ key: `${family}.${action}`, family })),
);

/** Creates the fifty endpoints and their ceilings; endpoints that exist already keep theirs. */
export async function ensureEndpoints(db: Db): Promise<number> {
  let created = 0;
  for (const { key, family } of FILL_ENDPOINTS) {
    const s = SPECS[family];
    const [inserted] = resultRows<{ id: number }>(
      await db.execute(sql`
      insert into endpoints (key, name, unit, parts, per_call_max, plan_allowance, throttle_per_minute)
      values (${key}, ${`Fill ${key}`}, ${s.unit}, ${JSON.stringify([{ name: DEFAULT_PART, pricePico: s.pricePico }])}::jsonb, ${s.perCallMax}, ${s.allowance}, ${family === "webhook" ? null : 60})
      on conflict (key) do nothing returning id`),
    );
    if (!inserted) continue;
    const id = inserted.id;
    created += 1;
    await db.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", window_seconds, value, min_value, max_value, default_value)
      values (${id}, 'units', 'global', 'utc_day', null, ${s.day}, 0, ${s.day * 2}, ${s.day}),
             (${id}, 'units', 'global', 'billing_month', null, ${s.allowance}, 0, ${s.allowance}, ${s.allowance})`);
    if (s.callerDay) {
      await db.execute(sql`
        insert into ceilings (endpoint_id, metric, scope, "window", value, min_value, max_value, default_value)
        values (${id}, 'units', 'caller', 'utc_day', ${s.callerDay}, 0, ${s.callerDay * 4}, ${s.callerDay})`);
    }
    if (s.cooldownSeconds) {
      await db.execute(sql`
        insert into ceilings (endpoint_id, metric, scope, "window", window_seconds, value, min_value, max_value, default_value)
        values (${id}, 'calls', 'destination', 'first_hit', ${s.cooldownSeconds}, 1, 0, 5, 1)`);
    }
  }
  return created;
}
