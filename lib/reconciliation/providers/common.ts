import type { EgressPolicy } from "@/lib/alerts/egress";
import { addDays, dayIn, startOfDay } from "../days";
import { decimalToMicros } from "../decimal";
import { ReconciliationError } from "../errors";
import type { HttpOptions } from "../provider-http";
import { type ApiSourceKind, credentialHostProblem, defaultLocationOf } from "../source-input";
import type { ProviderDay, ReportedRow, UsageField, UsageSource } from "../types";

// What the three API clients share: the days asked for as one interval, a provider's bucket read
// back into a provider day, money in the source's currency, and a guard on endless pagination.

/** What a client needs beyond the source: the resolved secret and how to reach the provider. */
export type ProviderContext = {
  /** The admin key (OpenAI, Anthropic) or auth token (Twilio), resolved from the source's credential_ref. */
  secret: string;
  egress: EgressPolicy;
  fetchImpl?: typeof fetch;
  retryCapMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** The pull's deadline: aborts the request in flight and any Retry-After wait. */
  signal?: AbortSignal;
  /** The pull's clock (the real time unless a test says): what SES's two weeks count back from, and what a signature is dated. */
  now?: Date;
};

export type ProviderClient = (source: UsageSource, days: ProviderDay[], ctx: ProviderContext) => Promise<ReportedRow[]>;

/** A provider is never asked for more pages than this in one pull: a cursor that loops is a bug there. */
export const MAX_PAGES = 500;

/** The source's base URL without a trailing slash, so a proxy's path prefix is kept. */
export function baseUrl(source: UsageSource, kind: ApiSourceKind): string {
  const base = source.location?.trim() || defaultLocationOf(kind, source.account);
  return base.replace(/\/+$/, "");
}

/**
 * Refuses, before any request, to send the key anywhere but the provider's own host or a host in
 * USAGE_SOURCE_ALLOW_HOSTS (the egress allow-list), or over plain http to a host not listed.
 */
export function guardCredentialHost(source: UsageSource, kind: ApiSourceKind, ctx: Pick<ProviderContext, "egress">): void {
  const problem = credentialHostProblem(kind, baseUrl(source, kind), ctx.egress.allowHosts, source.account);
  if (problem) throw new ReconciliationError("host_refused", `the source '${source.name}' was not pulled: ${problem}`);
}

/**
 * Refuses a source whose days are not the provider's: a provider that counts `zone` days compared
 * over another zone's would compare other intervals, a false drift every day.
 */
export function requireZone(source: UsageSource, zone: string, provider: string, what: string): void {
  if (source.timeZone !== zone)
    throw new ReconciliationError(
      "day_mismatch",
      `${provider}'s ${what} count ${zone === "UTC" ? "UTC" : zone} days, but the source '${source.name}' counts days in ${source.timeZone}: set its time zone to ${zone}`,
    );
}

/** [start, end) of the asked days, as instants in the source's zone; the days sorted. */
export function interval(days: readonly ProviderDay[], zone: string): { start: Date; end: Date; days: Set<ProviderDay> } {
  const sorted = [...days].sort();
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first === undefined || last === undefined) throw new ReconciliationError("provider_shape", "no days to pull");
  return { start: startOfDay(first, zone), end: startOfDay(addDays(last, 1), zone), days: new Set(sorted) };
}

/**
 * The provider day a daily bucket stands for: the day it starts on in the source's zone, which it
 * must start exactly at (the APIs' buckets start at 00:00 UTC, so their sources count UTC days).
 */
export function bucketDay(start: Date, zone: string, provider: string): ProviderDay {
  if (Number.isNaN(start.getTime())) throw new ReconciliationError("provider_shape", `${provider} sent a bucket without a readable start time`);
  const day = dayIn(start, zone);
  if (startOfDay(day, zone).getTime() !== start.getTime()) {
    throw new ReconciliationError(
      "day_mismatch",
      `${provider}'s daily buckets start at ${start.toISOString()}, which is not midnight in ${zone}: its days are UTC days, so set the source's time zone to UTC`,
    );
  }
  return day;
}

/** Provider money into micros of the source's currency; a row in another currency fails the pull. */
export function moneyOf(provider: string, value: string | number, currency: string | null | undefined, source: UsageSource, unitExponent = 0): number {
  if (currency && currency.toUpperCase() !== source.currency.toUpperCase()) {
    throw new ReconciliationError(
      "currency_mismatch",
      `${provider} reported money in ${currency.toUpperCase()}, but the source '${source.name}' counts ${source.currency}: fix the source's currency`,
    );
  }
  const parsed = decimalToMicros(value, { unitExponent, negative: true, exponents: typeof value === "number" });
  if (!parsed.ok) throw new ReconciliationError("provider_shape", `${provider} sent an amount that is not a decimal: ${parsed.error}`);
  return parsed.micros;
}

/** A count of units: a whole number 0 or more (as a number or a string of digits). */
export function unitsOf(provider: string, field: string, value: unknown): number {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new ReconciliationError("provider_shape", `${provider} sent ${field} that is not a whole number 0 or more: ${JSON.stringify(value)?.slice(0, 40)}`);
  }
  return n;
}

/** HTTP options of one provider for one pull. */
export function httpOptions(provider: string, headers: Record<string, string>, ctx: ProviderContext, secrets: string[]): HttpOptions {
  return {
    provider,
    headers,
    egress: ctx.egress,
    secrets,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.fetchImpl ? { fetchImpl: ctx.fetchImpl } : {}),
    ...(ctx.retryCapMs !== undefined ? { retryCapMs: ctx.retryCapMs } : {}),
    ...(ctx.sleep ? { sleep: ctx.sleep } : {}),
  };
}

/** A shape error naming the provider and the first problem zod found. */
export function shapeError(provider: string, what: string, issue: { path: PropertyKey[]; message: string } | undefined): ReconciliationError {
  const at = issue ? ` (${issue.path.map(String).join(".") || "the body"}: ${issue.message})` : "";
  return new ReconciliationError("provider_shape", `${provider} answered ${what} in a shape Ceilings does not read${at}`);
}

/**
 * One row per usage field of an item with units (zero fields left out, so a row is usage that was
 * billed), or a single row of zero units when every field is zero: the provider reported the item.
 */
export function fieldRows(base: Omit<ReportedRow, "units" | "field">, fields: readonly (readonly [UsageField, number])[]): ReportedRow[] {
  const used = fields.filter(([, units]) => units > 0);
  if (used.length === 0) return [{ ...base, units: 0, field: fields[0]?.[0] ?? "input" }];
  return used.map(([field, units]) => ({ ...base, units, field }));
}
