import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apiKeys } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { ApiKeyError } from "./errors";
import type { ApiKeySummary } from "./list";

/**
 * Revokes a key and records it in one transaction. The commit notifies every process that caches
 * keys (lib/api-keys/cache.ts), so the key fails on its next request there too. Revoking twice is an error, so the audit log holds one revoke per key.
 */
export async function revokeApiKey(db: Db, params: { id: number; actor: AuditActor }): Promise<ApiKeySummary> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(apiKeys).where(eq(apiKeys.id, params.id)).for("update");
    if (!row) throw new ApiKeyError("not_found", `no API key with id ${params.id}`);
    if (row.revokedAt) throw new ApiKeyError("already_revoked", `API key ${row.name} (ck_${row.prefix}) is already revoked`);
    const [updated] = await tx.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, row.id)).returning();
    if (!updated) throw new Error("api key update returned no row");
    await recordAudit(tx, {
      ...auditActorFields(params.actor),
      action: "api_key.revoke",
      target: `${row.name} (ck_${row.prefix})`,
      details: { apiKeyId: row.id, prefix: row.prefix, account: row.account, trusted: row.trusted },
    });
    const { secretHash: _hash, ...summary } = updated;
    return summary;
  });
}
