import { zodIssues } from "@/lib/limits/errors";
import { z } from "zod";
import { Text } from "@/lib/limits/text";
import { OverrideUntil } from "@/lib/control/ends";
import {
  CEILING_METRICS,
  CEILING_SCOPES,
  CEILING_WINDOWS,
  DEFAULT_PART,
  DESTINATION_KINDS,
  ENDPOINT_KEY_PATTERN,
  MAX_PARTS,
  PART_NAME_PATTERN,
  PICOS_PER_MICRO,
  type EndpointPart,
} from "@/lib/vocabulary";
import { formatCount } from "@/lib/format";
import { parsePrice } from "@/lib/money/price";
import { type Issue, issueLine } from "@/lib/errors";
import { budgetFileIssues, BudgetSpec } from "@/lib/budgets/spec";
import { planFileIssues, PlanSpec } from "@/lib/plans/spec";

// The catalog's vocabulary, as one zod schema each: what an endpoint and its ceilings are made of.
// The dashboard's forms, the catalog file (`ceilings apply`) and the demo seed all parse through
// these, so a rule holds the same everywhere. Numbers are whole and safe; text has no control
// characters; unknown fields are errors, not silently dropped.

/** The dearest old whole-micro price that is still a price today: $1,000 a unit. */
const MAX_LEGACY_PRICE_MICROS = 1_000_000_000;

const Whole = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number({ error: `${what} must be a whole number` })
    .int(`${what} must be a whole number`)
    .min(min, `${what} must be ${min} or more`)
    .max(max, `${what} must be at most ${formatCount(max)}`);

/** `email.subscribe`: lower case letters, digits, dot, dash, underscore; at most 64 characters. */
export const EndpointKey = z
  .string({ error: "key is required" })
  .min(1, "key is required")
  .max(64, "key must be 64 characters or fewer")
  .regex(ENDPOINT_KEY_PATTERN, "key must look like email.subscribe: lower case letters, digits, '.', '-' or '_', starting with a letter or digit");

export const CeilingMetric = z.enum(CEILING_METRICS, { error: "metric must be units or calls" });
export const CeilingScope = z.enum(CEILING_SCOPES, { error: "scope must be global, caller or destination" });
export const CeilingWindow = z.enum(CEILING_WINDOWS, { error: "window must be utc_day, billing_month or first_hit" });
export const DestinationKind = z.enum(DESTINATION_KINDS, { error: "destination kind must be email, phone or other" });
export type CeilingMetric = z.infer<typeof CeilingMetric>;
export type CeilingScope = z.infer<typeof CeilingScope>;
export type CeilingWindow = z.infer<typeof CeilingWindow>;
export type DestinationKind = z.infer<typeof DestinationKind>;

export const AlertThresholds = z
  .array(Whole("threshold", 1, 100), { error: "alert thresholds must be a list of percentages" })
  .max(10, "at most 10 alert thresholds")
  .refine((t) => new Set(t).size === t.length, "alert thresholds must not repeat")
  .transform((t) => [...t].sort((a, b) => a - b));

/** One ceiling: its identity (metric, scope, window) and its numbers. */
export const CeilingSpec = z
  .strictObject({
    metric: CeilingMetric,
    scope: CeilingScope,
    window: CeilingWindow,
    windowSeconds: Whole("window seconds", 1, 366 * 86_400).optional(),
    destinationKind: DestinationKind.optional(),
    value: Whole("value", 0),
    min: Whole("min", 0),
    max: Whole("max", 1),
    default: Whole("default", 0),
    alertThresholds: AlertThresholds.default([50, 80, 100]),
    // Only in a file: true keeps or pulls the kill (value is then the value a restore puts back);
    // false lifts it. Absent: the kill state in force is left as it is.
    killed: z.boolean({ error: "killed must be true or false" }).optional(),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (c.window === "first_hit") {
      if (c.windowSeconds === undefined) issue("windowSeconds", "a cooldown (window first_hit) needs windowSeconds, e.g. 86400 for 24 hours");
      if (c.scope !== "destination") issue("scope", "a cooldown (window first_hit) is per destination: scope must be destination");
    } else if (c.windowSeconds !== undefined) {
      issue("windowSeconds", "windowSeconds is only for a cooldown (window first_hit)");
    }
    if (c.scope === "destination" && c.window !== "first_hit") issue("window", "a per-destination ceiling is a cooldown: window must be first_hit");
    if (c.destinationKind !== undefined && c.scope !== "destination") issue("destinationKind", "destinationKind is only for a cooldown");
    if (c.min > c.max) issue("min", `min (${c.min}) must not be above max (${c.max})`);
    if (c.default < c.min || c.default > c.max) issue("default", `default (${c.default}) must be between min (${c.min}) and max (${c.max})`);
    // 0 is always allowed: it is the kill switch. Anything else must fit the bounds: a definition
    // is not an adjustment, so nothing is clamped here.
    if (c.value !== 0 && (c.value < c.min || c.value > c.max))
      issue("value", `value (${c.value}) must be between min (${c.min}) and max (${c.max}), or 0 to kill`);
  });
