import type { ProviderDay } from "./types";

// A provider's day is its own: OpenAI, Anthropic and Twilio count UTC days, Postmark US Eastern.
// Ceilings does not move the provider's numbers; it counts its own charges over the provider's
// interval instead: day D in zone Z is [D 00:00 in Z, D+1 00:00 in Z), as instants. Across a
// daylight-saving change that interval is 23 or 25 hours long, exactly as the provider's is.

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** True for a name Intl knows as a time zone ("UTC", "America/New_York"). */
export function isTimeZone(zone: string): boolean {
  if (zone.trim() !== zone || zone === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isProviderDay(text: string): boolean {
  const m = DAY.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

/** The day after (or `n` days after) a day, calendar arithmetic in UTC. */
export function addDays(day: ProviderDay, n: number): ProviderDay {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** The calendar day an instant falls on in a zone. */
export function dayIn(instant: Date, zone: string): ProviderDay {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(instant);
}

/** Minutes the zone is ahead of UTC at an instant (New York in winter: −300). */
function offsetMinutes(instant: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/** The instant a day starts in a zone: its local midnight. */
export function startOfDay(day: ProviderDay, zone: string): Date {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  // Midnight local is utcMidnight − offset; the offset at that instant may differ from the guess
  // across a change, so correct once with the offset in force there.
  let guess = utcMidnight - offsetMinutes(new Date(utcMidnight), zone) * 60_000;
  guess = utcMidnight - offsetMinutes(new Date(guess), zone) * 60_000;
  return new Date(guess);
}

/** [start, end) of a provider day as instants. */
export function dayBounds(day: ProviderDay, zone: string): { start: Date; end: Date } {
  return { start: startOfDay(day, zone), end: startOfDay(addDays(day, 1), zone) };
}

/**
 * The complete days a pull asks for: the `count` days before today in the provider's zone, oldest
 * first. Today is never complete, so it is never compared.
 */
export function completeDays(now: Date, zone: string, count: number): ProviderDay[] {
  const today = dayIn(now, zone);
  const days: ProviderDay[] = [];
  for (let i = count; i >= 1; i--) days.push(addDays(today, -i));
  return days;
}
