import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { ApiKeyAccount, createApiKey, revokeApiKey } from "@/lib/api-keys";
import { decimalId } from "@/lib/http/strict-input";

// API keys: admins only, accounts:write included (a key that moves accounts is made by one admin:
// which plans a key may move an account to is the plans' own control). A new key's secret is
// answered once and never stored; scopes and endpoints are checked by createApiKey (zod).

export const API_KEYS_PATH = "/api-keys";

const CreateForm = z
  .object({
    name: z.string({ error: "a name is required" }).trim().min(1, "a name is required").max(100, "the name must be 100 characters or fewer"),
    binding: z.enum(["account", "trusted"], { error: "choose a billing account or trusted service" }),
    account: z.string().optional(),
    // What the key may do: reserve on its endpoints, or accounts:read / accounts:write without any.
    scopes: z.array(z.string()),
    endpointKeys: z.array(z.string().min(1)),
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

export const createApiKeyCore = defineAction({
  role: "admin",
  boundary: "api_key.create",
  lists: ["scopes", "endpointKeys"],
  input: CreateForm,
  run: async ({ actor, db }, input) => {
    const { key, secret } = await createApiKey(db, { ...input, actor });
    const owner = key.trusted ? "a trusted service" : `account ${key.account}`;
    return {
      message: `Created ${key.name} (ck_${key.prefix}) for ${owner}, scopes ${key.scopes.join(", ")}. Copy the key now: it is shown only once.`,
      secret,
      revalidate: [API_KEYS_PATH],
    };
  },
});

export const revokeApiKeyCore = defineAction({
  role: "admin",
  boundary: "api_key.revoke",
  input: z.object({ id: decimalId("id") }),
  run: async ({ actor, db }, input) => {
    const key = await revokeApiKey(db, { id: input.id, actor });
    return { message: `Revoked ${key.name} (ck_${key.prefix}). Its next request is refused.`, revalidate: [API_KEYS_PATH] };
  },
});