export type CeilingSpec = z.infer<typeof CeilingSpec>;
export type CeilingSpecInput = z.input<typeof CeilingSpec>;

/**
 * A part's price: the currency per unit as a decimal in quotes ("0.0000025" is $2.50 per million
 * tokens), read into picos exactly. A JSON number is refused: 0.0000025 as a double is not exact.
 */
export const PartPrice = z
  .string({ error: 'price must be a decimal in quotes, such as "0.0079", so it stays exact' })
  .meta({
    description: 'The price of one unit in the currency, a decimal in quotes with at most 12 places, 0 to 1000: "0.0000025" is $2.50 per million tokens.',
    examples: ["0.0079", "0.0000025"],
    pattern: "^[0-9]+(\\.[0-9]{1,12}0*)?$",
  })
  .transform((text, ctx) => {
    const parsed = parsePrice(text);
    if (parsed.ok) return parsed.pricePico;
    ctx.addIssue({ code: "custom", message: parsed.error });
    return z.NEVER;
  });

/** One priced part in a spec, `{ name, price }`, read as the database keeps it: `{ name, pricePico }`. */
export const PartSpec = z
  .strictObject({
    name: z
      .string({ error: "part name is required" })
      .regex(PART_NAME_PATTERN, "part name must look like input or cached-input: lower case letters, digits, '-' or '_', starting with a letter, at most 32"),
    price: PartPrice,
  })
  .transform((p): EndpointPart => ({ name: p.name, pricePico: p.price }));
export type PartSpecInput = z.input<typeof PartSpec>;

/** The one part a single-priced endpoint has, free until priced. */
export const DEFAULT_PARTS: readonly PartSpecInput[] = [{ name: DEFAULT_PART, price: "0" }];

/** An endpoint's priced parts: 1 to MAX_PARTS, each name once. */
export const PartList = z
  .array(PartSpec, { error: "parts must be a list of { name, price }" })
  .min(1, `parts needs at least one priced part, e.g. [{ "name": "${DEFAULT_PART}", "price": "0.0079" }]`)
  .max(MAX_PARTS, `at most ${MAX_PARTS} parts`)
  .superRefine((parts, ctx) => {
    const seen = new Map<string, number>();
    parts.forEach((p, i) => {
      const first = seen.get(p.name);
      if (first !== undefined) ctx.addIssue({ code: "custom", path: [i, "name"], message: `part '${p.name}' is listed twice (also parts[${first}])` });
      else seen.set(p.name, i);
    });
  });

/** What may change on an endpoint after it is created (its key may not). */
export const EndpointFields = z.strictObject({
  name: Text("name", 120),
  unit: Text("unit", 40),
  parts: PartList.prefault([...DEFAULT_PARTS]),
  currency: z
    .string({ error: "currency is required" })
    .regex(/^[A-Z]{3}$/, "currency must be a three-letter code such as USD")
    .default("USD"),
  planAllowance: Whole("plan allowance", 0).nullable().default(null),
  billingDay: Whole("billing day", 1, 28).default(1),
  perCallMax: Whole("per-call max", 1),
  throttlePerMinute: Whole("throttle per minute", 1, 10_000_000).nullable().default(null),
  throttleFailOpen: z.boolean({ error: "throttleFailOpen must be true or false" }).default(false),
});
export type EndpointFields = z.infer<typeof EndpointFields>;
export type EndpointFieldsInput = z.input<typeof EndpointFields>;

