import { randomBytes } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staffSessions } from "@/db/schema/staff-sessions";

// Server-side session records behind the JWT cookie. A JWT alone cannot be revoked: sign-out ends
// the row, and every request checks the row is open, seen within the idle lifetime and younger
// than the absolute one (ASVS 7.3), then marks it seen.

export type SessionLifetimes = { idleMs: number; absoluteMs: number };

export const defaultSessionLifetimes: SessionLifetimes = { idleMs: 30 * 60_000, absoluteMs: 12 * 60 * 60_000 };

/** Opens a session for a member who just signed in; returns its id for the cookie. */
export async function startSession(db: Db, params: { staffId: number; now?: Date }): Promise<string> {
  const id = randomBytes(24).toString("base64url");
  const now = params.now ?? new Date();
  await db.insert(staffSessions).values({ id, staffId: params.staffId, createdAt: now, lastSeenAt: now });
  return id;
}

/**
 * Marks an open, live session seen and returns its member's id; null when it was ended, idled
 * out or outlived its absolute lifetime. One statement, so the check and the touch cannot race.
 */
export async function touchSession(db: Db, params: { id: string; now?: Date; lifetimes?: SessionLifetimes }): Promise<number | null> {
  const now = params.now ?? new Date();
  const { idleMs, absoluteMs } = params.lifetimes ?? defaultSessionLifetimes;
  const [row] = await db
    .update(staffSessions)
    .set({ lastSeenAt: now })
    .where(
      and(
        eq(staffSessions.id, params.id),
        isNull(staffSessions.endedAt),
        gt(staffSessions.lastSeenAt, new Date(now.getTime() - idleMs)),
        gt(staffSessions.createdAt, new Date(now.getTime() - absoluteMs)),
      ),
    )
    .returning({ staffId: staffSessions.staffId });
  return row?.staffId ?? null;
}

/** Sign-out: the session ends here, whatever copy of the cookie survives in a browser. */
export async function endSession(db: Db, id: string, now: Date = new Date()): Promise<void> {
  await db
    .update(staffSessions)
    .set({ endedAt: now })
    .where(and(eq(staffSessions.id, id), isNull(staffSessions.endedAt)));
}
