import { asc, desc, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apiKeys, endpoints, type ApiKey } from "@/db/schema";

/** A key as the dashboard shows it: never its hash. */
export type ApiKeySummary = Omit<ApiKey, "secretHash">;

/** The columns of a key that may be read outside the key check itself: all but the hash. */
export const apiKeySummaryColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  account: apiKeys.account,
  trusted: apiKeys.trusted,
  endpointKeys: apiKeys.endpointKeys,
  scopes: apiKeys.scopes,
  createdBy: apiKeys.createdBy,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
  lastUsedAt: apiKeys.lastUsedAt,
};

/** Every key, live ones first, newest first within each group. */
export async function listApiKeys(db: Db): Promise<ApiKeySummary[]> {
  return db
    .select(apiKeySummaryColumns)
    .from(apiKeys)
    .orderBy(asc(sql`${apiKeys.revokedAt} is not null`), desc(apiKeys.createdAt), desc(apiKeys.id));
}

export type EndpointChoice = { key: string; name: string };

/** The endpoints a key may be allowed to use, for the create form. */
export async function listEndpointChoices(db: Db): Promise<EndpointChoice[]> {
  return db.select({ key: endpoints.key, name: endpoints.name }).from(endpoints).orderBy(asc(endpoints.key));
}