export const UNBOUNDED_SENTENCE =
  "an endpoint needs at least one global ceiling: without one its worst case is unbounded (per-caller ceilings and cooldowns multiply with the number of accounts and destinations)";

/** The new-endpoint form's hint while it has no global ceiling: the same sentence, said once. */
export const NEEDS_GLOBAL_HINT = `${UNBOUNDED_SENTENCE.charAt(0).toUpperCase()}${UNBOUNDED_SENTENCE.slice(1)}.`;

export function hasGlobalCeiling(specs: readonly Pick<CeilingSpec, "scope">[]): boolean {
  return specs.some((c) => c.scope === "global");
}

/** The identity of a ceiling: two with the same one would count the same thing twice. */
export function ceilingIdentity(c: Pick<CeilingSpec, "metric" | "scope" | "window"> & { windowSeconds?: number | null }): string {
  return c.window === "first_hit" ? `${c.metric}/${c.scope}/first_hit:${c.windowSeconds ?? 0}` : `${c.metric}/${c.scope}/${c.window}`;
}

const endpointExtras = {
  key: EndpointKey,
  archived: z.boolean({ error: "archived must be true or false" }).default(false),
  ceilings: z.array(CeilingSpec, { error: "ceilings must be a list" }).max(20, "at most 20 ceilings per endpoint"),
  overrides: z
    .array(
      z.strictObject({
        metric: CeilingMetric,
        window: CeilingWindow,
        caller: Text("caller", 200),
        value: Whole("override value", 0),
        reason: Text("override reason", 500),
        until: OverrideUntil,
      }),
    )
    .default([]),
};

type EndpointRules = {
  ceilings: CeilingSpec[];
  overrides: { metric: CeilingMetric; window: CeilingWindow }[];
  perCallMax?: number;
  parts?: readonly EndpointPart[];
};

/**
 * The worst case of one call in money, its per-call max at the dearest part's price, must be
 * countable: reserve_batch refuses a worst case past 2^53 - 1 micros as an input error, so a larger
 * one would refuse calls within the endpoint's own per-call max. Integer arithmetic (BigInt).
 */
export function perCallMoneyIssue(e: { perCallMax: number; parts: readonly Pick<EndpointPart, "pricePico">[] }): Issue | null {
  const dearest = e.parts.reduce((max, p) => (BigInt(p.pricePico) > max ? BigInt(p.pricePico) : max), 0n);
  const micros = (BigInt(e.perCallMax) * dearest + BigInt(PICOS_PER_MICRO) - 1n) / BigInt(PICOS_PER_MICRO);
  if (micros <= BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const most = dearest === 0n ? 0n : (BigInt(Number.MAX_SAFE_INTEGER) * BigInt(PICOS_PER_MICRO)) / dearest;
  return {
    path: "perCallMax",
    message: `a call of ${formatCount(e.perCallMax)} units at the dearest part's price is ${micros} micros, more money than can be counted: the per-call max may be at most ${formatCount(Number(most))} at these prices`,
  };
}

function checkEndpoint(e: EndpointRules, ctx: z.RefinementCtx): void {
  // Only when both read: a refinement also runs over fields that failed their own checks.
  if (
    Number.isSafeInteger(e.perCallMax) &&
    Array.isArray(e.parts) &&
    e.parts.every((p) => Number.isSafeInteger(p?.pricePico)) &&
    e.perCallMax !== undefined &&
    e.parts !== undefined
  ) {
    const issue = perCallMoneyIssue({ perCallMax: e.perCallMax, parts: e.parts });
    if (issue) ctx.addIssue({ code: "custom", path: [issue.path], message: issue.message });
  }
  if (!hasGlobalCeiling(e.ceilings)) ctx.addIssue({ code: "custom", path: ["ceilings"], message: UNBOUNDED_SENTENCE });
  const seen = new Map<string, number>();
  e.ceilings.forEach((c, i) => {
    const id = ceilingIdentity(c);
    const first = seen.get(id);
    if (first !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["ceilings", i],
        message: `the same ceiling as ceilings[${first}] (${id}): one ceiling per metric, scope and window`,
      });
    else seen.set(id, i);
  });
  e.overrides.forEach((o, i) => {
    if (!e.ceilings.some((c) => c.scope === "caller" && c.metric === o.metric && c.window === o.window)) {
      ctx.addIssue({ code: "custom", path: ["overrides", i], message: `no per-caller ceiling of ${o.metric} per ${o.window} for this override` });
    }
  });
}

