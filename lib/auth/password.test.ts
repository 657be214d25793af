import { InputError } from "@/lib/errors";
import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { generatePassword, hashPassword, PRODUCTION_BCRYPT_COST, timingDummyHash, verifyPassword } from "./password";

describe("passwords", () => {
  it("verifies the right password and rejects a wrong one", async () => {
    const hash = await hashPassword("correct horse battery", 4);
    expect(hash).not.toContain("correct horse battery");
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
    expect(await verifyPassword("correct horse batterz", hash)).toBe(false);
  });

  it("hashes at cost 12 unless a test asks for less", async () => {
    expect(PRODUCTION_BCRYPT_COST).toBe(12);
    expect(bcrypt.getRounds(await hashPassword("correct horse battery"))).toBe(12);
    expect(bcrypt.getRounds(await hashPassword("correct horse battery", 4))).toBe(4);
  });

  it("refuses passwords bcrypt would weaken: too short, or past 72 bytes", async () => {
    await expect(hashPassword("short", 4)).rejects.toThrow(InputError);
    await expect(hashPassword("é".repeat(37), 4)).rejects.toThrow("at most 72 bytes, got 74");
    await expect(hashPassword("x".repeat(72), 4)).resolves.toMatch(/^\$2/);
  });

  it("generates long, distinct passwords that pass the policy", async () => {
    const a = generatePassword();
    const b = generatePassword();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{20}$/);
    await expect(hashPassword(a, 4)).resolves.toBeTruthy();
  });
});

describe("timing of sign-in answers", () => {
  it("hashes the demo accounts at the cost of the dummy hash unknown emails are checked against", async () => {
    const { DEMO_BCRYPT_COST } = await import("@/lib/demo");
    expect(DEMO_BCRYPT_COST).toBe(PRODUCTION_BCRYPT_COST);
    expect(bcrypt.getRounds(await timingDummyHash())).toBe(DEMO_BCRYPT_COST);
  });
});
