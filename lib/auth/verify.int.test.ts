import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { signInFailures } from "@/db/schema/sign-in-failures";
import { staff } from "@/db/schema/staff";
import { hashPassword } from "./password";
import { defaultThrottlePolicy, listSignInFailures } from "./throttle";
import { GENERIC_SIGN_IN_ERROR, verifyCredentials, type VerifyOptions } from "./verify";

const PASSWORD = "correct horse battery";
const COST = 4;

describe.skipIf(skipWithoutDatabase())("verifyCredentials on Postgres", () => {
  const t = useTestDatabase("auth_verify");
  let clock: Date;
  let delays: number[];
  const options = (): VerifyOptions => ({
    now: () => clock,
    sleep: async (ms) => {
      delays.push(ms);
    },
    bcryptCost: COST,
  });

  beforeAll(async () => {
    const passwordHash = await hashPassword(PASSWORD, COST);
    await t.db.insert(staff).values([
      { email: "ann@example.com", role: "admin", passwordHash },
      { email: "bo@example.com", role: "viewer", passwordHash },
      { email: "cy@example.com", role: "operator", passwordHash, disabledAt: new Date() },
    ]);
  });
  beforeEach(async () => {
    await t.db.delete(signInFailures);
    clock = new Date("2026-03-01T12:00:00Z");
    delays = [];
  });

  const attempt = (email: string, password: string, address: string | null = "198.51.100.1") =>
    verifyCredentials(t.db, { email, password, address }, options());

  it("signs in with the right password, whatever the email's case", async () => {
    const result = await attempt(" Ann@Example.COM ", PASSWORD);
    expect(result).toMatchObject({ ok: true, staff: { email: "ann@example.com", role: "admin", sessionVersion: 1 } });
    expect(delays).toEqual([]);
  });

  it("answers a wrong password, an unknown email and a disabled account identically", async () => {
    const results = [
      await attempt("ann@example.com", "wrong password!!"),
      await attempt("nobody@example.com", PASSWORD),
      await attempt("cy@example.com", PASSWORD),
    ];
    for (const r of results) expect(r).toMatchObject({ ok: false, error: GENERIC_SIGN_IN_ERROR });
    expect(results.map((r) => (r.ok ? "ok" : r.reason))).toEqual(["invalid", "invalid", "disabled"]);
  });

  it("slows each further failure down", async () => {
    for (let i = 0; i < 4; i++) await attempt("ann@example.com", "wrong password!!", `203.0.113.${i}`);
    expect(delays).toEqual([250, 500, 1000, 2000]);
  });

  it("never lets failures from other addresses refuse the right password from a clean address", async () => {
    // Six wrong passwords from six addresses (spoofed or real): the account is past its limit.
    for (let i = 0; i < 6; i++) {
      expect(await attempt("bo@example.com", "wrong password!!", `203.0.113.${i}`)).toMatchObject({ reason: "invalid" });
    }
    expect(await attempt("bo@example.com", PASSWORD, "192.0.2.50")).toMatchObject({ ok: true });
    // With no trusted proxy the address is unknown for everyone: slowed, never locked out.
    for (let i = 0; i < 8; i++) await attempt("ann@example.com", "wrong password!!", null);
    expect(await attempt("ann@example.com", PASSWORD, null)).toMatchObject({ ok: true });
  });

  it("refuses an address that failed itself while its account is past the limit, until the window passes", async () => {
    for (let i = 0; i < 5; i++) await attempt("bo@example.com", "wrong password!!", `203.0.113.${i}`);
    // 203.0.113.0 has a failure of its own: it is refused even with the right password.
    expect(await attempt("bo@example.com", PASSWORD, "203.0.113.0")).toMatchObject({ ok: false, reason: "throttled" });
    // Other accounts are untouched.
    expect(await attempt("ann@example.com", PASSWORD, "203.0.113.0")).toMatchObject({ ok: true });
    clock = new Date(clock.getTime() + defaultThrottlePolicy.windowMs + 1000);
    expect(await attempt("bo@example.com", PASSWORD, "203.0.113.0")).toMatchObject({ ok: true });
  });

  it("slows failures on a locked account from fresh addresses with the account's delay", async () => {
    for (let i = 0; i < 8; i++) await attempt("bo@example.com", "wrong password!!", `203.0.113.${i}`);
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000, 4000]);
  });

  it("locks an address after five failures across accounts, leaving other addresses alone", async () => {
    const address = "198.51.100.77";
    for (const email of ["a1@example.com", "a2@example.com", "a3@example.com", "a4@example.com", "a5@example.com"]) {
      await attempt(email, "guess guess guess", address);
    }
    expect(await attempt("ann@example.com", PASSWORD, address)).toMatchObject({ ok: false, reason: "throttled" });
    expect(await attempt("ann@example.com", PASSWORD, "198.51.100.78")).toMatchObject({ ok: true });
  });

  it("a success clears the account's count but gives the address back only its own attempt", async () => {
    await attempt("ann@example.com", "wrong password!!", "192.0.2.9");
    await attempt("ann@example.com", "wrong password!!", "192.0.2.9");
    expect(await attempt("ann@example.com", PASSWORD, "192.0.2.9")).toMatchObject({ ok: true });
    const rows = await t.db.select().from(signInFailures);
    expect(rows.find((r) => r.key === "account:ann@example.com")).toBeUndefined();
    expect(rows.find((r) => r.key === "address:192.0.2.9")?.failures).toBe(2);
  });

  it("counts concurrent guesses exactly: only five of twenty from one address reach the password check", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(`guess${i}@example.com`, `wrong password ${i}`, "10.0.0.1")));
    const reasons = results.map((r) => (r.ok ? "ok" : r.reason));
    expect(reasons.filter((r) => r === "invalid")).toHaveLength(5);
    expect(reasons.filter((r) => r === "throttled")).toHaveLength(15);
    const [row] = await t.db.select().from(signInFailures).where(eq(signInFailures.key, "address:10.0.0.1"));
    expect(row?.failures).toBe(20);
  });

  it("shows admins who is failing and who is locked out", async () => {
    for (let i = 0; i < 6; i++) await attempt("bo@example.com", "wrong password!!", "203.0.113.9");
    const rows = await listSignInFailures(t.db, { now: clock });
    expect(rows.map((r) => [r.key, r.failures, r.overLimit])).toEqual([
      ["account:bo@example.com", 6, true],
      ["address:203.0.113.9", 6, true],
    ]);
  });
});
