import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { providerCaps } from "@/db/schema";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { invalidInput, CatalogError } from "@/lib/limits/errors";
import { lockedEndpoint } from "@/lib/catalog/write";
import { worstCases, type WorstCases } from "@/lib/catalog/worst-case";
import { unitLabel } from "@/lib/limits/guarantee";
import { formatCount, formatMoney } from "@/lib/format";
import type { ProviderCap, SecondCapVerdict } from "./types";

// The second cap: the limit set at the provider itself, recorded by staff. It is a backstop when it
// sits at or above Ceilings' worst case for its window; below it, the provider binds first and a
// ceiling would never be what stops spend; not recorded at all, nothing stands behind Ceilings.

const MONEY_DECIMALS = 6;
const show = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
// C0 and C1 controls, DEL: a place name is shown on the dashboard and in the audit log.
// eslint-disable-next-line no-control-regex -- matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A whole number of units (> 0), or a plain decimal of money with at most 6 places, as micros. */
export function parseCapAmount(raw: string, measure: "units" | "money"): { ok: true; amount: number } | { ok: false; error: string } {
  const text = raw.trim();
  const what = measure === "units" ? "a whole number of units, such as 100000" : "a plain decimal of the currency, such as 50 or 12.50";
  if (text === "") return { ok: false, error: `amount is required: type ${what}` };
  if (/^-\d+(\.\d+)?$/.test(text)) return { ok: false, error: `amount must be more than 0, got '${show(text)}'` };
  const match = measure === "units" ? /^(\d+)()$/.exec(text) : /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, error: `amount must be ${what}, got '${show(text)}'` };
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > MONEY_DECIMALS)
    return { ok: false, error: `amount must have at most ${MONEY_DECIMALS} decimal places (one micro), got '${show(text)}'` };
  const value =
    BigInt(match[1] ?? "0") * (measure === "money" ? 1_000_000n : 1n) + BigInt(fraction.padEnd(measure === "money" ? MONEY_DECIMALS : 0, "0") || "0");
  if (value === 0n) return { ok: false, error: `amount must be more than 0 (a cap of nothing is a kill switch, not a cap), got '${show(text)}'` };
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, error: `amount is too large, got '${show(text)}'` };
  return { ok: true, amount: Number(value) };
}

export const ProviderCapInput = z
  .object({
    measure: z.enum(["units", "money"], { error: (i) => `measure must be 'units' or 'money', got '${String(i.input).slice(0, 40)}'` }),
    window: z.enum(["day", "month"], { error: (i) => `window must be 'day' or 'month', got '${String(i.input).slice(0, 40)}'` }),
    amount: z.string({ error: 'amount must be text, such as "100000" or "50.00"' }),
    setAt: z
      .string({ error: "where it is set must be text" })
      .trim()
      .min(1, "where it is set is required: name the provider's page, e.g. 'OpenAI project llm-prod, Limits, monthly budget'")
      .max(200, "where it is set must be at most 200 characters")
      .refine((s) => !CONTROL.test(s), "where it is set must not contain control characters"),
  })
  .strict()
  .transform((input, ctx) => {
    const amount = parseCapAmount(input.amount, input.measure);
    if (!amount.ok) {
      ctx.addIssue({ code: "custom", path: ["amount"], message: amount.error });
      return z.NEVER;
    }
    return { measure: input.measure, window: input.window, amount: amount.amount, setAt: input.setAt };
  });
export type ProviderCapInput = z.output<typeof ProviderCapInput>;

function parseInput(input: unknown): ProviderCapInput {
  const parsed = ProviderCapInput.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message })));
}

const capDetails = (c: Pick<ProviderCap, "measure" | "window" | "amount" | "setAt">, currency: string) => ({
  measure: c.measure,
  window: c.window,
  amount: c.amount,
  setAt: c.setAt,
  ...(c.measure === "money" ? { currency } : {}),
});

