import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export class AuthSecretError extends Error {
  override name = "AuthSecretError";
}

const MIN_SECRET_LENGTH = 32;

/**
 * The key that signs session tokens. NEXTAUTH_SECRET wins. With neither it nor DATABASE_URL set,
 * this is the zero-config embedded demo: a random secret is made once and kept in
 * `<dataDir>/auth-secret` (mode 600) so sessions survive restarts. Against a real database a
 * missing secret is a start-up error: a made-up one would differ between servers.
 */
export function resolveAuthSecret(params: { nextAuthSecret: string | undefined; databaseUrl: string | undefined; dataDir: string }): string {
  if (params.nextAuthSecret) return params.nextAuthSecret;
  if (params.databaseUrl) {
    throw new AuthSecretError(
      "NEXTAUTH_SECRET is not set. With DATABASE_URL set, every server must share one session secret: " +
        "set NEXTAUTH_SECRET to at least 32 random characters (for example `openssl rand -base64 32`).",
    );
  }
  return demoSecret(path.resolve(params.dataDir, "auth-secret"));
}

function demoSecret(file: string): string {
  const existing = readSecret(file);
  if (existing !== null) return existing;
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // "wx" fails if another process wrote it first; then theirs is the one everybody uses.
    writeFileSync(file, randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Error && "code" in error && error.code === "EEXIST")) throw error;
  }
  const written = readSecret(file);
  if (written === null) throw new AuthSecretError(`could not read the session secret just written to ${file}`);
  return written;
}

function readSecret(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return null;
    throw error;
  }
  if (text.length < MIN_SECRET_LENGTH) {
    throw new AuthSecretError(`${file} holds a session secret shorter than ${MIN_SECRET_LENGTH} characters; delete it to make a new one`);
  }
  return text;
}
