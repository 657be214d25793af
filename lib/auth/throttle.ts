import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
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
 * checked: concurrent guesses cannot all slip under the limit. Returns each key's count in the
 * current window, this attempt included. A window starts at the first failure and a key past it
 * starts over at 1.
 */
export async function chargeAttempt(db: Db, keys: string[], now: Date, policy: ThrottlePolicy): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
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
    .returning({ key: signInFailures.key, failures: signInFailures.failures });
  return new Map(rows.map((r) => [r.key, r.failures]));
}

export type ThrottleDecision = { refuse: boolean; delayMs: number };

/**
 * What an attempt's counts allow. An address past its limit is refused: those are its own
 * failures. An account past its limit is refused only to an address that has failed itself
 * recently, so no number of failures from elsewhere (or from spoofed addresses) keeps a member
 * with the right password out; everyone else is only slowed. An unknown address (no trusted proxy)
 * cannot show a clean record, but refusing it would let anyone lock staff out, so it is slowed.
 */
export function decideAttempt(params: { account: number; address: number | null }, policy: ThrottlePolicy): ThrottleDecision {
  const addressPrior = params.address === null ? 0 : params.address - 1;
  const addressOver = params.address !== null && isOverLimit(params.address, policy);
  const accountOver = isOverLimit(params.account, policy) && addressPrior > 0;
  return {
    refuse: addressOver || accountOver,
    delayMs: Math.max(failureDelayMs(params.account, policy), failureDelayMs(params.address ?? 0, policy)),
  };
}

export type SignInFailureRow = { key: string; failures: number; firstAt: Date; lastAt: Date; overLimit: boolean };

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

/** Counts in the current window, newest first, for admins to see who is failing or locked out. */
export async function listSignInFailures(db: Db, params: { now?: Date; policy?: ThrottlePolicy; limit?: number } = {}): Promise<SignInFailureRow[]> {
  const policy = params.policy ?? defaultThrottlePolicy;
  const since = new Date((params.now ?? new Date()).getTime() - policy.windowMs);
  const rows = await db
    .select()
    .from(signInFailures)
    .where(and(gt(signInFailures.firstAt, since), gt(signInFailures.failures, 0)))
    .orderBy(desc(signInFailures.lastAt), asc(signInFailures.key))
    .limit(params.limit ?? 100);
  return rows.map((r) => ({ ...r, overLimit: isOverLimit(r.failures, policy) }));
}
