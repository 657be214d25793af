import { z } from "zod";
import { Text } from "@/lib/limits/text";
import { hasControlChars } from "@/lib/canonical/caller";
import { CEILING_METRICS, ENDPOINT_KEY_PATTERN } from "@/lib/vocabulary";

// A plan's definition, as zod schemas the verbs, the dashboard's forms and the catalog file parse
// through, so a rule holds the same everywhere. Kept free of lib/catalog imports: lib/catalog/spec.ts
// lists plans in the catalog file.

/** `free`, `pro`, `enterprise-2024`: the same shape as an endpoint's or a budget's key. */
export const PlanKey = z
  .string({ error: "plan is required" })
  .trim()
  .min(1, "plan is required")
  .max(64, "plan must be 64 characters or fewer")
  .regex(ENDPOINT_KEY_PATTERN, "plan must look like pro: lower case letters, digits, '.', '-' or '_', starting with a letter or digit");

export const PlanName = Text("name", 120);

/** Blank is no description; line breaks are allowed (a plan's terms may take a few lines). */
export const PlanDescription = z
  .string({ error: "description must be text" })
  .trim()
  .max(500, "description must be 500 characters or fewer")
  .refine((s) => !hasControlChars(s.replace(/\r?\n/g, " ")), "description must not contain control characters");

/** A new plan's key, named as the form and the file name the field. */
export const NewPlanKey = z
  .string({ error: "key is required" })
  .trim()
  .min(1, "key is required")
  .max(64, "key must be 64 characters or fewer")
  .regex(ENDPOINT_KEY_PATTERN, "key must look like pro: lower case letters, digits, '.', '-' or '_', starting with a letter or digit");

export const PlanFields = z.strictObject({ name: PlanName, description: PlanDescription.default("") });
export type PlanFields = z.infer<typeof PlanFields>;

const Whole = (what: string) =>
  z
    .number({ error: `${what} must be a whole number` })
    .int(`${what} must be a whole number`)
    .min(0, `${what} must be 0 or more`)
    .max(Number.MAX_SAFE_INTEGER, `${what} is too large`);

/**
 * A plan's value on a per-caller ceiling in a catalog file: the ceiling is named as the file names
 * it, by its endpoint, metric and window (per-caller ceilings are one per metric and window, as an
 * override names them).
 */
export const PlanCeilingValueSpec = z.strictObject({
  endpoint: z.string({ error: "endpoint is required" }).regex(ENDPOINT_KEY_PATTERN, "endpoint must be an endpoint key such as email.subscribe"),
  metric: z.enum(CEILING_METRICS, { error: "metric must be units or calls" }),
  window: z.enum(["utc_day", "billing_month"], { error: "window must be utc_day or billing_month (a per-caller ceiling)" }),
  value: Whole("value"),
});
export type PlanCeilingValueSpec = z.infer<typeof PlanCeilingValueSpec>;

/** A plan's value on a per-account budget in a catalog file, in micros as the budget's own value is. */
export const PlanBudgetValueSpec = z.strictObject({
  budget: z.string({ error: "budget is required" }).regex(ENDPOINT_KEY_PATTERN, "budget must be a budget key such as llm.daily"),
  value: Whole("value (micros)"),
});
export type PlanBudgetValueSpec = z.infer<typeof PlanBudgetValueSpec>;

export const planCeilingId = (v: { endpoint: string; metric: string; window: string }) => `${v.endpoint} ${v.metric}/caller/${v.window}`;

/** A whole plan in a catalog file: `npm run ceilings -- export | plan | apply`. */
export const PlanSpec = z
  .strictObject({
    key: NewPlanKey,
    name: PlanName,
    description: PlanDescription.default(""),
    // Only on one plan of a file: that plan becomes the default. On none: the default stays.
    default: z.boolean({ error: "default must be true or false" }).optional(),
    ceilings: z
      .array(PlanCeilingValueSpec, { error: "ceilings must be a list of { endpoint, metric, window, value }" })
      .max(1000, "at most 1,000 ceiling values")
      .default([]),
    budgets: z.array(PlanBudgetValueSpec, { error: "budgets must be a list of { budget, value }" }).max(1000, "at most 1,000 budget values").default([]),
  })
  .superRefine((p, ctx) => {
    const seen = new Map<string, number>();
    p.ceilings.forEach((c, i) => {
      const id = planCeilingId(c);
      const first = seen.get(id);
      if (first !== undefined) ctx.addIssue({ code: "custom", path: ["ceilings", i], message: `${id} has two values (also ceilings[${first}])` });
      else seen.set(id, i);
    });
    const budgets = new Map<string, number>();
    p.budgets.forEach((b, i) => {
      const first = budgets.get(b.budget);
      if (first !== undefined)
        ctx.addIssue({ code: "custom", path: ["budgets", i, "budget"], message: `budget '${b.budget}' has two values (also budgets[${first}])` });
      else budgets.set(b.budget, i);
    });
  });
export type PlanSpec = z.infer<typeof PlanSpec>;
export type PlanSpecInput = z.input<typeof PlanSpec>;

/** The file's plans among themselves: each key once, at most one default. Paths in the file's terms. */
export function planFileIssues(list: readonly PlanSpec[]): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const seen = new Map<string, number>();
  list.forEach((p, i) => {
    const first = seen.get(p.key);
    if (first !== undefined) issues.push({ path: ["plans", i, "key"], message: `plan '${p.key}' is listed twice (also plans[${first}])` });
    else seen.set(p.key, i);
  });
  const defaults = list.flatMap((p, i) => (p.default === true ? [i] : []));
  if (defaults.length > 1)
    issues.push({ path: ["plans", defaults[1] ?? 0, "default"], message: `only one plan can be the default (also plans[${defaults[0] ?? 0}])` });
  return issues;
}
