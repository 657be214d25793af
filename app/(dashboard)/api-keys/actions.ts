"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import { type ApiKeyActionState, createApiKeyCore, revokeApiKeyCore } from "./api-key-action-core";

// Each core runs: guard (admin), zod parse, one lib/api-keys call, revalidate.

export async function createApiKeyAction(_previous: ApiKeyActionState, formData: FormData): Promise<ApiKeyActionState> {
  return createApiKeyCore(liveActionDeps, formData);
}

export async function revokeApiKeyAction(_previous: ApiKeyActionState, formData: FormData): Promise<ApiKeyActionState> {
  return revokeApiKeyCore(liveActionDeps, formData);
}
