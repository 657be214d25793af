"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import { type ApiKeyActionDeps, type ApiKeyActionState, createApiKeyCore, revokeApiKeyCore } from "./api-key-action-core";

// Each core runs: guard (admin), zod parse, one lib/api-keys call, revalidate.
const live: ApiKeyActionDeps = { session: getSessionStaff, db: getDb, revalidate: (path) => revalidatePath(path) };

export async function createApiKeyAction(_previous: ApiKeyActionState, formData: FormData): Promise<ApiKeyActionState> {
  return createApiKeyCore(live, formData);
}

export async function revokeApiKeyAction(_previous: ApiKeyActionState, formData: FormData): Promise<ApiKeyActionState> {
  return revokeApiKeyCore(live, formData);
}
