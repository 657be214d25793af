import { z } from "zod";
import { Text } from "@/lib/limits/text";
import { OverrideUntil } from "@/lib/control/ends";
import { BUDGET_SCOPES, BUDGET_WINDOWS, ENDPOINT_KEY_PATTERN } from "@/lib/vocabulary";
import { formatMoney } from "@/lib/format";

// A budget's definition, as one zod schema: what the dashboard's forms, the catalog file and the
// verbs of lib/budgets parse through, so a rule holds the same everywhere. Money is whole micros of
// the budget's currency. The checks that need the database (members exist, are live, share the
// budget's currency) are made by the verbs, under the members' locks (lib/budgets/members.ts).
// Kept free of lib/catalog imports: lib/catalog/spec.ts lists budgets in the catalog file.

const Micros = (what: string, min: number) =>
  z
    .number({ error: `${what} must be a whole number of micros` })
    .int(`${what} must be a whole number of micros`)
    .min(min, `${what} must be ${min} or more`)
    .max(Number.MAX_SAFE_INTEGER, `${what} is too large`);

const Key = (what: string) =>
  z
    .string({ error: `${what} is required` })
    .min(1, `${what} is required`)
    .max(64, `${what} must be 64 characters or fewer`)
    .regex(ENDPOINT_KEY_PATTERN, `${what} must look like llm.daily: lower case letters, digits, '.', '-' or '_', starting with a letter or digit`);

export const BudgetKey = Key("key");
export const BudgetScope = z.enum(BUDGET_SCOPES, { error: "scope must be global or account" });
export const BudgetWindow = z.enum(BUDGET_WINDOWS, { error: "window must be utc_day or billing_month" });

export const BudgetAlertThresholds = z
  .array(
    z
      .number({ error: "threshold must be a whole number" })
      .int("threshold must be a whole number")
      .min(1, "threshold must be 1 or more")
      .max(100, "threshold must be at most 100"),
    {
      error: "alert thresholds must be a list of percentages",
    },
  )
  .max(10, "at most 10 alert thresholds")
  .refine((t) => new Set(t).size === t.length, "alert thresholds must not repeat")
  .transform((t) => [...t].sort((a, b) => a - b));

/**
 * Members are an explicit list of endpoint keys, never a prefix such as `llm.`: a prefix would let
 * an endpoint created later join the budget silently, and move the budget's worst case (and what
 * it refuses) without anyone editing it. With a list, a budget's reach changes only when the budget
 * itself is edited, which is audited and shown with its money worst case before and after.
 */
export const BudgetMembers = z
  .array(Key("member"), { error: "members must be a list of endpoint keys" })
  .min(1, "a budget needs at least one member endpoint")
  .max(200, "at most 200 members")
  .superRefine((members, ctx) => {
    const seen = new Map<string, number>();
    members.forEach((m, i) => {
      const first = seen.get(m);
      if (first !== undefined) ctx.addIssue({ code: "custom", path: [i], message: `member '${m}' is listed twice (also members[${first}])` });
      else seen.set(m, i);
    });
  });

export const BudgetOverride = z.strictObject({
  caller: Text("caller", 200),
  value: Micros("override value", 0),
  reason: Text("override reason", 500),
  until: OverrideUntil,
});
export type BudgetOverride = z.infer<typeof BudgetOverride>;

/** What may change on a budget after it is created; key, currency, scope, window and billing day may not. */
export const BudgetFields = z
  .strictObject({
    name: Text("name", 120),
    members: BudgetMembers,
    min: Micros("min", 0),
    max: Micros("max", 1),
    default: Micros("default", 0),
    alertThresholds: BudgetAlertThresholds.default([50, 80, 100]),
  })
  .superRefine((b, ctx) => boundsIssues(b, ctx));
export type BudgetFields = z.infer<typeof BudgetFields>;
export type BudgetFieldsInput = z.input<typeof BudgetFields>;

type Bounds = { min: number; max: number; default: number };

function boundsIssues(b: Bounds, ctx: z.RefinementCtx): void {
  // Said without the numbers: a form shows them in money, a file in micros.
  if (b.min > b.max) ctx.addIssue({ code: "custom", path: ["min"], message: "min must not be above max" });
  if (b.default < b.min || b.default > b.max) ctx.addIssue({ code: "custom", path: ["default"], message: "default must be between min and max" });
}

