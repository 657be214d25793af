import { utcDayWindow } from "@/lib/limits/windows";
import type { alerts } from "@/db/schema/alerts";
import type { NewAuditEvent } from "@/db/schema/audit-events";
import type { refusals } from "@/db/schema/refusals";
import { DEMO_CALLERS, DEMO_INBOXES, DEMO_PHONES, type DemoEndpoint } from "./catalog";
import { CAP_DAYS, KILL_DAY, type SeededEndpoint } from "./history";
import type { Random } from "./random";

// What went wrong in the demo's past: refusals at every gate, the alerts they raised and the
// audit trail of a kill and restore. Refusals fold into 10-second buckets as the database does.

export type RefusalRow = typeof refusals.$inferInsert;
export type AlertRow = typeof alerts.$inferInsert;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const BUCKET_MS = 10_000;

type Gate = RefusalRow["gate"];
type Refusal = {
  ep: SeededEndpoint;
  gate: Gate;
  at: Date;
  caller: string;
  destination?: string;
  amount: number;
  ceilingId?: number;
  remaining?: number;
  detail: string;
  count?: number;
};

export type Endpoints = Record<DemoEndpoint["key"], SeededEndpoint>;

function ceilingId(ep: SeededEndpoint, ref: keyof SeededEndpoint["ceilings"]): number {
  const c = ep.ceilings[ref];
  if (!c) throw new Error(`demo endpoint ${ep.def.key} has no ${ref} ceiling`);
  return c.id;
}

