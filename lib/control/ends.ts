import { z } from "zod";
import { formatUtc } from "@/lib/format";

/**
 * The longest a temporary change may last, on every path: a raise with an end, an override that
 * ends by itself. Longer is a lasting change, asked as one.
 */
export const MAX_END_SECONDS = 31 * 24 * 60 * 60;

/**
 * When an override ends, in a catalog file: an instant with its offset ("2026-12-05T10:00:00Z");
 * absent, it lasts until removed. One past its end has ended: a file naming it changes nothing.
 */
export const OverrideUntil = z.iso.datetime({ offset: true, error: "until must be an instant with its offset, e.g. 2026-12-05T10:00:00Z" }).optional();

/** Whether two ends are the same instant (absent: lasting). */
export function sameEnd(a: string | Date | null | undefined, b: string | Date | null | undefined): boolean {
  const at = (x: string | Date | null | undefined) => (x === null || x === undefined ? null : new Date(x).getTime());
  return at(a) === at(b);
}

/** Whether an end is past (an override that ended binds nothing). */
export function hasEnded(until: string | Date | null | undefined, now = Date.now()): boolean {
  return until !== null && until !== undefined && new Date(until).getTime() <= now;
}

/** " until 2026-12-05 03:00 UTC" for an override that ends by itself; "" for a lasting one. */
export function untilText(until: string | Date | null | undefined): string {
  return until === null || until === undefined ? "" : ` until ${formatUtc(new Date(until))}`;
}
