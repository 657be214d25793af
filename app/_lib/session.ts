import { getServerSession } from "next-auth";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { z } from "zod";
import { hasRole, roles, type Role } from "@/lib/auth/roles";
import type { SessionStaff } from "@/lib/auth/session-staff";
import { authOptions } from "./auth-options";

export type { SessionStaff } from "@/lib/auth/session-staff";

const SessionShape = z.object({
  staff: z.object({ id: z.number().int().positive(), email: z.string(), role: z.enum(roles) }),
});

/**
 * The signed-in staff member, or null. getServerSession runs our jwt callback, which re-reads the
 * staff row: a disabled member or a stale session version yields null, and the role is the one
 * in the database now. Cached per request so a layout and its page share one lookup.
 */
export const getSessionStaff = cache(async (): Promise<SessionStaff | null> => {
  const session = await getServerSession(authOptions());
  const parsed = SessionShape.safeParse(session);
  return parsed.success ? parsed.data.staff : null;
});

/** For server components: sends visitors to sign in, and staff without the role to /forbidden. */
export async function requirePageRole(min: Role): Promise<SessionStaff> {
  const staff = await getSessionStaff();
  if (!staff) redirect(`/login?next=${encodeURIComponent(await currentPath())}`);
  if (!hasRole(staff.role, min)) redirect(`/forbidden?need=${min}`);
  return staff;
}

// proxy.ts records the path it saw so a page can send the visitor back to it after sign-in.
async function currentPath(): Promise<string> {
  const path = (await headers()).get("x-ceilings-path");
  return path && path.startsWith("/") && !path.startsWith("//") ? path : "/";
}
