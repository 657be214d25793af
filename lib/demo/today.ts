import { billingMonthWindow, utcDayWindow } from "@/lib/limits/windows";
import type { ReservationCharge, reservations } from "@/db/schema/reservations";
import { moneyOf } from "@/lib/money/price";
import { DEFAULT_PART } from "@/lib/vocabulary";
import { DEMO_INBOXES, DEMO_PHONES, type DemoEndpoint } from "./catalog";
import { callerPool, type DaySpend, type SeededEndpoint, type UsageRow } from "./history";
import type { Random } from "./random";

// Today's most recent reservations, all settled, with the charges the enforcement functions would
// have written, and the cooldown windows their destinations opened. Today's counters are the
// history's baseline plus exactly what these reservations settled, so the reconcile job finds
// counters and reservations in agreement.

export type ReservationRow = typeof reservations.$inferInsert;

const RESERVATIONS_TODAY: Record<SeededEndpoint["def"]["key"], number> = {
  "email.subscribe": 12,
  "sms.password-reset": 9,
  "llm.chat": 14,
  "llm.gpt-4o": 12,
  "llm.claude-sonnet": 8,
  "llm.embed": 10,
  "webhook.notify": 10,
};

/** One call's units: reserved and settled, and per part when the endpoint is priced by input and output. */
type CallUnits = { amount: number; settledAmount: number; parts: Record<string, number> | null; settledParts: Record<string, number> | null };

function callUnits(def: DemoEndpoint, random: Random): CallUnits {
  if (def.outputShare !== undefined) {
    // The prompt's input tokens are known; output is reserved at max_tokens and settles lower.
    const input = random.int(200, 6000);
    const maxOutput = random.pick([1000, 2000, 4000]);
    const output = random.int(50, Math.round(maxOutput * 0.6));
    return { amount: input + maxOutput, settledAmount: input + output, parts: { input, output: maxOutput }, settledParts: { input, output } };
  }
  if (def.key === "llm.chat") {
    const amount = random.pick([1000, 2000, 4000, 8000]);
    return { amount, settledAmount: random.int(80, Math.round(amount * 0.4)), parts: null, settledParts: null };
  }
  if (def.key === "llm.embed") {
    const amount = random.int(50, 4000);
    return { amount, settledAmount: amount, parts: null, settledParts: null };
  }
  return { amount: 1, settledAmount: 1, parts: null, settledParts: null };
}

/** The money of a call's units at the endpoint's prices, in micros rounded up once, as a reservation keeps it. */
function moneyOfCall(def: DemoEndpoint, parts: Record<string, number> | null, amount: number): number {
  const prices = def.parts ?? [{ name: DEFAULT_PART, pricePico: 0 }];
  return Number(moneyOf(parts ?? { [prices[0]?.name ?? DEFAULT_PART]: amount }, prices));
}

type Destination = { original: string; key: string };

function emailDestination(inbox: string, random: Random): Destination {
  // Some people type their address with capitals or a plus-tag; the key ignores both.
  if (random.next() < 0.25) {
    const [local, domain] = inbox.split("@");
    return { original: `${local}+news@${domain?.toUpperCase()}`, key: inbox };
  }
  return { original: inbox, key: inbox };
}

function phoneDestination(phone: string): Destination {
  // The original as typed, the key in E.164.
  const national = phone.slice(2);
  return { original: `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}`, key: phone };
}

export type TodayData = {
  reservations: ReservationRow[];
  cooldownUsage: UsageRow[];
  /** Today's spend: the baseline plus what the reservations settled. */
  today: DaySpend;
};

