import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staff } from "@/db/schema/staff";
import { PRODUCTION_BCRYPT_COST, timingDummyHash, verifyPassword } from "./password";
import type { AuthenticatedStaff } from "./session-staff";
import { accountKey, addressKey, chargeAttempt, decideAttempt, defaultThrottlePolicy, forgiveAttempt, throttleKeys, type ThrottlePolicy } from "./throttle";

/** The one message every failed sign-in gets, so an attacker learns nothing about why. */
export const GENERIC_SIGN_IN_ERROR = "Email or password is incorrect";

export type SignInFailureReason = "throttled" | "invalid" | "disabled";

export type VerifyResult =
  | { ok: true; staff: AuthenticatedStaff }
  // `reason` is for logs and tests only; it must never reach the person signing in.
  | { ok: false; error: typeof GENERIC_SIGN_IN_ERROR; reason: SignInFailureReason };

export type VerifyOptions = {
  policy?: ThrottlePolicy;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Cost of the hash compared against when the account is missing; match the stored hashes. */
  bcryptCost?: number;
};

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function verifyCredentials(
  db: Db,
  params: { email: string; password: string; address: string | null },
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const policy = options.policy ?? defaultThrottlePolicy;
  const sleep = options.sleep ?? realSleep;
  const now = (options.now ?? (() => new Date()))();
  const email = normalizeEmail(params.email);

  const counts = await chargeAttempt(db, throttleKeys(email, params.address), now, policy);
  const decision = decideAttempt(
    { account: counts.get(accountKey(email)) ?? 0, address: params.address ? (counts.get(addressKey(params.address)) ?? 0) : null },
    policy,
  );
  const fail = async (reason: SignInFailureReason): Promise<VerifyResult> => {
    await sleep(decision.delayMs);
    return { ok: false, error: GENERIC_SIGN_IN_ERROR, reason };
  };
  const dummy = () => timingDummyHash(options.bcryptCost ?? PRODUCTION_BCRYPT_COST);
  if (decision.refuse) {
    // The same bcrypt work as a real check, so a refusal does not answer faster than a guess.
    await verifyPassword(params.password, await dummy());
    return fail("throttled");
  }

  const [row] = await db.select().from(staff).where(eq(staff.email, email)).limit(1);
  const hash = row?.passwordHash ?? (await dummy());
  const matches = await verifyPassword(params.password, hash);
  if (!row || !matches) return fail("invalid");
  // Checked after the password so a disabled account answers exactly like a wrong password.
  if (row.disabledAt !== null) return fail("disabled");

  await forgiveAttempt(db, {
    account: accountKey(email),
    address: params.address ? addressKey(params.address) : null,
  });
  return {
    ok: true,
    staff: { id: row.id, email: row.email, role: row.role, sessionVersion: row.sessionVersion },
  };
}
