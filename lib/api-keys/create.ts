import { InputError } from "@/lib/errors";
import { inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apiKeys, endpoints } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { ApiKeyError } from "./errors";
import { CreateApiKeyInput } from "./input";
import type { ApiKeySummary } from "./list";
import { generateToken } from "./token";

export type CreatedApiKey = {
  key: ApiKeySummary;
  /** The full token. It exists only in this return value: show it once, never store it. */
  secret: string;
};

/**
 * Creates a key and its audit event in one transaction; only the token's hash is stored. Only an
 * admin reaches this from the dashboard (api-key-action-core.ts), `accounts:write` included: what
 * such a key may move an account to is limited by the plans themselves, not by who made the key.
 */
export async function createApiKey(db: Db, params: CreateApiKeyInput & { actor: AuditActor }): Promise<CreatedApiKey> {
  const parsed = CreateApiKeyInput.safeParse(params);
  if (!parsed.success) throw InputError.of(parsed.error.issues.map((i) => i.message).join("; "));
  const input = parsed.data;
  const actor = auditActorFields(params.actor);
  const generated = generateToken();
  const key = await db.transaction(async (tx) => {
    const known =
      input.endpointKeys.length === 0 ? [] : await tx.select({ key: endpoints.key }).from(endpoints).where(inArray(endpoints.key, input.endpointKeys));
    const missing = input.endpointKeys.filter((k) => !known.some((e) => e.key === k));
    if (missing.length > 0) throw new ApiKeyError("unknown_endpoint", `unknown endpoint(s): ${missing.join(", ")}`);
    const [row] = await tx
      .insert(apiKeys)
      .values({
        name: input.name,
        prefix: generated.prefix,
        secretHash: generated.secretHash,
        account: input.binding.kind === "account" ? input.binding.account : null,
        trusted: input.binding.kind === "trusted",
        endpointKeys: input.endpointKeys,
        scopes: input.scopes,
        createdBy: actor.actor,
      })
      .returning();
    if (!row) throw new Error("api key insert returned no row");
    await recordAudit(tx, {
      ...actor,
      action: "api_key.create",
      target: `${row.name} (ck_${row.prefix})`,
      details: {
        apiKeyId: row.id,
        prefix: row.prefix,
        account: row.account,
        trusted: row.trusted,
        endpointKeys: row.endpointKeys,
        scopes: row.scopes,
      },
    });
    const { secretHash: _hash, ...summary } = row;
    return summary;
  });
  return { key, secret: generated.token };
}
