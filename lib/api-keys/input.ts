import { z } from "zod";

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

export const CreateApiKeyInput = z.object({
  name: z.string().trim().min(1, "a name is required").max(100, "the name must be 100 characters or fewer"),
  binding: ApiKeyBinding,
  endpointKeys: z
    .array(z.string().trim().min(1).max(64))
    .min(1, "choose at least one endpoint")
    .max(200, "at most 200 endpoints per key")
    .transform((keys) => [...new Set(keys)].sort()),
});
export type CreateApiKeyInput = z.input<typeof CreateApiKeyInput>;
