import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { whatIfLast7And30, type WhatIfParams, type WhatIfResult } from "@/lib/changes/what-if";
import { decimalId } from "@/lib/http/strict-input";
import { formatCount } from "@/lib/format";
import { BUDGET_SCOPES, CEILING_METRICS, CEILING_SCOPES, CEILING_WINDOWS, ENDPOINT_KEY_PATTERN } from "@/lib/vocabulary";

// The what-if panel's read: what a value would have refused over the last 7 and 30 days. Operator
// and up, as it is part of the edit forms (operators ask for changes); it changes nothing, so it is
// not audited, but input refused at the boundary is (whatif.rejected), as every form's is.

const Value = z
  .string({ error: "a value is required" })
  .regex(/^(0|[1-9]\d{0,15})$/, "the value must be a whole number, 0 or more")
  .transform(Number)
  .refine((n) => Number.isSafeInteger(n), "that value is too large");
const Key = z.string().regex(ENDPOINT_KEY_PATTERN, "not an endpoint key");

const WhatIfForm = z.discriminatedUnion("target", [
  z.object({ target: z.literal("ceiling"), ceilingId: decimalId("ceiling id"), value: Value }),
  z.object({ target: z.literal("budget"), budgetKey: Key, value: Value }),
  z.object({
    target: z.literal("new-ceiling"),
    endpointKey: Key,
    value: Value,
    metric: z.enum(CEILING_METRICS),
    scope: z.enum(CEILING_SCOPES),
    window: z.enum(CEILING_WINDOWS),
    windowSeconds: z
      .string()
      .regex(/^\d{0,9}$/)
      .optional()
      .transform((s) => (s ? Number(s) : null)),
  }),
  z.object({
    target: z.literal("new-budget"),
    value: Value,
    scope: z.enum(BUDGET_SCOPES),
    window: z.enum(["utc_day", "billing_month"]),
    billingDay: z
      .string()
      .regex(/^([1-9]|1\d|2[0-8])$/, "billing day must be 1 to 28")
      .optional(),
    members: z
      .string()
      .max(4000)
      .transform((s) =>
        s
          .split(",")
          .map((k) => k.trim())
          .filter(Boolean),
      )
      .pipe(z.array(Key).max(200)),
  }),
]);
type WhatIfInput = z.output<typeof WhatIfForm>;

export type WhatIfData = { d7: WhatIfResult; d30: WhatIfResult };

function paramsOf(input: WhatIfInput): Omit<WhatIfParams, "days"> {
  switch (input.target) {
    case "ceiling":
      return { ceilingId: input.ceilingId, value: input.value };
    case "budget":
      return { budgetKey: input.budgetKey, value: input.value };
    case "new-ceiling":
      return {
        endpointKey: input.endpointKey,
        newCeiling: { metric: input.metric, scope: input.scope, window: input.window, windowSeconds: input.windowSeconds },
        value: input.value,
      };
    case "new-budget":
      return {
        newBudget: { endpointKeys: input.members, scope: input.scope, window: input.window, billingDay: input.billingDay ? Number(input.billingDay) : 1 },
        value: input.value,
      };
  }
}

export const whatIfCore = defineAction({
  role: "operator",
  boundary: "whatif.read",
  rejected: "whatif.rejected",
  input: WhatIfForm,
  run: async ({ db }, input) => {
    const params = paramsOf(input);
    const data: WhatIfData = await whatIfLast7And30(db, params);
    return { message: `${formatCount(data.d30.refused)} calls would have been refused over 30 days.`, data };
  },
});