/** Records (or replaces) the endpoint's second cap under its lock, audited `provider_cap.record`. */
export async function recordProviderCap(db: Db, p: { endpointKey: string; input: unknown; actor: AuditActor }): Promise<ProviderCap> {
  const input = parseInput(p.input);
  return db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.endpointKey);
    const [before] = await tx.select().from(providerCaps).where(eq(providerCaps.endpointId, endpoint.id));
    const recordedBy = p.actor.type === "staff" ? p.actor.email : p.actor.name;
    const values = { ...input, recordedBy, recordedAt: new Date() };
    const [after] = await tx
      .insert(providerCaps)
      .values({ endpointId: endpoint.id, ...values })
      .onConflictDoUpdate({ target: providerCaps.endpointId, set: values })
      .returning();
    if (!after) throw new Error("provider cap upsert returned nothing");
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint),
      action: "provider_cap.record",
      target: `provider_cap:${endpoint.key}`,
      previousValue: before?.amount ?? null,
      appliedValue: after.amount,
      details: { before: before ? capDetails(before, endpoint.currency) : null, after: capDetails(after, endpoint.currency) },
    });
    return after;
  });
}

/** Forgets the endpoint's second cap, audited `provider_cap.remove`; not_found when none is recorded. */
export async function removeProviderCap(db: Db, p: { endpointKey: string; actor: AuditActor }): Promise<void> {
  await db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.endpointKey);
    const [before] = await tx.delete(providerCaps).where(eq(providerCaps.endpointId, endpoint.id)).returning();
    if (!before) throw new CatalogError("not_found", `no second cap is recorded for '${endpoint.key}'`);
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint),
      action: "provider_cap.remove",
      target: `provider_cap:${endpoint.key}`,
      previousValue: before.amount,
      details: { before: capDetails(before, endpoint.currency), after: null },
    });
  });
}

export async function getProviderCap(db: Db, endpointId: number): Promise<ProviderCap | null> {
  const [row] = await db.select().from(providerCaps).where(eq(providerCaps.endpointId, endpointId));
  return row ?? null;
}

/** "100,000 emails a day", "$50.00 a month". */
export function describeCap(cap: Pick<ProviderCap, "measure" | "window" | "amount">, e: { unit: string; currency: string }): string {
  const amount = cap.measure === "money" ? formatMoney(cap.amount, e.currency) : `${formatCount(cap.amount)} ${unitLabel(e.unit, cap.amount)}`;
  return `${amount} a ${cap.window}`;
}

/** Where the provider's cap sits against Ceilings' worst case for the same window and measure. */
export function secondCapVerdict(cap: ProviderCap | null, worst: WorstCases, e: { unit: string; currency: string }): SecondCapVerdict {
  if (cap === null) return { state: "missing" };
  const capText = describeCap(cap, e);
  const w = worst[cap.window];
  if (w === null) return { state: "unbounded", capText };
  const worstAmount = cap.measure === "money" ? w.micros : w.units;
  const worstText = `${formatMoney(w.micros, e.currency)} a ${cap.window} (${formatCount(w.units)} ${unitLabel(e.unit, w.units)})`;
  return { state: cap.amount >= worstAmount ? "above" : "below", capText, worstText };
}

/**
 * The endpoint's second cap against the worst case of its ceilings as they stand when not killed:
 * a killed ceiling (value 0) is judged at the value its kill keeps (value_before_kill), so a kill
 * never turns "below the second cap" into a false "above".
 */
export function standingSecondCapVerdict(
  cap: ProviderCap | null,
  ceilings: readonly (Parameters<typeof worstCases>[0][number] & { valueBeforeKill: number | null })[],
  e: Parameters<typeof worstCases>[1] & { unit: string; currency: string },
): SecondCapVerdict {
  return secondCapVerdict(
    cap,
    worstCases(
      ceilings.map((c) => ({ ...c, value: c.valueBeforeKill ?? c.value })),
      e,
    ),
    e,
  );
}
