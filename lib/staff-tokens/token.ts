import { randomBytes } from "node:crypto";
import { hashToken } from "@/lib/api-keys/token";

// A personal token reads `cst_<prefix>_<secret>`: `cst` (Ceilings staff token) so it is never
// taken for an API key (`ck_`), which spends, while this one proves a person. The prefix is
// public (the dashboard lists it); only the SHA-256 of the whole token is stored and matched.

const SECRET_BYTES = 32;
const PATTERN = /^cst_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** The environment variable the command line reads a personal token from. */
export const STAFF_TOKEN_ENV = "CEILINGS_STAFF_TOKEN";

export type GeneratedStaffToken = { token: string; prefix: string; secretHash: string };

export function generateStaffToken(): GeneratedStaffToken {
  let prefix = "";
  // 256 is not a multiple of 36: the slight bias is harmless for a public label.
  for (const b of randomBytes(8)) prefix += ALPHABET[b % ALPHABET.length];
  const token = `cst_${prefix}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
  return { token, prefix, secretHash: hashToken(token) };
}

/** The token's prefix when it has the shape of a personal token, else null. */
export function staffTokenPrefix(token: string): string | null {
  return PATTERN.exec(token)?.[1] ?? null;
}

export { hashToken };