/** All refusals of the demo history, folded by (endpoint, gate, caller, destination, bucket). */
export function demoRefusals(eps: Endpoints, now: Date, random: Random): RefusalRow[] {
  const today = utcDayWindow(now).start.getTime();
  const dayAgo = (ago: number) => today - ago * DAY_MS;
  const list: Refusal[] = [];
  const email = eps["email.subscribe"];
  const sms = eps["sms.password-reset"];
  const llm = eps["llm.chat"];
  const webhook = eps["webhook.notify"];
  const pastDay = () => random.int(1, 34);
  const during = (start: number, lengthMs: number) => new Date(start + Math.floor(random.next() * lengthMs));

  // Days the traffic ran into a daily ceiling: every later call that day was refused.
  const capped: [SeededEndpoint, number, number, () => number, () => string | undefined][] = [
    [email, 16 * HOUR_MS + 20 * MINUTE_MS, 40, () => 1, () => random.pick(DEMO_INBOXES)],
    [llm, 19 * HOUR_MS + 5 * MINUTE_MS, 60, () => random.pick([1000, 2000, 4000, 8000]), () => undefined],
    [sms, 14 * HOUR_MS + 40 * MINUTE_MS, 30, () => 1, () => random.pick(DEMO_PHONES)],
  ];
  for (const [ep, capAt, n, amount, destination] of capped) {
    const ago = CAP_DAYS[ep.def.key] ?? 1;
    const value = ep.ceilings.day_units?.value ?? 0;
    for (let i = 0; i < n; i++) {
      const a = amount();
      list.push({
        ep,
        gate: "ceiling",
        at: during(dayAgo(ago) + capAt, DAY_MS - capAt - MINUTE_MS),
        caller: random.pick(DEMO_CALLERS.slice(0, 30)),
        destination: destination(),
        amount: a,
        ceilingId: ceilingId(ep, "day_units"),
        remaining: a > 1 ? random.int(0, Math.min(a - 1, 900)) : 0,
        detail: `at most ${value} ${ep.def.unit} per UTC day: the day's budget is spent`,
      });
    }
  }
  // Heavy accounts running into their own daily token ceiling, late in their busy days.
  for (let i = 0; i < 40; i++) {
    const a = random.pick([2000, 4000, 8000]);
    list.push({
      ep: llm,
      gate: "ceiling",
      at: during(dayAgo(pastDay()) + 18 * HOUR_MS, 6 * HOUR_MS - MINUTE_MS),
      caller: random.pick(DEMO_CALLERS.slice(0, 3)),
      amount: a,
      ceilingId: ceilingId(llm, "caller_day_units"),
      remaining: random.int(0, a - 1),
      detail: "at most 50000 tokens per account per UTC day",
    });
  }
  // The same inbox or phone asked again inside its cooldown.
  for (let i = 0; i < 50; i++) {
    list.push({
      ep: email,
      gate: "cooldown",
      at: during(dayAgo(pastDay()), DAY_MS),
      caller: random.pick(DEMO_CALLERS),
      destination: random.pick(DEMO_INBOXES),
      amount: 1,
      ceilingId: ceilingId(email, "destination_cooldown"),
      remaining: 0,
      detail: "one confirmation per inbox per 24 hours",
    });
  }
  for (let i = 0; i < 25; i++) {
    list.push({
      ep: sms,
      gate: "cooldown",
      at: during(dayAgo(pastDay()), DAY_MS),
      caller: random.pick(DEMO_CALLERS.slice(10, 40)),
      destination: random.pick(DEMO_PHONES.slice(0, 8)),
      amount: 1,
      ceilingId: ceilingId(sms, "destination_cooldown"),
      remaining: 0,
      detail: "at most 3 messages per number per hour",
    });
  }
  // Calls asking for more than one call may ever take.
  for (let i = 0; i < 25; i++) {
    const a = random.pick([9000, 12_000, 16_000, 32_000, 64_000]);
    list.push({
      ep: llm,
      gate: "per_call_max",
      at: during(dayAgo(pastDay()), DAY_MS),
      caller: random.pick(DEMO_CALLERS.slice(0, 12)),
      amount: a,
      detail: `asked for ${a} tokens; one call may take at most 8000`,
    });
  }
  for (let i = 0; i < 5; i++) {
    const a = random.int(2, 5);
    list.push({
      ep: sms,
      gate: "per_call_max",
      at: during(dayAgo(pastDay()), DAY_MS),
      caller: random.pick(DEMO_CALLERS.slice(10, 40)),
      destination: random.pick(DEMO_PHONES),
      amount: a,
      detail: `asked for ${a} messages; one call may send at most 1`,
    });
  }
  // webhook.notify was killed for 45 minutes while its provider delivered duplicates.
  const killStart = dayAgo(KILL_DAY) + 14 * HOUR_MS + 5 * MINUTE_MS;
  for (let i = 0; i < 40; i++) {
    list.push({
      ep: webhook,
      gate: "kill_switch",
      at: during(killStart, 45 * MINUTE_MS),
      caller: random.pick(DEMO_CALLERS),
      amount: 1,
      ceilingId: ceilingId(webhook, "day_units"),
      remaining: 0,
      count: random.int(5, 40),
      detail: "webhook.notify is killed: every ceiling is at 0",
    });
  }
  // One account flooding password resets at night: the soft throttle turned most away.
  const flooder = DEMO_CALLERS[17] ?? "acct_flood";
  const floodStart = dayAgo(5) + 2 * HOUR_MS + 10 * MINUTE_MS;
  for (let i = 0; i < 30; i++) {
    list.push({
      ep: sms,
      gate: "throttle",
      at: during(floodStart, 15 * MINUTE_MS),
      caller: flooder,
      destination: random.pick(DEMO_PHONES),
      amount: 1,
      count: random.int(1, 6),
      detail: "more than 20 requests per minute from this account",
    });
  }
  // A database failover: every endpoint failed closed for three minutes.
  const outage = dayAgo(2) + 3 * HOUR_MS + 12 * MINUTE_MS;
  for (let i = 0; i < 20; i++) {
    const ep = random.pick([email, sms, llm, webhook]);
    list.push({
      ep,
      gate: "unavailable",
      at: during(outage, 3 * MINUTE_MS),
      caller: random.pick(DEMO_CALLERS),
      amount: ep.def.key === "llm.chat" ? 2000 : 1,
      count: random.int(1, 12),
      detail: "the database did not answer within 2000 ms: refused, failing closed",
    });
  }
  return fold(list.filter((r) => r.at.getTime() < now.getTime()));
}

function fold(list: readonly Refusal[]): RefusalRow[] {
  const rows = new Map<string, RefusalRow & { at: Date; lastAt: Date; count: number }>();
  for (const r of [...list].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const bucket = new Date(Math.floor(r.at.getTime() / BUCKET_MS) * BUCKET_MS);
    const caller = r.caller;
    const destination = r.destination ?? "";
    const key = [r.ep.def.key, r.gate, caller, destination, bucket.getTime()].join("|");
    const existing = rows.get(key);
    if (existing) {
      existing.count += r.count ?? 1;
      existing.lastAt = r.at;
      continue;
    }
    rows.set(key, {
      at: r.at,
      lastAt: r.at,
      bucket,
      endpointId: r.ep.id,
      endpointKey: r.ep.def.key,
      ceilingId: r.ceilingId ?? null,
      gate: r.gate,
      caller,
      destination,
      amount: r.amount,
      remaining: r.remaining ?? null,
      count: r.count ?? 1,
      requestId: `req_${Math.floor(r.at.getTime() / 7).toString(36)}`,
      detail: r.detail,
    });
  }
  return [...rows.values()];
}

