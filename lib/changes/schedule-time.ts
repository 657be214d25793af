// When a scheduled change runs: pure, so the form, the worker and the tests agree. Times are UTC.

const DAY_MS = 24 * 60 * 60 * 1000;

export type TimeOfDay = { hour: number; minute: number };

/**
 * "HH:MM" on a 24-hour clock, two digits each: "09:05", "23:59". "24:00", "25:00", "9:5" and ""
 * are errors, not something to guess at: a night-time ceiling at the wrong hour costs money.
 */
export function parseTimeOfDay(raw: string): { ok: true; time: TimeOfDay; text: string } | { ok: false; error: string } {
  const text = raw.trim();
  if (text === "") return { ok: false, error: "the time of day is required: type it as HH:MM in UTC, such as 22:00" };
  const m = /^(\d{2}):(\d{2})$/.exec(text);
  if (!m) return { ok: false, error: `the time of day must be HH:MM in UTC with two digits each, such as 09:05; got '${text.slice(0, 20)}'` };
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  if (hour > 23) return { ok: false, error: `the hour must be 00 to 23, got '${text}'` };
  if (minute > 59) return { ok: false, error: `the minutes must be 00 to 59, got '${text}'` };
  return { ok: true, time: { hour, minute }, text };
}

/** The first time of day strictly after `now`: today's if it is still to come, else tomorrow's. */
export function nextAtTimeOfDay(time: TimeOfDay, now: Date): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), time.hour, time.minute);
  return new Date(today > now.getTime() ? today : today + DAY_MS);
}

/**
 * A daily schedule's next run after it ran at `runAt`: whole days on, strictly after `now`. Days
 * missed while no worker ran are skipped, not caught up: a night-time ceiling applies once.
 */
export function nextDailyRun(runAt: Date, now: Date): Date {
  const behind = Math.max(0, Math.floor((now.getTime() - runAt.getTime()) / DAY_MS));
  let next = runAt.getTime() + (behind + 1) * DAY_MS;
  if (next <= now.getTime()) next += DAY_MS;
  return new Date(next);
}

/** "HH:MM" of a time, in UTC: a daily schedule's time of day. */
export function timeOfDayOf(d: Date): string {
  return d.toISOString().slice(11, 16);
}

/**
 * True when the calendar fields name a real moment: Date.UTC rolls 2027-02-30 over to March 2 and
 * 24:00 over to the next day without a word, so a date is real only if it reads back unchanged.
 */
export function isRealDateTime(year: number, month: number, day: number, hour: number, minute: number, second = 0): boolean {
  const d = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === month - 1 &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second
  );
}

/** The calendar part of an ISO-like text ("2027-02-30T10:00", "2026-12-31T24:00:00Z"): null when it is not one, else whether it is real. */
export function calendarTextIsReal(text: string): boolean | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  return isRealDateTime(y ?? 0, mo ?? 0, d ?? 0, h ?? 0, mi ?? 0, s ?? 0);
}