/** A whole endpoint: key, fields and ceilings, as created in the dashboard or listed in a file. */
export const EndpointSpec = EndpointFields.extend(endpointExtras).superRefine(checkEndpoint);
export type EndpointSpec = z.infer<typeof EndpointSpec>;
export type EndpointSpecInput = z.input<typeof EndpointSpec>;

/**
 * An endpoint in a catalog file. Files written before priced parts carry `unitPriceMicros` (whole
 * micros a unit) instead of `parts`: such a file still applies, read as the one part `units` at that
 * price, so an old export plans no change against the database it came from.
 */
export const FileEndpointSpec = EndpointFields.extend({
  ...endpointExtras,
  parts: PartList.optional(),
  unitPriceMicros: Whole("unit price (micros)", 0, MAX_LEGACY_PRICE_MICROS)
    .optional()
    .meta({
      deprecated: true,
      description: `Files written before priced parts: whole micros a unit, read as the one part '${DEFAULT_PART}'. Write parts instead.`,
    }),
})
  .superRefine((e, ctx) => {
    checkEndpoint(e, ctx);
    if (e.parts !== undefined && e.unitPriceMicros !== undefined) {
      ctx.addIssue({ code: "custom", path: ["unitPriceMicros"], message: "unitPriceMicros is the old single price: give parts or unitPriceMicros, not both" });
    }
  })
  .transform(({ unitPriceMicros, parts, ...e }): EndpointSpec => ({
    ...e,
    parts: parts ?? [{ name: DEFAULT_PART, pricePico: (unitPriceMicros ?? 0) * PICOS_PER_MICRO }],
  }));

export const CATALOG_FORMAT_VERSION = 1;

/** The catalog file: `npm run ceilings -- export | plan | apply`. */
export const CatalogFile = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(CATALOG_FORMAT_VERSION, { error: `version must be ${CATALOG_FORMAT_VERSION}` }),
    endpoints: z.array(FileEndpointSpec, { error: "endpoints must be a list" }),
    // Absent: the file says nothing about budgets and leaves them as they are (lib/catalog/file-budgets.ts).
    budgets: z.array(BudgetSpec, { error: "budgets must be a list" }).optional(),
    // Absent: the file says nothing about plans and leaves them as they are (lib/catalog/file-plans.ts).
    plans: z.array(PlanSpec, { error: "plans must be a list" }).max(1000, "at most 1,000 plans").optional(),
  })
  .superRefine((f, ctx) => {
    const seen = new Map<string, number>();
    f.endpoints.forEach((e, i) => {
      const first = seen.get(e.key);
      if (first !== undefined)
        ctx.addIssue({ code: "custom", path: ["endpoints", i, "key"], message: `endpoint '${e.key}' is listed twice (also endpoints[${first}])` });
      else seen.set(e.key, i);
    });
    for (const issue of budgetFileIssues(f.endpoints, f.budgets ?? [])) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of planFileIssues(f.plans ?? [])) ctx.addIssue({ code: "custom", ...issue });
  });
export type CatalogFile = z.infer<typeof CatalogFile>;
export type CatalogFileInput = z.input<typeof CatalogFile>;

/** Every problem as the line a person reads (issueLine): `endpoints[2].ceilings[0]: max must be 0 or more`. */
export function describeIssues(error: z.ZodError): string[] {
  return zodIssues(error).map(issueLine);
}