export function todaysReservations(ep: SeededEndpoint, today: DaySpend, now: Date, random: Random): TodayData {
  const { def, ceilings } = ep;
  const day = utcDayWindow(now);
  const month = billingMonthWindow(now, def.billingDay ?? 1);
  const from = day.start.getTime();
  const to = Math.max(from + 1000, now.getTime() - 5000);
  const count = RESERVATIONS_TODAY[def.key];
  const times = Array.from({ length: count }, () => Math.round(from + random.next() * (to - from))).sort((a, b) => a - b);
  const active = today.byCaller.size > 0 ? [...today.byCaller.keys()] : callerPool(def);
  const perCallerCap = ceilings.caller_day_units?.value;
  const added = new Map<string, { units: number; calls: number }>();
  // A caller with room left under its own daily ceiling for what this call settles.
  const pickCaller = (settled: number): string | undefined => {
    const fits = (c: string) => perCallerCap === undefined || (today.byCaller.get(c) ?? 0) + (added.get(c)?.units ?? 0) + settled <= perCallerCap;
    const candidates = active.filter(fits);
    const fallback = candidates.length > 0 ? candidates : callerPool(def).filter(fits);
    return fallback.length > 0 ? random.pick(fallback) : undefined;
  };
  const inboxes = [...DEMO_INBOXES];
  const cooldown = ceilings.destination_cooldown;
  // Open cooldown windows by destination key: a later hit inside the window joins it.
  const open = new Map<string, UsageRow & { windowEnd: Date }>();
  const windows: UsageRow[] = [];
  const isFull = (key: string, t: number) => {
    const w = open.get(key);
    return cooldown !== undefined && w !== undefined && w.windowEnd.getTime() > t && Number(w.settled) >= cooldown.value;
  };
  const rows: ReservationRow[] = [];

  for (const t of times) {
    const createdAt = new Date(t);
    const { amount, settledAmount, parts, settledParts } = callUnits(def, random);
    const caller = pickCaller(settledAmount);
    if (caller === undefined) continue;
    let destination: Destination | undefined;
    if (def.key === "email.subscribe") {
      // Each inbox at most once: the one-per-24-hours cooldown would have refused a second send.
      const inbox = inboxes.splice(random.int(0, inboxes.length - 1), 1)[0];
      if (inbox) destination = emailDestination(inbox, random);
    } else if (def.key === "sms.password-reset") {
      // A few numbers ask more than once; the cooldown would have refused a fourth in the hour.
      const phones = DEMO_PHONES.slice(0, 6).filter((p) => !isFull(p, t));
      destination = phoneDestination(random.pick(phones.length > 0 ? phones : DEMO_PHONES.slice(6)));
    }
    const charges: ReservationCharge[] = [];
    // The measure (units or calls) tells settle which charges to correct to the actual use.
    const charge = (limitId: number, scopeKey: string, windowStart: Date, amount: number, measure: "u" | "c") =>
      charges.push({ limitId, scopeKey, windowStart, measure, amount });
    if (ceilings.day_units) charge(ceilings.day_units.limitId, "", day.start, amount, "u");
    if (ceilings.day_calls) charge(ceilings.day_calls.limitId, "", day.start, 1, "c");
    if (ceilings.caller_day_units) charge(ceilings.caller_day_units.limitId, caller, day.start, amount, "u");
    if (ceilings.month_units) charge(ceilings.month_units.limitId, "", month.start, amount, "u");
    if (cooldown && destination && cooldown.windowSeconds) {
      let window = open.get(destination.key);
      if (!window || window.windowEnd.getTime() <= t) {
        window = {
          ceilingId: cooldown.id,
          scopeKey: destination.key,
          windowStart: createdAt,
          windowEnd: new Date(t + cooldown.windowSeconds * 1000),
          held: 0,
          settled: 0,
          reservations: 0,
        };
        open.set(destination.key, window);
        windows.push(window);
      }
      window.settled = Number(window.settled) + 1;
      window.reservations = Number(window.reservations) + 1;
      charge(cooldown.limitId, destination.key, window.windowStart, 1, "c");
    }
    const sum = added.get(caller) ?? { units: 0, calls: 0 };
    added.set(caller, { units: sum.units + settledAmount, calls: sum.calls + 1 });
    rows.push({
      endpointId: ep.id,
      caller,
      destination: destination?.original ?? null,
      destinationKey: destination?.key ?? null,
      amount,
      settledAmount,
      // Ceilings count the parts' total units (amount); money is the parts at their prices.
      parts,
      money: moneyOfCall(def, parts, amount),
      settledParts,
      settledMoney: moneyOfCall(def, settledParts, settledAmount),
      state: "settled",
      charges,
      createdAt,
      expiresAt: new Date(t + 300_000),
      resolvedAt: new Date(Math.min(now.getTime(), t + random.int(300, 4000))),
    });
  }
  const merged: DaySpend = {
    day: today.day,
    units: today.units + rows.reduce((a, r) => a + Number(r.settledAmount ?? 0), 0),
    calls: today.calls + rows.length,
    byCaller: new Map(today.byCaller),
    callsByCaller: new Map(today.callsByCaller),
  };
  if (perCallerCap !== undefined) {
    for (const [caller, sum] of added) {
      merged.byCaller.set(caller, (merged.byCaller.get(caller) ?? 0) + sum.units);
      merged.callsByCaller.set(caller, (merged.callsByCaller.get(caller) ?? 0) + sum.calls);
    }
  }
  return { reservations: rows, cooldownUsage: windows, today: merged };
}
