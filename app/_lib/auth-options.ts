import type { NextAuthOptions, Session, User } from "next-auth";
import type { JWT } from "next-auth/jwt";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import type { Db } from "@/db/client";
import { getDb } from "@/db/client";
import {
  clientAddress,
  endSession,
  loadSessionStaff,
  resolveAuthSecret,
  startSession,
  touchSession,
  verifyCredentials,
  type SessionLifetimes,
  type SessionStaff,
  type VerifyOptions,
} from "@/lib/auth";
import { isRole } from "@/lib/auth/roles";
import { MAX_STAFF_EMAIL_LENGTH } from "@/lib/auth/staff-input";
import { env } from "@/lib/env";
import { logError, logWarning } from "@/lib/log/redact";

/** Thrown by the jwt callback when the staff row no longer backs the session; next-auth then clears it. */
export class SessionEndedError extends Error {
  override name = "SessionEndedError";
}

const Credentials = z.object({
  email: z.string().min(1).max(MAX_STAFF_EMAIL_LENGTH),
  password: z.string().min(1).max(1024),
});

// What our session token carries beyond next-auth's own claims. The role is deliberately absent:
// it is read from the database on every request.
// `sid` names the server-side session row, which sign-out ends.
const TokenClaims = z.object({ staffId: z.number().int().positive(), sv: z.number().int(), sid: z.string().min(1).max(100) });
const UserClaims = TokenClaims.omit({ sid: true });

export type AuthDeps = {
  db: () => Promise<Db>;
  secret: string;
  verifyOptions?: VerifyOptions;
  /** Idle and absolute session lifetimes; the cookie lasts the absolute one. */
  lifetimes: SessionLifetimes;
  now?: () => Date;
  /** TRUSTED_PROXY_HOPS: how many proxies in front may be believed about the client address. */
  trustedProxyHops?: number;
};

/** The credentials check behind the sign-in form: null for every failure, as next-auth expects. */
export async function authorizeStaff(deps: AuthDeps, credentials: unknown, headers: Record<string, unknown>): Promise<User | null> {
  const parsed = Credentials.safeParse(credentials);
  if (!parsed.success) return null;
  const address = clientAddress(headers, deps.trustedProxyHops ?? 0);
  const result = await verifyCredentials(await deps.db(), { ...parsed.data, address }, deps.verifyOptions);
  if (!result.ok) return null;
  const { id, email, sessionVersion } = result.staff;
  return { id: String(id), email, sessionVersion };
}

/**
 * The jwt callback: runs on sign-in (with `user`) and on every session read. It re-reads the
 * staff row each time and throws to end a session whose member is disabled, gone, or whose session
 * version moved on; the role it stores is the one in the database now.
 */
export async function refreshSessionToken(deps: AuthDeps, token: JWT, user?: User): Promise<JWT> {
  const db = await deps.db();
  const now = deps.now?.() ?? new Date();
  let claims: TokenClaims;
  if (user) {
    const fresh = UserClaims.safeParse({ staffId: Number(user.id), sv: user.sessionVersion });
    if (!fresh.success) throw new SessionEndedError("signed-in user lacks staff claims");
    claims = { ...fresh.data, sid: await startSession(db, { staffId: fresh.data.staffId, now }) };
  } else {
    const parsed = TokenClaims.safeParse(token);
    if (!parsed.success) throw new SessionEndedError("session token lacks staff claims");
    claims = parsed.data;
    const owner = await touchSession(db, { id: claims.sid, now, lifetimes: deps.lifetimes });
    if (owner !== claims.staffId) throw new SessionEndedError(`session of staff ${claims.staffId} was signed out, idled out or is too old`);
  }
  const current = await loadSessionStaff(db, { id: claims.staffId, sessionVersion: claims.sv });
  if (!current) throw new SessionEndedError(`staff ${claims.staffId} is disabled, gone, or their session version moved on`);
  return { ...token, email: current.email, staffId: current.id, sv: current.sessionVersion, sid: claims.sid, role: current.role };
}

type TokenClaims = z.infer<typeof TokenClaims>;

/** The signOut event: ends the server-side session so a saved copy of the cookie opens nothing. */
export async function endSessionOfToken(deps: AuthDeps, token: JWT | null | undefined): Promise<void> {
  const claims = TokenClaims.safeParse(token);
  if (claims.success) await endSession(await deps.db(), claims.data.sid, deps.now?.() ?? new Date());
}

/** The session callback: exposes `staff` only when the token carries everything it needs. */
export function sessionFromToken(session: Session, token: JWT): Session & { staff?: SessionStaff } {
  const role = isRole(token.role) ? token.role : null;
  const claims = TokenClaims.safeParse(token);
  if (!claims.success || role === null || typeof token.email !== "string") return { expires: session.expires };
  return { ...session, staff: { id: claims.data.staffId, email: token.email, role } };
}

export function buildAuthOptions(deps: AuthDeps): NextAuthOptions {
  return {
    secret: deps.secret,
    session: { strategy: "jwt", maxAge: Math.floor(deps.lifetimes.absoluteMs / 1000) },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
        },
        authorize: (credentials, req) => authorizeStaff(deps, credentials, req.headers ?? {}),
      }),
    ],
    events: {
      signOut: ({ token }) => endSessionOfToken(deps, token),
    },
    callbacks: {
      jwt: ({ token, user }) => refreshSessionToken(deps, token, user),
      session: ({ session, token }) => sessionFromToken(session, token),
    },
    logger: {
      error(code, metadata) {
        // An ended session is the control working, not a fault worth a stack trace.
        if (metadata instanceof SessionEndedError) return;
        logError(`[auth] ${code}`, metadata);
      },
      warn(code) {
        logWarning(`[auth] ${code}`);
      },
      debug() {},
    },
  };
}

// Built on first use, not at import: `next build` imports this module, and a missing secret must
// stop the server at start (instrumentation.ts), not the build.
let built: NextAuthOptions | undefined;

export function authOptions(): NextAuthOptions {
  if (!built) {
    const e = env();
    built = buildAuthOptions({
      db: getDb,
      lifetimes: { idleMs: e.SESSION_IDLE_MINUTES * 60_000, absoluteMs: e.SESSION_ABSOLUTE_HOURS * 60 * 60_000 },
      trustedProxyHops: e.TRUSTED_PROXY_HOPS,
      secret: resolveAuthSecret({ nextAuthSecret: e.NEXTAUTH_SECRET, databaseUrl: e.DATABASE_URL, dataDir: e.DATA_DIR }),
    });
  }
  return built;
}
