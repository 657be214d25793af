import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuthSecretError, resolveAuthSecret } from "./secret";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ceilings-secret-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("resolveAuthSecret", () => {
  it("uses NEXTAUTH_SECRET when it is set", () => {
    const secret = "s".repeat(40);
    expect(resolveAuthSecret({ nextAuthSecret: secret, databaseUrl: "postgres://x/y", dataDir: tempDir() })).toBe(secret);
  });

  it("refuses to start against a real database without a secret", () => {
    expect(() => resolveAuthSecret({ nextAuthSecret: undefined, databaseUrl: "postgres://x/y", dataDir: tempDir() })).toThrow(AuthSecretError);
  });

  it("makes a demo secret once, private to its owner, and reuses it", () => {
    const dataDir = path.join(tempDir(), "nested");
    const first = resolveAuthSecret({ nextAuthSecret: undefined, databaseUrl: undefined, dataDir });
    const file = path.join(dataDir, "auth-secret");
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(file, "utf8")).toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(resolveAuthSecret({ nextAuthSecret: undefined, databaseUrl: undefined, dataDir })).toBe(first);
  });

  it("refuses a truncated secret file rather than sign sessions with it", () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, "auth-secret"), "short");
    expect(() => resolveAuthSecret({ nextAuthSecret: undefined, databaseUrl: undefined, dataDir })).toThrow(/shorter than 32/);
  });
});
