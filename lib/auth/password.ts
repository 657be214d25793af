import { randomBytes } from "node:crypto";
import bcrypt from "bcryptjs";
import { InputError } from "@/lib/errors";

/** bcrypt work factor in production. Tests pass a lower cost to stay fast. */
export const PRODUCTION_BCRYPT_COST = 12;

export const MIN_PASSWORD_LENGTH = 12;
// bcrypt reads only the first 72 bytes; a longer password would silently lose its tail.
export const MAX_PASSWORD_BYTES = 72;

export function checkPasswordPolicy(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw InputError.of(`password must be at least ${MIN_PASSWORD_LENGTH} characters, got ${password.length}`);
  }
  const bytes = Buffer.byteLength(password, "utf8");
  if (bytes > MAX_PASSWORD_BYTES) {
    throw InputError.of(`password must be at most ${MAX_PASSWORD_BYTES} bytes, got ${bytes}`);
  }
}

export async function hashPassword(password: string, cost: number = PRODUCTION_BCRYPT_COST): Promise<string> {
  checkPasswordPolicy(password);
  return bcrypt.hash(password, cost);
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

/** A random password for new accounts: 20 characters of URL-safe base64 (120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString("base64url");
}

// Compared against when the account does not exist, so a missing account costs the same time as
// a wrong password and response timing does not reveal which emails are staff.
const dummyHashes = new Map<number, Promise<string>>();
export function timingDummyHash(cost: number = PRODUCTION_BCRYPT_COST): Promise<string> {
  let hash = dummyHashes.get(cost);
  if (!hash) {
    hash = bcrypt.hash(generatePassword(), cost);
    dummyHashes.set(cost, hash);
  }
  return hash;
}
