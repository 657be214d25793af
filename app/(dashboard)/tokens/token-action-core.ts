import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { decimalId } from "@/lib/http/strict-input";
import { createStaffToken, revokeStaffToken, STAFF_TOKEN_ENV, StaffTokenName } from "@/lib/staff-tokens";

// Personal tokens: each signed-in operator or admin makes and revokes their own, never anyone
// else's (the token proves who runs a command). The secret is answered once and never stored.

export const TOKENS_PATH = "/tokens";

export const createStaffTokenCore = defineAction({
  role: "operator",
  boundary: "staff_token.create",
  input: z.object({ name: StaffTokenName }),
  run: async ({ staff, db }, input) => {
    const { token, secret } = await createStaffToken(db, { staffId: staff.id, name: input.name });
    return {
      message: `Created ${token.name} (cst_${token.prefix}). Copy it now: it is shown only once. Run the CLI with ${STAFF_TOKEN_ENV} set to it.`,
      secret,
      revalidate: [TOKENS_PATH],
    };
  },
});

export const revokeStaffTokenCore = defineAction({
  role: "operator",
  boundary: "staff_token.revoke",
  input: z.object({ id: decimalId("id") }),
  run: async ({ staff, db }, input) => {
    const token = await revokeStaffToken(db, { id: input.id, staffId: staff.id });
    return { message: `Revoked ${token.name} (cst_${token.prefix}). Its next use is refused.`, revalidate: [TOKENS_PATH] };
  },
});