const total = (rs: readonly RefusalRow[]) => rs.reduce((a, r) => a + (r.count ?? 1), 0);

/** A few alerts: two acknowledged threshold alerts from capped days and one open fail-closed burst. */
export function demoAlerts(eps: Endpoints, now: Date, refusals: readonly RefusalRow[]): AlertRow[] {
  const today = utcDayWindow(now).start.getTime();
  const rows: AlertRow[] = [];
  for (const [key, at] of [
    ["email.subscribe", 16 * HOUR_MS + 20 * MINUTE_MS],
    ["llm.chat", 19 * HOUR_MS + 5 * MINUTE_MS],
  ] as const) {
    const ep = eps[key];
    const c = ep.ceilings.day_units;
    const ago = CAP_DAYS[key];
    if (!c || ago === undefined) continue;
    const window = utcDayWindow(new Date(today - ago * DAY_MS));
    const firedAt = new Date(window.start.getTime() + at);
    rows.push({
      kind: "threshold",
      dedupeKey: `threshold:${c.id}:${window.start.getTime() / 1000}:100`,
      endpointId: ep.id,
      ceilingId: c.id,
      windowStart: window.start,
      message: `${key} reached 100% of its ceiling: ${c.value.toLocaleString("en-US")} of ${c.value.toLocaleString("en-US")} ${ep.def.unit} per UTC day`,
      details: { percent: 100, used: c.value, limit: c.value, windowEnd: window.end.toISOString() },
      createdAt: firedAt,
      acknowledgedAt: new Date(firedAt.getTime() + 25 * MINUTE_MS),
      acknowledgedBy: "operator@ceilings.local",
    });
  }
  // The fail-closed burst, as the worker's rule words it: one alert for the endpoint hit hardest.
  const outage = refusals.filter((r) => r.gate === "unavailable");
  const byEndpoint = new Map<string, RefusalRow[]>();
  for (const r of outage) byEndpoint.set(r.endpointKey, [...(byEndpoint.get(r.endpointKey) ?? []), r]);
  const hardest = [...byEndpoint.entries()].sort((a, b) => total(b[1]) - total(a[1]))[0];
  if (hardest) {
    const [key, rs] = hardest;
    const last = new Date(Math.max(...rs.map((r) => r.lastAt?.getTime() ?? 0)));
    const callers = new Set(rs.map((r) => r.caller)).size;
    rows.push({
      kind: "fail_closed",
      dedupeKey: `fail_closed:${key}:${last.toISOString().slice(0, 13)}`,
      endpointId: rs[0]?.endpointId ?? null,
      message: `${key}: ${total(rs)} calls refused as unavailable (failing closed) in the last 5 minutes from ${callers} caller(s)`,
      details: { refusals: total(rs), callers, byGate: { unavailable: total(rs) } },
      createdAt: last,
    });
  }
  return rows.filter((r) => (r.createdAt?.getTime() ?? 0) < now.getTime());
}

/** The audit trail the seed leaves: the kill and restore of webhook.notify, then the seeding. */
export function demoAuditEvents(eps: Endpoints, now: Date, staff: readonly { email: string; role: string }[]): NewAuditEvent[] {
  const webhook = eps["webhook.notify"];
  const day = utcDayWindow(now).start.getTime() - KILL_DAY * DAY_MS;
  const killedAt = new Date(day + 14 * HOUR_MS + 5 * MINUTE_MS);
  const restoredAt = new Date(killedAt.getTime() + 45 * MINUTE_MS);
  const seed = { actorType: "system", actor: "seed" } as const;
  const events: NewAuditEvent[] = [];
  for (const c of Object.values(webhook.ceilings)) {
    const base = { ...seed, endpointId: webhook.id, endpointKey: webhook.def.key, ceilingId: c.id };
    events.push({
      ...base,
      at: killedAt,
      action: "ceiling.kill",
      previousValue: c.value,
      appliedValue: 0,
      clamped: false,
      reason: "demo history: the webhook provider was delivering duplicates",
    });
    events.push({
      ...base,
      at: restoredAt,
      action: "ceiling.restore",
      previousValue: 0,
      appliedValue: c.value,
      clamped: false,
      reason: "demo history: the provider confirmed the fix",
    });
  }
  for (const s of staff) events.push({ ...seed, at: now, action: "staff.add", target: s.email, details: { role: s.role } });
  events.push({ ...seed, at: now, action: "seed.demo", details: { endpoints: Object.keys(eps), staff: staff.map((s) => s.email) } });
  return events;
}
