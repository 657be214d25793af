// Lengths of time in milliseconds, and the UTC calendar day of an instant (every window is UTC).
// Reading and writing times for people is lib/format.ts; the windows themselves are
// lib/limits/windows.ts. No imports: client components use this file too.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** "2025-03-05": the UTC calendar day of an instant given in epoch milliseconds. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
