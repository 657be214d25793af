import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { EndpointKeyField } from "@/app/_lib/action-fields";
import { InputError } from "@/lib/errors";
// By path rather than "@/": its test stands in for it where reconciliation's compare work is not
// merged yet, and only a relative path can be stood in for before the file exists.
import { recordProviderCap, removeProviderCap } from "../../../../lib/reconciliation/second-cap";

// The second cap from the endpoint page: admins record where the provider's own limit is set and
// how high, or remove the record. lib/reconciliation/second-cap.ts reads the amount (a plain
// whole number of units, or a plain decimal of money) and audits both.

const RecordForm = z.object({
  endpointKey: EndpointKeyField,
  measure: z.string().trim().max(16, "the measure is too long"),
  window: z.string().trim().max(16, "the window is too long"),
  amount: z.string().trim().max(64, "that amount is too long"),
  setAt: z.string().trim().max(1000, "where it is set must be 200 characters or fewer"),
});

const RemoveForm = z.object({ endpointKey: EndpointKeyField });

const pages = (endpointKey: string) => [`/endpoints/${endpointKey}`, "/"];

/** A schema error from lib (the cap's own input) is the person's to fix: said as one sentence. */
async function asInputError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof z.ZodError) throw new InputError(error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
    throw error;
  }
}

export const recordProviderCapCore = defineAction({
  role: "admin",
  boundary: "provider_cap.record",
  rejected: "provider_cap.rejected",
  input: RecordForm,
  run: async ({ db, actor }, input) => {
    const { endpointKey, ...cap } = input;
    await asInputError(() => recordProviderCap(db, { endpointKey, input: cap, actor }));
    return { message: `Second cap at the provider recorded for ${endpointKey}.`, revalidate: pages(endpointKey) };
  },
});

export const removeProviderCapCore = defineAction({
  role: "admin",
  boundary: "provider_cap.remove",
  input: RemoveForm,
  run: async ({ db, actor }, input) => {
    await asInputError(() => removeProviderCap(db, { endpointKey: input.endpointKey, actor }));
    return { message: `Second cap record of ${input.endpointKey} removed: readiness now says none is recorded.`, revalidate: pages(input.endpointKey) };
  },
});
