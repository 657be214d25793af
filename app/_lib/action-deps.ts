import { revalidatePath } from "next/cache";
import { type Db, getDb } from "@/db/client";
import { getSessionStaff, type SessionStaff } from "./session";

/**
 * What every server action core needs from the outside. Actions pass `liveActionDeps`; tests pass
 * a real test database and a chosen staff member instead of a session.
 */
export type ActionDeps = {
  session: () => Promise<SessionStaff | null>;
  db: () => Promise<Db>;
  revalidate: (path: string, type?: "layout" | "page") => void;
  /** bcrypt work factor for passwords set by an action; tests lower it, production leaves it unset. */
  bcryptCost?: number;
};

export const liveActionDeps: ActionDeps = {
  session: getSessionStaff,
  db: getDb,
  revalidate: (path, type) => revalidatePath(path, type),
};
