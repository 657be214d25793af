import { hash, randomBytes } from "node:crypto";

// An API key reads `ck_<prefix>_<secret>`. The prefix is public (it names the key in the dashboard
// and in logs); the secret is 32 random bytes. Only the SHA-256 of the whole token is stored, and a
// request is matched by that hash, so no secret is ever compared byte by byte.

const PREFIX_LENGTH = 8;
const SECRET_BYTES = 32;
const TOKEN_PATTERN = /^ck_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;
const PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

export type GeneratedToken = { token: string; prefix: string; secretHash: string };

/** SHA-256 of the token, hex. One-shot: a Hash object a request cost four times as much (2.4 µs). */
export function hashToken(token: string): string {
  return hash("sha256", token, "hex");
}

function randomPrefix(): string {
  const bytes = randomBytes(PREFIX_LENGTH);
  let out = "";
  // 256 is not a multiple of 36: the slight bias is harmless for a public, non-secret label.
  for (const b of bytes) out += PREFIX_ALPHABET[b % PREFIX_ALPHABET.length];
  return out;
}

export function generateToken(): GeneratedToken {
  const prefix = randomPrefix();
  const token = `ck_${prefix}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
  return { token, prefix, secretHash: hashToken(token) };
}

/** The token's prefix when it has the shape of a key, else null. */
export function tokenPrefix(token: string): string | null {
  return TOKEN_PATTERN.exec(token)?.[1] ?? null;
}

export type BearerResult = { ok: true; token: string } | { ok: false; reason: "missing" | "malformed" };

/** Reads `Authorization: Bearer ck_...`; the scheme is case-insensitive as HTTP says. */
export function readBearer(header: string | null): BearerResult {
  if (header === null || header.trim() === "") return { ok: false, reason: "missing" };
  const match = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
  const token = match?.[1];
  if (!token || tokenPrefix(token) === null) return { ok: false, reason: "malformed" };
  return { ok: true, token };
}
