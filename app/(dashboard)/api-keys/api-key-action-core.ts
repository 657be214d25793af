import type { ActionDeps } from "@/app/_lib/action-deps";
import { z } from "zod";
import { checkRole } from "@/app/_lib/guards";
import { ApiKeyAccount, ApiKeyError, createApiKey, revokeApiKey } from "@/lib/api-keys";
import { logError } from "@/lib/log/redact";
import { strictForm } from "@/app/_lib/strict-form";
import { decimalId } from "@/lib/http/strict-input";

// The bodies of the API key server actions, with what they depend on passed in, so tests run
// them on a real test database with a chosen signed-in member. actions.ts wires the live ones.
export type ApiKeyActionDeps = ActionDeps;

export type ApiKeyActionState =
  | { status: "idle" }
  | { status: "ok"; message: string; secret?: string }
  | { status: "error"; error: string };

export const API_KEYS_PATH = "/api-keys";

const CreateForm = z
  .object({
    name: z.string().trim().min(1, "a name is required").max(100, "the name must be 100 characters or fewer"),
    binding: z.enum(["account", "trusted"], { error: "choose a billing account or trusted service" }),
    account: z.string().optional(),
    endpointKeys: z.array(z.string().min(1)).min(1, "choose at least one endpoint"),
  })
  .transform((form, ctx) => {
    if (form.binding === "trusted") return { ...form, binding: { kind: "trusted" as const } };
    const account = ApiKeyAccount.safeParse(form.account ?? "");
    if (!account.success) {
      ctx.addIssue({ code: "custom", message: account.error.issues[0]?.message ?? "invalid billing account" });
      return z.NEVER;
    }
    return { ...form, binding: { kind: "account" as const, account: account.data } };
  });

const RevokeForm = z.object({ id: decimalId("id") });

function readCreateForm(formData: FormData) {
  const text = (name: string) => {
    const value = formData.get(name);
    return typeof value === "string" ? value : undefined;
  };
  return {
    name: text("name"),
    binding: text("binding"),
    account: text("account"),
    endpointKeys: formData.getAll("endpointKeys").filter((v): v is string => typeof v === "string"),
  };
}

function failure(error: unknown): ApiKeyActionState {
  if (error instanceof ApiKeyError) return { status: "error", error: error.message };
  logError("api key action failed", error);
  return { status: "error", error: "The change could not be saved. The error was logged; try again." };
}

async function createApiKeyBody(deps: ApiKeyActionDeps, formData: FormData): Promise<ApiKeyActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = CreateForm.safeParse(readCreateForm(formData));
  if (!parsed.success) return { status: "error", error: parsed.error.issues.map((i) => i.message).join("; ") };
  try {
    const { key, secret } = await createApiKey(await deps.db(), { ...parsed.data, actor: { type: "staff", email: auth.staff.email } });
    deps.revalidate(API_KEYS_PATH);
    const owner = key.trusted ? "a trusted service" : `account ${key.account}`;
    return { status: "ok", message: `Created ${key.name} (ck_${key.prefix}) for ${owner}. Copy the key now: it is shown only once.`, secret };
  } catch (error) {
    return failure(error);
  }
}

async function revokeApiKeyBody(deps: ApiKeyActionDeps, formData: FormData): Promise<ApiKeyActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = RevokeForm.safeParse({ id: formData.get("id") });
  if (!parsed.success) return { status: "error", error: parsed.error.issues.map((i) => i.message).join("; ") };
  try {
    const key = await revokeApiKey(await deps.db(), { id: parsed.data.id, actor: { type: "staff", email: auth.staff.email } });
    deps.revalidate(API_KEYS_PATH);
    return { status: "ok", message: `Revoked ${key.name} (ck_${key.prefix}). Its next request is refused.` };
  } catch (error) {
    return failure(error);
  }
}

// Every core passes the input boundary first (app/_lib/strict-form.ts).
export const createApiKeyCore = strictForm("api_key.create", createApiKeyBody);
export const revokeApiKeyCore = strictForm("api_key.revoke", revokeApiKeyBody);
