import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apiKeys } from "@/db/schema";
import { apiKeySummaryColumns } from "./list";
import type { ApiKeyScope } from "./scopes";
import { hashToken, readBearer } from "./token";
import { answerBy } from "@/lib/enforcement/lanes";
import { env } from "@/lib/env";
import { logError } from "@/lib/log/redact";

/** Who is calling the HTTP API: a key bound to one billing account, or a trusted service. */
export type ApiPrincipal = {
  keyId: number;
  name: string;
  prefix: string;
  /** The billing account every call of this key is charged to; null for a trusted service. */
  account: string | null;
  trusted: boolean;
  endpointKeys: string[];
  /** What the key may do (scopes.ts); every route checks the one it needs (guard.ts). */
  scopes: ApiKeyScope[];
};

export type AuthenticationFailure = { ok: false; code: "missing_api_key" | "invalid_api_key" | "revoked_api_key"; message: string };
export type Authentication = { ok: true; principal: ApiPrincipal } | AuthenticationFailure;

const TOUCH_INTERVAL_MS = 60_000;
// When this process last wrote last_used_at, per database handle and key: at most one write a
// minute per key and process, instead of one per request. The WHERE clause keeps several
// processes to about one a minute between them too.
const touched = new WeakMap<Db, Map<number, number>>();

async function touchLastUsed(db: Db, keyId: number, nowMs: number): Promise<void> {
  let seen = touched.get(db);
  if (!seen) {
    seen = new Map();
    touched.set(db, seen);
  }
  const last = seen.get(keyId);
  if (last !== undefined && nowMs - last < TOUCH_INTERVAL_MS) return;
  seen.set(keyId, nowMs);
  try {
    await db
      .update(apiKeys)
      .set({ lastUsedAt: sql`now()` })
      .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`))));
  } catch (error) {
    // Recording the last use is a convenience for staff; it must never fail the call itself.
    logError("could not record api key last use", error);
  }
}

/** Reads the key of a token hash from the database. Database errors propagate. */
export async function lookUpKey(db: Db, secretHash: string): Promise<Authentication> {
  const [row] = await db.select(apiKeySummaryColumns).from(apiKeys).where(eq(apiKeys.secretHash, secretHash)).limit(1);
  if (!row) return { ok: false, code: "invalid_api_key", message: "the API key is not valid" };
  if (row.revokedAt) return { ok: false, code: "revoked_api_key", message: `the API key ck_${row.prefix} was revoked` };
  return {
    ok: true,
    principal: {
      keyId: row.id,
      name: row.name,
      prefix: row.prefix,
      account: row.account,
      trusted: row.trusted,
      endpointKeys: row.endpointKeys,
      scopes: row.scopes,
    },
  };
}

/** Where authentication reads keys: the database on every request, or a cache that stays exact. */
export type KeySource = { lookUp: (db: Db, secretHash: string) => Promise<Authentication> };

// Read on the caller's pool, answered at the deadline (a silent network must not hold the request).
const direct: KeySource = { lookUp: (db, hash) => answerBy(lookUpKey(db, hash), env().ENFORCEMENT_DEADLINE_MS) };

/**
 * Authenticates `Authorization: Bearer ck_<prefix>_<secret>` by the SHA-256 of the token. Keys are
 * read on every request, or through a cache invalidated on every change of a key (ApiKeyCache), so
 * a revoked key fails on its next request. Database errors propagate: the caller answers 503.
 */
export async function authenticateApiKey(db: Db, authorization: string | null, now = new Date(), keys: KeySource = direct): Promise<Authentication> {
  const bearer = readBearer(authorization);
  if (!bearer.ok) {
    return bearer.reason === "missing"
      ? { ok: false, code: "missing_api_key", message: "send an API key as 'Authorization: Bearer ck_...'" }
      : { ok: false, code: "invalid_api_key", message: "the API key is not valid" };
  }
  const found = await keys.lookUp(db, hashToken(bearer.token));
  if (!found.ok) return found;
  // Not awaited: recording the last use must never hold, or fail, the call itself.
  void touchLastUsed(db, found.principal.keyId, now.getTime());
  return found;
}

/** Whether the key may act on this endpoint. */
export function allowsEndpoint(principal: ApiPrincipal, endpointKey: string): boolean {
  return principal.endpointKeys.includes(endpointKey);
}