/** A whole budget, as created in the dashboard or listed in a catalog file. */
export const BudgetSpec = z
  .strictObject({
    key: BudgetKey,
    name: Text("name", 120),
    currency: z
      .string({ error: "currency is required" })
      .regex(/^[A-Z]{3}$/, "currency must be a three-letter code such as USD")
      .default("USD"),
    scope: BudgetScope,
    window: BudgetWindow,
    billingDay: z
      .number({ error: "billing day must be a whole number" })
      .int("billing day must be a whole number")
      .min(1, "billing day must be 1 or more")
      .max(28, "billing day must be at most 28")
      .default(1),
    value: Micros("value", 0),
    min: Micros("min", 0),
    max: Micros("max", 1),
    default: Micros("default", 0),
    alertThresholds: BudgetAlertThresholds.default([50, 80, 100]),
    members: BudgetMembers,
    overrides: z.array(BudgetOverride, { error: "overrides must be a list" }).max(10_000, "at most 10,000 overrides").default([]),
    archived: z.boolean({ error: "archived must be true or false" }).default(false),
    // Only in a file: true keeps or pulls the kill (value is then the value a restore puts back);
    // false lifts it. Absent: the kill state in force is left as it is.
    killed: z.boolean({ error: "killed must be true or false" }).optional(),
  })
  .superRefine((b, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    boundsIssues(b, ctx);
    // 0 is always allowed: it is the kill switch. A definition is not an adjustment: nothing is clamped.
    if (b.value !== 0 && (b.value < b.min || b.value > b.max)) {
      issue(
        ["value"],
        `value (${formatMoney(b.value, b.currency)}) must be between min (${formatMoney(b.min, b.currency)}) and max (${formatMoney(b.max, b.currency)}), or 0 to kill`,
      );
    }
    if (b.window === "utc_day" && b.billingDay !== 1) issue(["billingDay"], "billing day is only for a billing_month window");
    if (b.scope === "global" && b.overrides.length > 0)
      issue(["overrides"], "overrides are for a per-account budget (scope account): a global budget counts everyone together");
    const seen = new Map<string, number>();
    b.overrides.forEach((o, i) => {
      const first = seen.get(o.caller);
      if (first !== undefined) issue(["overrides", i, "caller"], `account '${o.caller}' has two overrides (also overrides[${first}])`);
      else seen.set(o.caller, i);
      if (o.value !== 0 && (o.value < b.min || o.value > b.max)) {
        issue(["overrides", i, "value"], `override value (${formatMoney(o.value, b.currency)}) must be between min and max, or 0 to block that account`);
      }
    });
  });
export type BudgetSpec = z.infer<typeof BudgetSpec>;
export type BudgetSpecInput = z.input<typeof BudgetSpec>;

/**
 * What a catalog file's budgets must agree on with its endpoints (the file lists every endpoint):
 * each member is one of them, in the budget's currency; no budget key twice. Paths in the file's
 * terms (`budgets[0].members[2]`).
 */
export function budgetFileIssues(
  endpoints: readonly { key: string; currency: string }[],
  list: readonly BudgetSpec[],
): { path: (string | number)[]; message: string }[] {
  const byKey = new Map(endpoints.map((e) => [e.key, e]));
  const issues: { path: (string | number)[]; message: string }[] = [];
  const seen = new Map<string, number>();
  list.forEach((b, i) => {
    const first = seen.get(b.key);
    if (first !== undefined) issues.push({ path: ["budgets", i, "key"], message: `budget '${b.key}' is listed twice (also budgets[${first}])` });
    else seen.set(b.key, i);
    b.members.forEach((m, j) => {
      const e = byKey.get(m);
      const path = ["budgets", i, "members", j];
      if (!e) issues.push({ path, message: `no endpoint '${m}' in this file` });
      else if (e.currency !== b.currency)
        issues.push({ path, message: `endpoint '${m}' is priced in ${e.currency}, the budget counts ${b.currency}: one currency per budget` });
    });
  });
  return issues;
}
