import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { providerCaps, reservations, usageSourceRules, usageSources } from "@/db/schema";
import { forgetLedgerDays } from "@/lib/changes/what-if-days";
import { compareSourceDays } from "@/lib/reconciliation/compare";
import { addDays, dayBounds, dayIn } from "@/lib/reconciliation/days";
import { importUsageFile } from "@/lib/reconciliation/pull";
import type { Endpoints } from "./incidents";
import type { UsageRow } from "./history";
import type { Random } from "./random";

// Reconciliation in the demo: email.subscribe's last 30 days checked against its provider's report.
// The history lives in counters; the comparison reads the reservations ledger, so those days' sends
// are written as settled reservations too (charging no counter: the counters already hold them).
// The provider is Postmark-like: a CSV export of sends per day in US Eastern time, imported as a
// file. Three days ago a resend path called the provider without reserving: 7 more emails billed
// than charged, which the comparison finds and alerts. llm.chat has a second cap recorded (OpenAI's
// monthly project budget, above its worst case); the others have none, so readiness shows both.

export const DEMO_SOURCE_NAME = "Postmark export (US Eastern days)";
const ZONE = "America/New_York";
// The ledger and the export cover 30 days, so both lines of the chart are drawn across its range;
// the source re-reads 7 days back when it is read again.
const DAYS = 30;
const LOOKBACK_DAYS = 7;
const BYPASSED = { daysAgo: 3, emails: 7 };
const EMAIL_MICROS = 400; // $0.0004 an email, as the demo catalog prices it

export async function seedDemoReconciliation(tx: Db, eps: Endpoints, usageRows: readonly UsageRow[], now: Date, random: Random): Promise<number> {
  const email = eps["email.subscribe"];
  const daily = email.ceilings.day_units;
  if (!daily) return 0;
  // The settled emails of each complete UTC day of the week, as the daily counter holds them.
  const ledger: (typeof reservations.$inferInsert)[] = [];
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let ago = DAYS + 1; ago >= 1; ago--) {
    const start = today - ago * 86_400_000;
    const counter = usageRows.find((u) => u.ceilingId === daily.id && u.scopeKey === "" && (u.windowStart as Date).getTime() === start);
    for (let i = 0; i < (counter?.settled ?? 0); i++) {
      const at = new Date(start + random.int(0, 86_399_999));
      ledger.push({
        endpointId: email.id,
        amount: 1,
        money: EMAIL_MICROS,
        state: "settled",
        settledAmount: 1,
        settledMoney: EMAIL_MICROS,
        charges: [],
        createdAt: at,
        expiresAt: new Date(at.getTime() + 300_000),
        resolvedAt: new Date(at.getTime() + 2_000),
      });
    }
  }
  for (let i = 0; i < ledger.length; i += 500) await tx.insert(reservations).values(ledger.slice(i, i + 500));
  await forgetLedgerDays(tx, [email.id]);

  // The provider's report: every send of the ledger (this week's and today's, seeded before this)
  // counted per US Eastern day, plus the bypass.
  const days: string[] = [];
  for (let ago = DAYS; ago >= 1; ago--) days.push(addDays(dayIn(now, ZONE), -ago));
  const lines = ["date,item,units"];
  for (const day of days) {
    const { start, end } = dayBounds(day, ZONE);
    const [row] = resultRows<{ sent: string | number }>(
      await tx.execute(sql`select coalesce(sum(settled_amount), 0) as sent from reservations
        where endpoint_id = ${email.id} and state = 'settled' and created_at >= ${start.toISOString()}::timestamptz and created_at < ${end.toISOString()}::timestamptz`),
    );
    let sent = Number(row?.sent ?? 0);
    if (day === days[DAYS - BYPASSED.daysAgo]) sent += BYPASSED.emails;
    lines.push(`${day},outbound,${sent}`);
  }

  const [source] = await tx
    .insert(usageSources)
    .values({
      name: DEMO_SOURCE_NAME,
      kind: "file",
      timeZone: ZONE,
      // Emails cost $0.0004: a dollar is 2,500 of them, so this source alerts on the share alone.
      thresholdMicros: 0,
      lookbackDays: LOOKBACK_DAYS,
      createdBy: "demo seed",
    })
    .returning({ id: usageSources.id });
  if (!source) return 0;
  await tx.insert(usageSourceRules).values({ sourceId: source.id, match: "outbound", endpointId: email.id, createdBy: "demo seed" });
  const actor = { type: "system", name: "demo seed" } as const;
  const pulled = await importUsageFile(tx, source.id, `${lines.join("\n")}\n`, { actor, now, format: "csv" });
  await compareSourceDays(tx, { sourceId: source.id, days: pulled.days, now });

  // Second caps: OpenAI's project budget above llm.chat's worst case; sms.password-reset has none.
  await tx.insert(providerCaps).values({
    endpointId: eps["llm.chat"].id,
    measure: "money",
    window: "month",
    amount: 250_000_000,
    setAt: "OpenAI project assistant-prod: Settings > Limits > monthly budget",
    recordedBy: "demo seed",
  });
  return pulled.rows;
}
