import { InputError } from "@/lib/errors";
import { DAY_MS } from "@/lib/time";
import type { CeilingWindow } from "@/lib/vocabulary";

// The windows a ceiling counts in. Enforcement computes the same windows in SQL; these pure
// functions serve the dashboard, the demo seed and tests, and must keep identical semantics:
// - utc_day: [UTC midnight, next UTC midnight)
// - billing_month: [billing day 00:00 UTC, the same day of the next month), billing day 1..28
// - first_hit: [the first hit, first hit + windowSeconds), a cooldown that starts when it is used

export type WindowSpan = { start: Date; end: Date };

export type WindowParams = {
  /** Day of the month a billing month starts on, 1..28 (every month has a 28th). */
  billingDay?: number;
  /** Length of a first_hit window; required for first_hit. */
  windowSeconds?: number | null;
};

function checkInstant(at: Date): void {
  if (Number.isNaN(at.getTime())) throw InputError.of("window instant is not a valid date");
}

export function utcDayWindow(at: Date): WindowSpan {
  checkInstant(at);
  const start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  return { start: new Date(start), end: new Date(start + DAY_MS) };
}

export function billingMonthWindow(at: Date, billingDay: number): WindowSpan {
  checkInstant(at);
  if (!Number.isInteger(billingDay) || billingDay < 1 || billingDay > 28) {
    throw InputError.of(`billing day must be a whole number from 1 to 28, got ${billingDay}`);
  }
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  // Before this month's billing day, the window began on the billing day of the previous month.
  const startMonth = at.getTime() >= Date.UTC(year, month, billingDay) ? month : month - 1;
  // Date.UTC normalises month -1 and 12 into the neighbouring years.
  return {
    start: new Date(Date.UTC(year, startMonth, billingDay)),
    end: new Date(Date.UTC(year, startMonth + 1, billingDay)),
  };
}

export function firstHitWindow(at: Date, windowSeconds: number): WindowSpan {
  checkInstant(at);
  if (!Number.isInteger(windowSeconds) || windowSeconds <= 0) {
    throw InputError.of(`a first_hit window needs a whole positive number of seconds, got ${windowSeconds}`);
  }
  return { start: new Date(at.getTime()), end: new Date(at.getTime() + windowSeconds * 1000) };
}

/** The window of `window` kind that contains `at` (for first_hit: the window a hit at `at` opens). */
export function windowFor(window: CeilingWindow, params: WindowParams, at: Date): WindowSpan {
  switch (window) {
    case "utc_day":
      return utcDayWindow(at);
    case "billing_month":
      return billingMonthWindow(at, params.billingDay ?? 1);
    case "first_hit":
      if (params.windowSeconds == null) throw InputError.of("a first_hit window needs windowSeconds");
      return firstHitWindow(at, params.windowSeconds);
  }
}
