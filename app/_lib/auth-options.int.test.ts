import { eq } from "drizzle-orm";
import type { JWT } from "next-auth/jwt";
import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { staff } from "@/db/schema/staff";
import { addStaff, changeStaffRole, defaultSessionLifetimes, disableStaff, enableStaff, setStaffPassword } from "@/lib/auth";
import type { AuditActor } from "@/lib/audit/record";
import { authorizeStaff, endSessionOfToken, refreshSessionToken, SessionEndedError, sessionFromToken, type AuthDeps } from "./auth-options";

const PASSWORD = "correct horse battery";
const cli: AuditActor = { type: "cli", name: "test" };
const headers = { "x-forwarded-for": "198.51.100.20" };
let clock = new Date();
const minutes = (n: number) => n * 60_000;

describe.skipIf(skipWithoutDatabase())("sessions checked against the database on every request", () => {
  const t = useTestDatabase("auth_sessions");
  let deps: AuthDeps;
  beforeAll(async () => {
    deps = {
      db: async () => t.db,
      secret: "x".repeat(40),
      verifyOptions: { bcryptCost: 4, sleep: async () => {} },
      lifetimes: defaultSessionLifetimes,
      now: () => clock,
    };
    // Keeps an admin around so demotions and disables in these tests are allowed.
    await addStaff(t.db, { email: "root@example.com", role: "admin", password: PASSWORD, actor: cli, bcryptCost: 4 });
  });

  /** Signs in the way the credentials provider does, and returns the token the cookie would hold. */
  async function signIn(email: string, password = PASSWORD): Promise<JWT> {
    const user = await authorizeStaff(deps, { email, password }, headers);
    if (!user) throw new Error(`sign-in refused for ${email}`);
    return refreshSessionToken(deps, { email }, user);
  }
  const check = (token: JWT) => refreshSessionToken(deps, token);
  const staffOf = (token: JWT) => sessionFromToken({ expires: "2099-01-01T00:00:00Z" }, token).staff;

  it("signs in and exposes id, email and role", async () => {
    await addStaff(t.db, { email: "ops@example.com", role: "operator", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await signIn("ops@example.com");
    expect(staffOf(await check(token))).toMatchObject({ email: "ops@example.com", role: "operator" });
    expect(await authorizeStaff(deps, { email: "ops@example.com", password: "wrong password!!" }, headers)).toBeNull();
    expect(await authorizeStaff(deps, { email: "ops@example.com" }, headers)).toBeNull();
  });

  it("rejects a disabled member's open session on the next check, even after re-enabling", async () => {
    await addStaff(t.db, { email: "gone@example.com", role: "admin", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await check(await signIn("gone@example.com"));
    await disableStaff(t.db, { email: "gone@example.com", actor: cli });
    await expect(check(token)).rejects.toThrow(SessionEndedError);
    expect(await authorizeStaff(deps, { email: "gone@example.com", password: PASSWORD }, headers)).toBeNull();
    await enableStaff(t.db, { email: "gone@example.com", actor: cli });
    await expect(check(token)).rejects.toThrow(SessionEndedError);
  });

  it("rejects a session whose member is marked disabled, even if the version was not bumped", async () => {
    await addStaff(t.db, { email: "flag@example.com", role: "viewer", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await signIn("flag@example.com");
    await t.db.update(staff).set({ disabledAt: new Date() }).where(eq(staff.email, "flag@example.com"));
    await expect(check(token)).rejects.toThrow(SessionEndedError);
  });

  it("ends a demoted member's session; signing in again gives the lower role", async () => {
    await addStaff(t.db, { email: "demo@example.com", role: "admin", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await signIn("demo@example.com");
    expect(staffOf(token)?.role).toBe("admin");
    await changeStaffRole(t.db, { email: "demo@example.com", role: "viewer", actor: cli });
    await expect(check(token)).rejects.toThrow(SessionEndedError);
    expect(staffOf(await signIn("demo@example.com"))?.role).toBe("viewer");
  });

  it("reads the role from the database on every check, not from the token", async () => {
    await addStaff(t.db, { email: "rise@example.com", role: "viewer", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await signIn("rise@example.com");
    await changeStaffRole(t.db, { email: "rise@example.com", role: "operator", actor: cli });
    const promoted = await check(token);
    expect(staffOf(promoted)?.role).toBe("operator");
    // Even a role change that skipped the version bump shows on the next check.
    await t.db.update(staff).set({ role: "viewer" }).where(eq(staff.email, "rise@example.com"));
    expect(staffOf(await check(promoted))?.role).toBe("viewer");
  });

  it("ends every session after a password change", async () => {
    await addStaff(t.db, { email: "pw@example.com", role: "viewer", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const token = await signIn("pw@example.com");
    await setStaffPassword(t.db, { email: "pw@example.com", password: "a brand new password", actor: cli, bcryptCost: 4 });
    await expect(check(token)).rejects.toThrow(SessionEndedError);
  });

  it("refuses a token without staff claims", async () => {
    await expect(check({ email: "root@example.com" })).rejects.toThrow(SessionEndedError);
    expect(staffOf({ email: "root@example.com", staffId: 1, sv: 1, role: "superuser" })).toBeUndefined();
  });

  it("ends the session on sign-out: the same token, replayed, is refused", async () => {
    clock = new Date();
    const token = await check(await signIn("root@example.com"));
    const other = await signIn("root@example.com");
    await endSessionOfToken(deps, token);
    await expect(check(token)).rejects.toThrow(SessionEndedError);
    // Only that session: the member's other sign-in goes on.
    expect(staffOf(await check(other))?.email).toBe("root@example.com");
  });

  it("ends a session idle for longer than the idle lifetime", async () => {
    clock = new Date();
    const token = await signIn("root@example.com");
    clock = new Date(clock.getTime() + defaultSessionLifetimes.idleMs - minutes(1));
    const kept = await check(token);
    clock = new Date(clock.getTime() + defaultSessionLifetimes.idleMs - minutes(1));
    // Each request counts as activity: a session in use stays open.
    await check(kept);
    clock = new Date(clock.getTime() + defaultSessionLifetimes.idleMs + minutes(1));
    await expect(check(kept)).rejects.toThrow(SessionEndedError);
  });

  it("ends a session past its absolute lifetime however busy it is", async () => {
    const start = new Date();
    clock = start;
    let token = await signIn("root@example.com");
    while (clock.getTime() - start.getTime() < defaultSessionLifetimes.absoluteMs - minutes(20)) {
      clock = new Date(clock.getTime() + minutes(15));
      token = await check(token);
    }
    clock = new Date(start.getTime() + defaultSessionLifetimes.absoluteMs + minutes(1));
    await expect(check(token)).rejects.toThrow(SessionEndedError);
  });

  it("refuses a token naming another member's session", async () => {
    clock = new Date();
    await addStaff(t.db, { email: "thief@example.com", role: "viewer", password: PASSWORD, actor: cli, bcryptCost: 4 });
    const victim = await signIn("root@example.com");
    const thief = await signIn("thief@example.com");
    await expect(check({ ...thief, sid: victim.sid })).rejects.toThrow(SessionEndedError);
  });
});
