import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { signInFailures } from "@/db/schema/sign-in-failures";

export type ThrottlePolicy = {
  /** Attempts allowed per key within one window; the next one is refused until the window passes. */
  maxFailures: number;
  windowMs: number;
  /** Delay after the first failure, doubled for each further failure up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
};

export const defaultThrottlePolicy: ThrottlePolicy = {
  maxFailures: 5,
  windowMs: 15 * 60_000,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
};

export function accountKey(email: string): string {
  return `account:${email}`;
}

export function addressKey(address: string): string {
  return `address:${address}`;
}

/** The keys one attempt is counted against; an unknown address adds no shared "unknown" bucket. */
export function throttleKeys(email: string, address: string | null): string[] {
  const keys = [accountKey(email)];
  if (address) keys.push(addressKey(address));
  // A fixed order makes concurrent upserts lock rows in the same order, so they cannot deadlock.
  return keys.sort();
}

export function isOverLimit(attempts: number, policy: ThrottlePolicy): boolean {
  return attempts > policy.maxFailures;
}

/** How long to hold a failed answer back: grows with each failure so guessing gets slower. */
export function failureDelayMs(attempts: number, policy: ThrottlePolicy): number {
  if (attempts <= 0) return 0;
  const exponent = Math.min(attempts - 1, 30);
  return Math.min(policy.baseDelayMs * 2 ** exponent, policy.maxDelayMs);
}

/**
 * Counts one sign-in attempt against every key, in one statement, before the password is
 * checked: concurrent guesses cannot all slip under the limit. Returns the highest count in the
 * current window. A window starts at the first failure and a key past it starts over at 1.
 */
export async function chargeAttempt(db: Db, keys: string[], now: Date, policy: ThrottlePolicy): Promise<number> {
  if (keys.length === 0) return 0;
  const windowStart = new Date(now.getTime() - policy.windowMs).toISOString();
  const nowIso = now.toISOString();
  const expired = sql`${signInFailures.firstAt} <= ${windowStart}::timestamptz`;
  const rows = await db
    .insert(signInFailures)
    .values(keys.map((key) => ({ key, failures: 1, firstAt: now, lastAt: now })))
    .onConflictDoUpdate({
      target: signInFailures.key,
      set: {
        failures: sql`case when ${expired} then 1 else ${signInFailures.failures} + 1 end`,
        firstAt: sql`case when ${expired} then ${nowIso}::timestamptz else ${signInFailures.firstAt} end`,
        lastAt: now,
      },
    })
    .returning({ failures: signInFailures.failures });
  return Math.max(...rows.map((r) => r.failures));
}

/**
 * After a correct password: the account starts clean, while the address only gets this one
 * attempt back, so one valid account cannot launder a guessing run against others.
 */
export async function forgiveAttempt(db: Db, params: { account: string; address: string | null }): Promise<void> {
  await db.delete(signInFailures).where(eq(signInFailures.key, params.account));
  if (params.address) {
    await db
      .update(signInFailures)
      .set({ failures: sql`greatest(${signInFailures.failures} - 1, 0)` })
      .where(eq(signInFailures.key, params.address));
  }
}

/** Current counts, for tests and for staff to see who is locked out. */
export async function listSignInFailures(db: Db) {
  return db.select().from(signInFailures).orderBy(asc(signInFailures.key));
}
