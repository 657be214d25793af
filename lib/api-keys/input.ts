import { z } from "zod";
import { ACCOUNT_SCOPES, ApiKeyScopes } from "./scopes";

// The billing account a key spends for: the same string services pass as `caller`, so quotas of
// per-caller ceilings follow the account, never the key.
export const ApiKeyAccount = z
  .string()
  .trim()
  .min(1, "the billing account is required")
  .max(200, "the billing account must be 200 characters or fewer")
  .regex(/^[^\s\p{Cc}]+$/u, "the billing account may not contain spaces or control characters");

export const ApiKeyBinding = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("account"), account: ApiKeyAccount }),
  // A trusted service (a backend that serves many accounts) names the caller on each request.
  z.object({ kind: z.literal("trusted") }),
]);
export type ApiKeyBinding = z.infer<typeof ApiKeyBinding>;

export const CreateApiKeyInput = z
  .object({
    name: z.string().trim().min(1, "a name is required").max(100, "the name must be 100 characters or fewer"),
    binding: ApiKeyBinding,
    // A caller that names no scope (a script, code written before scopes) gets the narrowest.
    scopes: ApiKeyScopes.default(["reserve"]),
    endpointKeys: z
      .array(z.string().trim().min(1).max(64))
      .max(200, "at most 200 endpoints per key")
      .default([])
      .transform((keys) => [...new Set(keys)].sort()),
  })
  .superRefine((key, ctx) => {
    const reserves = key.scopes.includes("reserve");
    const accounts = key.scopes.filter((s) => ACCOUNT_SCOPES.includes(s));
    if (reserves && accounts.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["scopes"],
        message: `a key bound to endpoints cannot read or move accounts: make one key with reserve and its endpoints, and another with ${accounts.join(", ")} and no endpoint`,
      });
      return;
    }
    if (reserves && key.endpointKeys.length === 0) ctx.addIssue({ code: "custom", path: ["endpointKeys"], message: "choose at least one endpoint" });
    if (!reserves && key.endpointKeys.length > 0) {
      ctx.addIssue({ code: "custom", path: ["endpointKeys"], message: "a key for accounts has no endpoints: endpoints are for a key with the reserve scope" });
    }
    if (key.scopes.includes("accounts:write") && key.binding.kind !== "trusted") {
      ctx.addIssue({
        code: "custom",
        path: ["scopes"],
        message: "only a trusted-service key may have accounts:write: a key bound to an account must not move any account, its own included",
      });
    }
  });
export type CreateApiKeyInput = z.input<typeof CreateApiKeyInput>;
